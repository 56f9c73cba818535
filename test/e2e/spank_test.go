package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNCCLPluginRendezvous: with the NCCL plugin in plugstack.conf, the
// tasks of `srun -N4 -n8` get the variables torch.distributed reads, and
// a program that uses only them meets at MASTER_ADDR:MASTER_PORT and
// all-reduces its ranks: every rank gets 0+1+...+7. What the user set is
// kept, and the plugin's option reaches it through the environment.
func TestNCCLPluginRendezvous(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 4, CPUs: 4, PlugStack: "required drover-spank-nccl port_range=41000-41999 socket_ifname=none\n"})
	allreduce := filepath.Join(binDir, "allreduce")
	r := c.Run("", "srun", "-N4", "-n8", "-l", allreduce)
	got := lines(r.Stdout)
	slices.Sort(got)
	// Four CPUs a node lay the eight tasks out 4,2,1,1.
	var want []string
	for rank, local := range []int{0, 1, 2, 3, 0, 1, 0, 0} {
		want = append(want, fmt.Sprintf("%d: rank %d of 8 (local %d): sum 28", rank, rank, local))
	}
	if r.Code != 0 || !slices.Equal(got, want) {
		t.Fatalf("allreduce: exit %d\ngot  %q\nwant %q\nstderr:\n%s", r.Code, got, want, r.Stderr)
	}
	show := `echo $RANK $WORLD_SIZE $LOCAL_RANK $LOCAL_WORLD_SIZE $NODE_RANK $MASTER_ADDR $NCCL_DEBUG $MASTER_PORT`
	r = c.RunEnv([]string{"_SLURM_SPANK_OPTION_drover_spank_nccl_nccl_debug=INFO", "MASTER_PORT=5555"}, "", "srun", "-N2", "-n2", "-l", "sh", "-c", show)
	got = lines(r.Stdout)
	slices.Sort(got)
	if w := []string{"0: 0 2 0 1 0 127.0.0.1 INFO 5555", "1: 1 2 0 1 1 127.0.0.1 INFO 5555"}; r.Code != 0 || !slices.Equal(got, w) {
		t.Errorf("task variables %q, want %q; stderr %q", got, w, r.Stderr)
	}
}

// TestRequiredPluginMissing: a required plugin that is not there stops
// srun before it asks for anything, with the launch hooks' error; one
// that fails its stage on the nodes fails the step's tasks with its
// message, and the node lives on.
func TestRequiredPluginMissing(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, PlugStack: "required /nonexistent/spank-plugin\n"})
	r := c.Run("", "srun", "-n1", "true")
	if r.Code != 1 || !strings.HasPrefix(r.Stderr, "srun: error: spank: ") || !strings.Contains(r.Stderr, "Failed to load plugin /nonexistent/spank-plugin. Aborting.") {
		t.Errorf("srun with a missing required plugin: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if out := c.MustRun("", "squeue", "-h", "-t", "all"); out != "" {
		t.Errorf("srun asked for an allocation anyway:\n%s", out)
	}

	c2 := NewCluster(t, ClusterOptions{Nodes: 1, PlugStack: "required spank-hello\n"})
	r = c2.Run("", "srun", "-n2", "--hello=", "true")
	if r.Code != 1 || !strings.Contains(r.Stderr, "slurmstepd: error: spank: required plugin spank-hello: task_init() failed: --hello needs a name") {
		t.Errorf("a failing stage: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if out := c2.MustRun("", "sinfo", "-h", "-o", "%t"); strings.TrimSpace(out) != "idle" {
		t.Errorf("node after the failed step: %q", out)
	}
}

// TestBatchStepHooks: a batch script goes through the launch hooks as a
// step of one task: the example plugin greets it, its option given as
// Slurm passes it (in the job's environment). The NCCL plugin leaves the
// script alone (it is no rank), so its srun steps get their own ranks.
func TestBatchStepHooks(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, PlugStack: "required spank-hello greeting=Hi\nrequired drover-spank-nccl socket_ifname=none\n"})
	r := c.RunEnv([]string{"_SLURM_SPANK_OPTION_spank_hello_hello=Ada"}, "", "sbatch", "--parsable", "-N2", "-n2", "-o", "hooks.out", "--wrap",
		`echo "script: $HELLO rank=${RANK-unset}"; srun -l sh -c 'echo "$RANK/$WORLD_SIZE"'`)
	if r.Code != 0 {
		t.Fatalf("sbatch: exit %d, stderr %q", r.Code, r.Stderr)
	}
	c.WaitState(strings.TrimSpace(r.Stdout), "COMPLETED", 20*time.Second)
	got := lines(c.ReadFile("hooks.out"))
	slices.Sort(got[1:])
	want := []string{"script: Hi Ada from task 0 rank=unset", "0: 0/2", "1: 1/2"}
	if !slices.Equal(got, want) {
		t.Errorf("job output %q, want %q", got, want)
	}
}

// TestPluginOptionsInCommands: a plugin's option is in srun's and
// sbatch's --help, accepted on the command line and in #SBATCH lines, and
// reaches the plugin's stage on the nodes.
func TestPluginOptionsInCommands(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, PlugStack: "required spank-hello greeting=Hi\n"})
	for _, prog := range []string{"srun", "sbatch", "salloc"} {
		help := c.MustRun("", prog, "--help")
		if !strings.HasSuffix(help, "\nOptions provided by plugins:\n      --hello=name            greet name from every task\n") {
			t.Errorf("%s --help ends with %q", prog, help[max(0, len(help)-200):])
		}
	}
	r := c.Run("", "srun", "-N2", "-n2", "-l", "--hello=Ada", "printenv", "HELLO")
	got := lines(r.Stdout)
	slices.Sort(got)
	if w := []string{"0: Hi Ada from task 0", "1: Hi Ada from task 1"}; r.Code != 0 || !slices.Equal(got, w) {
		t.Errorf("srun --hello=Ada: exit %d, %q, want %q; stderr %q", r.Code, got, w, r.Stderr)
	}
	_, out := c.RunJob("hello", "-n1", "--wrap", "echo ${HELLO-unset}")
	if out != "unset\n" {
		t.Errorf("without --hello the job printed %q", out)
	}
	script := "#!/bin/sh\n#SBATCH --hello=Grace\nprintenv HELLO\n"
	id := c.Submit(script, "-o", "grace.out")
	c.WaitState(id, "COMPLETED", 20*time.Second)
	if out := c.ReadFile("grace.out"); out != "Hi Grace from task 0\n" {
		t.Errorf("#SBATCH --hello=Grace: %q", out)
	}
	if r := c.Run("", "srun", "--hello"); r.Code == 0 || !strings.Contains(r.Stderr, "requires an argument") {
		t.Errorf("srun --hello without its argument: exit %d, stderr %q", r.Code, r.Stderr)
	}
}

// TestLocalStages: the commands run the stages of their own context
// (srun local, sbatch and salloc allocator): what init_post_opt sets
// reaches the tasks, local_user_init sees the step srun created, and exit
// runs when the command ends.
func TestLocalStages(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, PlugStack: "required spanklocal exitfile=exits.txt\n"})
	r := c.Run("", "srun", "-n1", "sh", "-c", "echo $SPANK_LOCAL_SEEN $SPANK_LOCAL_STEP")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "local:init_post_opt ") || !strings.HasSuffix(r.Stdout, ".0\n") {
		t.Errorf("srun: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	jobID := strings.TrimSuffix(strings.Fields(r.Stdout + " x")[1], ".0")
	_, out := c.RunJob("alloc", "-n1", "--wrap", "echo $SPANK_LOCAL_SEEN")
	if out != "allocator:init_post_opt\n" {
		t.Errorf("sbatch: the job saw %q", out)
	}
	if r := c.Run("", "salloc", "-n1", "sh", "-c", "echo $SPANK_LOCAL_SEEN"); r.Code != 0 || !strings.Contains(r.Stdout, "allocator:init_post_opt") {
		t.Errorf("salloc: exit %d, stdout %q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	exits := lines(c.ReadFile("exits.txt"))
	if len(exits) != 3 || exits[0] != "local "+jobID || !strings.HasPrefix(exits[1], "allocator ") || !strings.HasPrefix(exits[2], "allocator ") {
		t.Errorf("exit stages: %q", exits)
	}
}
