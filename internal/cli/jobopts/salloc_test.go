package jobopts

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/droverhq/drover/internal/timefmt"
)

func TestSallocOptions(t *testing.T) {
	tests := map[string]struct {
		in   run
		want Options
	}{
		"nothing":      {want: Options{JobName: Some("interactive")}},
		"no shell":     {in: run{args: []string{"--no-shell"}}, want: Options{NoShell: true, JobName: Some("no-shell")}},
		"named":        {in: run{args: []string{"-J", "x", "--no-shell"}}, want: Options{NoShell: true, JobName: Some("x")}},
		"bell":         {in: run{args: []string{"--bell"}}, want: Options{Bell: Some(true), JobName: Some("interactive")}},
		"no bell":      {in: run{args: []string{"--bell", "--no-bell"}}, want: Options{Bell: Some(false), JobName: Some("interactive")}},
		"kill command": {in: run{args: []string{"-K"}}, want: Options{KillCommand: Some(15), JobName: Some("interactive")}},
		"kill command signal": {
			in:   run{args: []string{"--kill-command=SIGUSR1"}},
			want: Options{KillCommand: Some(10), JobName: Some("interactive")},
		},
		"kill command number": {in: run{args: []string{"-K9"}}, want: Options{KillCommand: Some(9), JobName: Some("interactive")}},
		"immediate":           {in: run{args: []string{"-I30"}}, want: Options{Immediate: Some(30), JobName: Some("interactive")}},
		"-W abbreviates nothing, --wait abbreviates wait-all-nodes": {
			in:   run{args: []string{"--wait=1"}},
			want: Options{WaitAllNodes: Some(1), JobName: Some("interactive")},
		},
		"environment": {
			in: run{env: map[string]string{"SALLOC_PARTITION": "p", "SALLOC_TIMELIMIT": "5", "SALLOC_NO_BELL": "1",
				"SALLOC_KILL_CMD": "", "SALLOC_IMMEDIATE": "", "SALLOC_DEBUG": "2", "SLURM_NTASKS": "8", "SLURM_JOB_NUM_NODES": "4"}},
			want: Options{Partition: "p", TimeLimit: Some(timefmt.Limit{Minutes: 5}), Bell: Some(false), KillCommand: Some(15),
				Immediate: Some(1), Verbose: 2, JobName: Some("interactive")},
		},
		"hint passed on": {
			in: run{env: map[string]string{"SLURM_HINT": "nomultithread"}},
			want: Options{Hint: "nomultithread", ThreadsPerCore: Some(1), JobName: Some("interactive"),
				EnvVars: []EnvVar{{"SLURM_HINT", "nomultithread"}}},
		},
		"counts with sockets": {
			in:   run{args: []string{"-N2", "--sockets-per-node=2"}},
			want: Options{Nodes: Some(NodeCount{Min: 2, Max: 2}), SocketsPerNode: Some(2), Ntasks: Some(4), JobName: Some("interactive")},
		},
		"few tasks shrink nodes": {
			in: run{args: []string{"-N4", "-n2"}},
			want: Options{Nodes: Some(NodeCount{Min: 2, Max: 2}), Ntasks: Some(2), JobName: Some("interactive"),
				Warnings: []string{"can't run 2 processes on 4 nodes, setting nnodes to 2"}},
		},
		"node list": {
			in:   run{args: []string{"-w", "n[1-3]"}},
			want: Options{NodeList: "n[1-3]", Nodes: Some(NodeCount{Min: 3}), JobName: Some("interactive")},
		},
		"variables for the command": {
			in: run{env: map[string]string{"SLURM_NTASKS_PER_SOCKET": "9"},
				args: []string{"--ntasks-per-node=2", "--ntasks-per-socket=1", "--mem-bind=v,local", "--profile=task,energy",
					"--cpu-freq=low", "--oom-kill-step", "--container=/c"}},
			want: Options{NtasksPerNode: Some(2), NtasksPerSocket: Some(1), MemBind: "v,local",
				Profile: []string{"ENERGY", "TASK"}, CPUFreq: "low", OOMKillStep: Some(1), Container: "/c",
				JobName: Some("interactive"),
				EnvVars: []EnvVar{
					{"SLURM_CONTAINER", "/c"},
					{"SLURM_OOM_KILL_STEP", "1"},
					{"SLURM_MEM_BIND", "local"},
					{"SLURM_MEM_BIND_VERBOSE", "verbose"},
					{"SLURM_NTASKS_PER_NODE", "2"},
					{"SLURM_PROFILE", "Energy,Task"},
					{"SLURM_CPU_FREQ_REQ", "low"},
				}},
		},
	}
	ignore := cmpopts.IgnoreFields(Options{}, "Sources", "impliedTasks")
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, _, e := tc.in.salloc()
			if e != nil {
				t.Fatalf("exit: %+v", e)
			}
			if diff := cmp.Diff(tc.want, *got, ignore, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSallocErrors(t *testing.T) {
	tests := map[string]struct {
		in   run
		want Exit
	}{
		"srun only option": {
			in:   run{args: []string{"--label", "bash"}},
			want: Exit{Code: 255, Stderr: "salloc: unrecognized option '--label'\nTry \"salloc --help\" for more information\n"},
		},
		"-W is not salloc's": {
			in:   run{args: []string{"-W", "5"}},
			want: Exit{Code: 255, Stderr: "salloc: invalid option -- 'W'\nTry \"salloc --help\" for more information\n"},
		},
		"wait abbreviates wait-all-nodes": {
			in:   run{args: []string{"--wait=5"}},
			want: Exit{Code: 255, Stderr: "salloc: error: Invalid --wait-all-nodes specification\n"},
		},
		"bad kill command": {
			in:   run{args: []string{"--kill-command=NOPE"}},
			want: Exit{Code: 255, Stderr: "salloc: error: Invalid --kill-command specification\n"},
		},
		"bad environment": {
			in:   run{env: map[string]string{"SALLOC_TIMELIMIT": "x"}},
			want: Exit{Code: 255, Stderr: "salloc: error: Invalid --time specification\n"},
		},
		"plane needs processes": {
			in:   run{args: []string{"-N4", "-n2", "-m", "plane=4"}},
			want: Exit{Code: 1, Stderr: "salloc: error: Too few processes for the requested {plane,node} distribution\n"},
		},
		"problems reported together": {
			in: run{args: []string{"-v", "-Q", "--ntasks-per-core=2", "--threads-per-core=1"}},
			want: Exit{Code: 1, Stderr: "salloc: error: don't specify both --verbose (-v) and --quiet (-Q)\n" +
				"salloc: error: --ntasks-per-core (2) can not be bigger than --threads-per-core (1)\n"},
		},
		"allow task sharing": {
			in:   run{args: []string{"--gres-flags=allow-task-sharing"}},
			want: Exit{Code: 255, Stderr: "salloc: error: --gres-flags=allow-task-sharing is only used with srun.\n"},
		},
		"help": {
			in:   run{args: []string{"-N1", "-h", "--bogus"}},
			want: Exit{Code: 0, Stdout: NewSalloc(Config{}).Help()},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, _, got := tc.in.salloc()
			if got == nil {
				t.Fatal("no error")
			}
			if diff := cmp.Diff(tc.want, *got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestSallocHelpAndOperands(t *testing.T) {
	p := NewSalloc(Config{})
	help := p.Help()
	for _, want := range []string{
		"Usage: salloc [OPTIONS(0)...] [ : [OPTIONS(N)]] [command(0) [args(0)...]]\n",
		"      --bell                  ring the terminal bell when the job is allocated\n",
		"  -K, --kill-command[=signal] signal to send terminating job\n",
		"  -I, --immediate[=secs]      exit if resources not available in \"secs\"\n",
	} {
		if !contains(help, want) {
			t.Errorf("help lacks %q", want)
		}
	}
	for _, refused := range []string{"--get-user-env", "--power", "--resv-ports"} {
		if contains(help, refused) {
			t.Errorf("help lists %q", refused)
		}
	}
	if !contains(p.Usage(), "Usage: salloc [-N numnodes|[min nodes]-[max nodes]] [-n num-processors]\n") {
		t.Errorf("usage: %q", p.Usage())
	}
	ops, err := p.ParseArgs([]string{"-N2", "--no-shell", "srun", "-n4", "a.out"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"srun", "-n4", "a.out"}, ops); diff != "" {
		t.Errorf("operands (-want +got):\n%s", diff)
	}
}
