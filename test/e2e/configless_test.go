package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConfigless runs a node daemon that has only --conf-server and the
// cluster key (SlurmctldParameters=enable_configless): it fetches the
// controller's files into SlurmdSpoolDir/conf-cache, registers and runs
// a job that reads its slurm.conf from there. Then the controller's
// slurm.conf and gres.conf are edited and scontrol reconfigure reaches
// the node: its cache holds the new files and the node's new feature
// shows.
func TestConfigless(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, Extra: "SlurmctldParameters=enable_configless\n", GresConf: "# gres v1\n"})
	// n2 starts again, configless.
	c.KillNode("n2")
	cache := filepath.Join(c.Dir, "spool", "n2", "conf-cache")
	must(t, os.RemoveAll(cache))
	key := filepath.Join(c.Dir, "etc", "slurm.key")
	c.mu.Lock()
	c.nodes["n2"] = c.daemon("n2", "node", "--conf-server", "127.0.0.1:"+strconv.Itoa(c.CtlPort), "--name", "n2",
		"--key-file", key, "--run-conf=")
	c.mu.Unlock()

	script := "#!/bin/sh\necho \"$SLURM_CONF\"\ngrep -c '^NodeName=' \"$SLURM_CONF\"\n"
	out := filepath.Join(c.WorkDir, "configless.out")
	// The job waits for n2 to register again (it is the only node named).
	id := c.Submit(script, "-w", "n2", "-o", out)
	c.WaitState(id, "COMPLETED", 60*time.Second)
	want := filepath.Join(cache, "slurm.conf") + "\n2\n"
	if got := c.ReadFile(out); got != want {
		t.Errorf("the job on the configless node printed %q, want %q", got, want)
	}
	for name, mode := range map[string]os.FileMode{"slurm.conf": 0o644, "gres.conf": 0o644} {
		fi, err := os.Stat(filepath.Join(cache, name))
		if err != nil || fi.Mode().Perm() != mode {
			t.Errorf("%s in the node's cache: %v %v, want mode %v", name, fi, err, mode)
		}
	}
	if entries, _ := os.ReadDir(cache); len(entries) != 2 {
		t.Errorf("the node's cache holds %d files, want slurm.conf and gres.conf only (never the key)", len(entries))
	}

	// The controller's files change; scontrol reconfigure reaches n2.
	conf, err := os.ReadFile(c.Conf)
	must(t, err)
	edited := strings.Replace(string(conf), fmt.Sprintf("NodeName=n2 NodeAddr=127.0.0.1 Port=%d CPUs=2 RealMemory=2000", c.ports[2]),
		fmt.Sprintf("NodeName=n2 NodeAddr=127.0.0.1 Port=%d CPUs=2 RealMemory=2000 Features=cfgless", c.ports[2]), 1)
	if edited == string(conf) {
		t.Fatalf("n2's line not found in slurm.conf:\n%s", conf)
	}
	must(t, os.WriteFile(c.Conf, []byte(edited), 0o644))
	must(t, os.WriteFile(filepath.Join(c.Dir, "etc", "gres.conf"), []byte("# gres v2\n"), 0o644))
	if r := c.Run("", "scontrol", "reconfigure"); r.Code != 0 {
		t.Fatalf("scontrol reconfigure: %+v", r)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		sc, _ := os.ReadFile(filepath.Join(cache, "slurm.conf"))
		gres, _ := os.ReadFile(filepath.Join(cache, "gres.conf"))
		if strings.Contains(string(sc), "Features=cfgless") && string(gres) == "# gres v2\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the node's cache did not follow the reconfigure: slurm.conf\n%s\ngres.conf %q", sc, gres)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out := c.MustRun("", "sinfo", "-h", "-n", "n2", "-o", "%N %f %t"); !strings.HasPrefix(strings.TrimSpace(out), "n2 cfgless ") {
		t.Errorf("sinfo after the reconfigure: %q", out)
	}
	// The node runs from the new files: a job asking for the feature
	// runs there.
	id = c.Submit("#!/bin/sh\ntrue\n", "-C", "cfgless")
	c.WaitState(id, "COMPLETED", 30*time.Second)
	if log := c.nodeLog("n2"); !strings.Contains(log, "configuration fetched from the controller") || !strings.Contains(log, "reconfigured") {
		t.Errorf("n2's log does not show the fetches and the reconfigure:\n%s", log)
	}
}

// nodeLog is a daemon's log so far.
func (c *Cluster) nodeLog(name string) string {
	data, _ := os.ReadFile(filepath.Join(c.Dir, name+".log"))
	return string(data)
}
