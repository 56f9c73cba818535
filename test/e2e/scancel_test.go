package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// queued lists the ids squeue shows (pending and running, one per line).
func (c *Cluster) queued(args ...string) string {
	c.t.Helper()
	return strings.Join(sortedLines(c.MustRun("", "squeue", append([]string{"-h", "-o", "%i"}, args...)...)), " ")
}

func joinSorted(ids ...string) string {
	return strings.Join(sortedLines(strings.Join(ids, "\n")), " ")
}

// TestScancelSelections cancels by id and by the filters -n, -p, -t, -u
// and --me, each leaving the other jobs alone.
func TestScancelSelections(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, Extra: "PartitionName=debug Nodes=n1 MaxTime=30:00 DefaultTime=10:00 State=UP\n"})
	run1 := c.Submit("", "-J", "runner", "--wrap", "sleep 60")
	run2 := c.Submit("", "-J", "runner2", "--wrap", "sleep 60")
	v1 := c.Submit("", "-H", "-J", "victim", "--wrap", "true")
	v2 := c.Submit("", "-H", "-J", "victim", "--wrap", "true")
	keep := c.Submit("", "-H", "-J", "keeper", "--wrap", "true")
	dbg := c.Submit("", "-H", "-p", "debug", "-J", "keeper", "--wrap", "true")
	c.WaitState(run1, "RUNNING", 20*time.Second)
	c.WaitState(run2, "RUNNING", 20*time.Second)

	steps := []struct {
		args      []string
		cancelled []string
		left      []string
	}{
		{[]string{run1}, []string{run1}, []string{run2, v1, v2, keep, dbg}},
		{[]string{"-n", "victim"}, []string{v1, v2}, []string{run2, keep, dbg}},
		{[]string{"-p", "debug"}, []string{dbg}, []string{run2, keep}},
		{[]string{"-u", "root", "-t", "PENDING"}, []string{keep}, []string{run2}},
		{[]string{"--me", "-t", "R"}, []string{run2}, nil},
	}
	for _, s := range steps {
		r := c.Run("", "scancel", s.args...)
		if r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
			t.Fatalf("scancel %v: %+v", s.args, r)
		}
		for _, id := range s.cancelled {
			c.WaitState(id, "CANCELLED", 20*time.Second)
		}
		if got, want := c.queued(), joinSorted(s.left...); got != want {
			t.Errorf("after scancel %v: queue %q, want %q", s.args, got, want)
		}
	}
	// Unknown and finished ids: nothing printed, exit 0, as Slurm does.
	for _, id := range []string{"999999", run1} {
		if r := c.Run("", "scancel", id); r.Code != 0 || r.Stdout != "" || r.Stderr != "" {
			t.Errorf("scancel %s: %+v", id, r)
		}
	}
	if r := c.Run("", "scancel", "abc"); r.Code != 1 || r.Stderr != "scancel: error: Invalid job id abc\n" {
		t.Errorf("scancel abc: %+v", r)
	}
	for _, args := range [][]string{{"--version"}, {"-V"}} {
		if r := c.Run("", "scancel", args...); r.Code != 0 || r.Stdout != "slurm 25.11.0\n" {
			t.Errorf("scancel %v: %+v", args, r)
		}
	}
}

// TestScancelArrayTasks cancels one task (N_2), a range (N_[3-4]) and then
// the whole array.
func TestScancelArrayTasks(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	id := c.Submit("", "-H", "--array=1-5", "--wrap", "true")
	task := func(n int) string { return fmt.Sprintf("%s_%d", id, n) }
	if got, want := c.queued("-r"), joinSorted(task(1), task(2), task(3), task(4), task(5)); got != want {
		t.Fatalf("squeue -r: %q, want %q", got, want)
	}
	c.MustRun("", "scancel", task(2))
	if got, want := c.queued("-r"), joinSorted(task(1), task(3), task(4), task(5)); got != want {
		t.Errorf("after scancel %s: %q, want %q", task(2), got, want)
	}
	if got, want := c.queued(), fmt.Sprintf("%s_[1,3-5]", id); got != want {
		t.Errorf("folded after scancel %s: %q, want %q", task(2), got, want)
	}
	c.MustRun("", "scancel", id+"_[3-4]")
	if got, want := c.queued("-r"), joinSorted(task(1), task(5)); got != want {
		t.Errorf("after scancel %s_[3-4]: %q, want %q", id, got, want)
	}
	t.Run("cancelled tasks stay visible", func(t *testing.T) {
		// slurmctld splits a cancelled pending task off the array into
		// its own CANCELLED record, which squeue -t all lists.
		got := c.queued("-r", "-t", "CA")
		if got != joinSorted(task(2), task(3), task(4)) {
			t.Errorf("cancelled pending tasks keep CANCELLED records: squeue -r -t CA shows %q", got)
		}
	})
	c.MustRun("", "scancel", id)
	c.WaitState(id, "CANCELLED", 120*time.Second)
	if got := c.queued("-r"); got != "" {
		t.Errorf("after scancel %s: %q still queued", id, got)
	}
}

// TestScancelSignals sends USR1 to a job that traps it: --full and --batch
// reach the script, a plain --signal does not (it goes to steps other than
// the batch one); none ends the job. Then --batch without a signal kills
// the script.
func TestScancelSignals(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	id := c.Submit("", "-o", "sig.out", "--wrap", "trap 'echo got USR1' USR1; echo ready; while :; do sleep 0.1; done")
	c.WaitOutput("sig.out", "ready\n", 20*time.Second)

	waitLines := func(what string, n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for strings.Count(c.ReadFile("sig.out"), "got USR1") < n {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the trap did not run; output %q", what, c.ReadFile("sig.out"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	c.MustRun("", "scancel", "--signal=USR1", "--full", id)
	waitLines("scancel --signal=USR1 --full", 1)
	c.MustRun("", "scancel", "-b", "-s", "USR1", id)
	waitLines("scancel -b -s USR1", 2)
	if s := c.State(id); s != "RUNNING" {
		t.Fatalf("job %s after USR1: %s, want RUNNING", id, s)
	}
	t.Run("signal without --batch or --full", func(t *testing.T) {
		// Since 21.08 a plain --signal goes to the job's steps only, not to
		// the batch script; a job without srun steps sees nothing.
		c.MustRun("", "scancel", "--signal=USR1", id)
		time.Sleep(time.Second)
		if n := strings.Count(c.ReadFile("sig.out"), "got USR1"); n != 2 {
			t.Errorf("the trap ran %d times, want 2", n)
		}
	})
	// --batch without a signal sends SIGKILL to the batch step only: the
	// job is not cancelled, its script dies of the signal, and slurmctld
	// records that as FAILED (RaisedSignal).
	c.MustRun("", "scancel", "--batch", id)
	j := c.WaitState(id, "FAILED", 20*time.Second)
	if j.StateReason.Value != "RaisedSignal" {
		t.Errorf("reason %q, want RaisedSignal", j.StateReason.Value)
	}
}

// TestScancelSignalTargets: which processes a signal reaches, as 25.11's
// slurmd delivers it: plain -s the job's steps (not the batch shell nor
// its children), -b the batch shell alone (not its children), -f the
// shell and its children (srun among them passes it on to its step).
// (A job that has not started cannot be signalled; scancel retries that
// for 95 s as Slurm's does, so the controller's test checks it.)
func TestScancelSignalTargets(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 4})
	script := `#!/bin/bash
trap 'echo shell got USR1' USR1
bash -c 'trap "echo child got USR1" USR1; echo child ready; while :; do sleep 0.1; done' &
srun -n1 bash -c 'trap "echo step got USR1" USR1; echo step ready; while :; do sleep 0.1; done' &
while :; do sleep 0.1; done
`
	id := c.Submit(script, "-n1", "-c2", "-o", "targets.out")
	c.WaitState(id, "RUNNING", 20*time.Second)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(c.WorkDir, "targets.out")); err == nil || time.Now().After(deadline) {
			break
		}
	}
	count := func(who string) int { return strings.Count(c.ReadFile("targets.out"), who+" got USR1") }
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); !ok(); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s; output:\n%s", what, c.ReadFile("targets.out"))
			}
		}
	}
	waitFor("child and step ready", func() bool {
		out := c.ReadFile("targets.out")
		return strings.Contains(out, "child ready") && strings.Contains(out, "step ready")
	})
	want := func(what string, shell, child, step int) {
		t.Helper()
		waitFor(what, func() bool { return count("shell") >= shell && count("child") >= child && count("step") >= step })
		time.Sleep(time.Second) // nothing more arrives
		if count("shell") != shell || count("child") != child || count("step") != step {
			t.Errorf("after %s: shell %d, child %d, step %d; want %d, %d, %d", what,
				count("shell"), count("child"), count("step"), shell, child, step)
		}
	}
	c.MustRun("", "scancel", "-s", "USR1", id)
	want("scancel -s USR1", 0, 0, 1)
	c.MustRun("", "scancel", "-b", "-s", "USR1", id)
	want("scancel -b -s USR1", 1, 0, 1)
	c.MustRun("", "scancel", "-f", "-s", "USR1", id)
	want("scancel -f -s USR1", 2, 1, 2)
	c.MustRun("", "scancel", id)
	c.WaitState(id, "CANCELLED", 30*time.Second)
}
