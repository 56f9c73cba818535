package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
)

// TestKeygenAndRotation: drover keygen makes the keys an admin needs and
// never overwrites one; daemons refuse an unusable key with the fix in
// the message; and the cluster key is rotated in three steps under a
// running cluster, each followed by scontrol reconfigure, with jobs and
// steps working throughout.
func TestKeygenAndRotation(t *testing.T) {
	t.Parallel()
	// keygen on a fresh configuration.
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	must(t, os.WriteFile(conf, []byte("ClusterName=k\nSlurmctldHost=localhost\nStateSaveLocation="+dir+"/state\nAuthAltTypes=auth/jwt\n"+
		"NodeName=n1 CPUs=1\nPartitionName=p Nodes=n1\n"), 0o644))
	keygen := func(args ...string) (string, error) {
		cmd := exec.Command(droverBin, append([]string{"keygen", "--conf", conf}, args...)...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := keygen()
	if err != nil || !strings.Contains(out, "wrote cluster key "+filepath.Join(dir, "slurm.key")) || !strings.Contains(out, "wrote auth/jwt key "+filepath.Join(dir, "state", "jwt_hs256.key")) {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	for _, f := range []string{filepath.Join(dir, "slurm.key"), filepath.Join(dir, "state", "jwt_hs256.key")} {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 || st.Size() < 32 {
			t.Errorf("%s: %v %v", f, st, err)
		}
	}
	before, _ := os.ReadFile(filepath.Join(dir, "slurm.key"))
	if out, err := keygen(); err != nil || !strings.Contains(out, "exists, kept") {
		t.Errorf("keygen again: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "slurm.key")); string(after) != string(before) {
		t.Error("keygen overwrote the key")
	}
	// A daemon refuses an unusable key and says how to fix it.
	must(t, os.Chmod(filepath.Join(dir, "slurm.key"), 0o644))
	ctl := exec.Command(droverBin, "controller", "--conf", conf)
	out2, err := ctl.CombinedOutput()
	if err == nil || !strings.Contains(string(out2), "key file is insecure") || !strings.Contains(string(out2), "chmod 600") {
		t.Errorf("controller with a world-readable key: %v\n%s", err, out2)
	}
	must(t, os.Remove(filepath.Join(dir, "slurm.key")))
	node := exec.Command(droverBin, "node", "--conf", conf, "--name", "n1")
	out2, err = node.CombinedOutput()
	if err == nil || !strings.Contains(string(out2), "drover keygen") {
		t.Errorf("node without a key: %v\n%s", err, out2)
	}

	// Rotation under a running cluster.
	c := NewCluster(t, ClusterOptions{Nodes: 2})
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(droverBin, append([]string{"keygen", "--conf", c.Conf}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("keygen %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	works := func(step string) {
		t.Helper()
		// Each step leaves every key in use accepted by every daemon,
		// whether or not the reconfigure reached it yet.
		c.MustRun("", "scontrol", "reconfigure")
		c.WaitNodesUp()
		if out := c.MustRun("", "srun", "-N2", "-l", "hostname"); strings.Count(out, "\n") != 2 {
			t.Fatalf("%s: srun: %q", step, out)
		}
		id := c.Submit("", "--wrap", "true")
		c.WaitState(id, "COMPLETED", 20*time.Second)
	}
	oldID := clusterkey.KeyID(mustRead(t, clusterkey.KeyPath(c.Conf)))
	added := run("--add")
	newID := regexp.MustCompile(`added key ([^\s:]+):`).FindStringSubmatch(added)
	if newID == nil {
		t.Fatalf("keygen --add: %s", added)
	}
	works("new key added")
	run("--use", newID[1])
	works("new key signs")
	if out := run("--list"); !strings.Contains(out, newID[1]+" ") || !strings.Contains(out, "signs") {
		t.Errorf("keygen --list: %s", out)
	}
	run("--retire", oldID)
	works("old key retired")
	ring, err := clusterkey.Load(c.Conf, "")
	if err != nil || len(ring.Keys) != 1 || ring.Signing().ID != newID[1] {
		t.Errorf("after the rotation: %+v %v", ring, err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	return data
}
