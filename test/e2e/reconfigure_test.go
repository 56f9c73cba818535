package e2e

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReconfigure edits slurm.conf under a running cluster: scontrol
// reconfigure brings in a new node and partition while a job keeps
// running and a held one keeps waiting; a broken file, a change that
// would lose a job and a user's request are refused, and the controller
// carries on with what it had.
func TestReconfigure(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, PlugStack: "required spank-hello greeting=Hi\n"})
	hello := func() string {
		return strings.TrimSpace(c.MustRun("", "srun", "-w", "n2", "-n1", "--hello=Ada", "printenv", "HELLO"))
	}
	if got := hello(); got != "Hi Ada from task 0" {
		t.Fatalf("before reconfigure: %q", got)
	}
	running := c.Submit("#!/bin/sh\nsleep 300\n", "-w", "n1", "-c", "2")
	c.WaitState(running, "RUNNING", 20*time.Second)
	held := c.Submit("#!/bin/sh\ntrue\n", "-H", "-p", "short")
	// The record but for its run time, which moves on.
	show := func() string {
		out := c.MustRun("", "scontrol", "show", "job", running)
		return regexp.MustCompile(`RunTime=\S+`).ReplaceAllString(out, "")
	}
	before := show()

	original, err := os.ReadFile(c.Conf)
	must(t, err)
	port := freePorts(t, 1)[0]
	grown := string(original) + fmt.Sprintf("NodeName=n3 NodeAddr=127.0.0.1 Port=%d CPUs=2 RealMemory=2000\nPartitionName=extra Nodes=n3 MaxTime=60 State=UP\n", port)
	must(t, os.WriteFile(c.Conf, []byte(grown), 0o644))
	must(t, os.WriteFile(filepath.Join(c.Dir, "etc", "plugstack.conf"), []byte("required spank-hello greeting=Hey\n"), 0o644))
	if r := c.Run("", "scontrol", "reconfigure"); r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
		t.Fatalf("scontrol reconfigure: %+v", r)
	}
	// The node daemons read their files again too (the controller tells
	// them once it runs the new configuration): plugstack.conf's new
	// argument reaches the plugin on the node.
	deadline := time.Now().Add(10 * time.Second)
	for got := hello(); got != "Hey Ada from task 0"; got = hello() {
		if time.Now().After(deadline) {
			t.Fatalf("after reconfigure the node's plugin says %q", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// SIGHUP makes one node daemon read its files again, as slurmd's
	// does (systemd's ExecReload).
	must(t, os.WriteFile(filepath.Join(c.Dir, "etc", "plugstack.conf"), []byte("required spank-hello greeting=Hallo\n"), 0o644))
	c.SignalNode("n2", syscall.SIGHUP)
	deadline = time.Now().Add(10 * time.Second)
	for got := hello(); got != "Hallo Ada from task 0"; got = hello() {
		if time.Now().After(deadline) {
			t.Fatalf("after SIGHUP the node's plugin says %q", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The nodes that were there keep their registration: no DOWN spell.
	if out := c.MustRun("", "sinfo", "-h", "-n", "n1,n2", "-o", "%N %t"); strings.Contains(out, "down") || strings.Contains(out, "unk") {
		t.Errorf("after reconfigure, nodes n1,n2:\n%s", out)
	}
	if out := c.MustRun("", "sinfo", "-h", "-p", "extra", "-o", "%P %N %l"); strings.TrimSpace(out) != "extra n3 1:00:00" {
		t.Errorf("sinfo -p extra: %q", out)
	}
	if after := show(); after != before {
		t.Errorf("the running job changed across the reconfigure:\n%s\nnow\n%s", before, after)
	}
	if st := c.State(held); st != "PENDING" {
		t.Errorf("held job %s: %s", held, st)
	}
	c.StartNode("n3")
	c.opts.Nodes = 3
	c.WaitNodesUp()
	out := c.MustRun("", "srun", "-p", "extra", "-N1", "hostname")
	if strings.TrimSpace(out) == "" {
		t.Errorf("srun on the new partition printed nothing")
	}

	// A setting the controller cannot take is refused; nothing changes.
	must(t, os.WriteFile(c.Conf, []byte(grown+"PreemptType=preempt/nosuch\n"), 0o644))
	r := c.Run("", "scontrol", "reconfigure")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, "slurm_reconfigure error: Unspecified error\n") || !strings.Contains(r.Stderr, "preempt/nosuch") {
		t.Errorf("broken slurm.conf: %+v", r)
	}
	// Taking away the partition a held job waits in would lose it.
	shrunk := strings.Replace(grown, "PartitionName=short Nodes=n1 MaxTime=30 DefaultTime=5 State=UP\n", "", 1)
	must(t, os.WriteFile(c.Conf, []byte(shrunk), 0o644))
	r = c.Run("", "scontrol", "reconfigure")
	if r.Code != 1 || !strings.Contains(r.Stderr, "partition short is gone but jobs "+held+" are in it") {
		t.Errorf("reconfigure that drops a partition with a job: %+v", r)
	}
	if st := c.State(running); st != "RUNNING" {
		t.Errorf("running job after refused reconfigures: %s", st)
	}
	if out := c.MustRun("", "sinfo", "-h", "-o", "%P", "-p", "short"); strings.TrimSpace(out) != "short" {
		t.Errorf("partition short after the refusal: %q", out)
	}

	// Only root, SlurmUser and administrators may reconfigure.
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no user nobody: %v", err)
	}
	must(t, os.Chmod(binDir, 0o755))
	if r := c.runAs(nobody, "scontrol", "reconfigure"); r.Code != 1 || r.Stderr != "slurm_reconfigure error: Invalid user id\n" {
		t.Errorf("reconfigure as nobody: %+v", r)
	}
	c.MustRun("", "scancel", running)
}
