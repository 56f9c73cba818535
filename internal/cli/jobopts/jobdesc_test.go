package jobopts

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

func u32(n int32) v0044.OptV0044Uint32NoValStruct {
	return v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
		Set: v0044.NewOptBool(true), Infinite: v0044.NewOptBool(false), Number: v0044.NewOptInt32(n),
	})
}

func u64(n int64) v0044.OptV0044Uint64NoValStruct {
	return v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{
		Set: v0044.NewOptBool(true), Number: v0044.NewOptInt64(n),
	})
}

var (
	s   = v0044.NewOptString
	i32 = v0044.NewOptInt32
	yes = v0044.NewOptBool(true)
	no  = v0044.NewOptBool(false)
)

func TestJobDesc(t *testing.T) {
	cwd := s("/home/alice/project")
	stdin := s("/dev/null")
	tests := map[string]struct {
		args []string
		want v0044.V0044JobDescMsg
	}{
		"defaults": {
			want: v0044.V0044JobDescMsg{
				CurrentWorkingDirectory: cwd, StandardInput: stdin, MinimumCpus: i32(1),
			},
		},
		"like the rich REST capture": {
			args: []string{"-J", "rich_job", "-p", "debug", "-A", "root", "-q", "normal", "-n2", "-c1", "-N1",
				"--mem=200", "-t15", "-o", "/home/alice/project/rich_%j.out", "-e", "rich_%j.err",
				"--comment=rich submit example", "--gres=gpu:1", "-H", "--no-requeue",
				"--mail-type=END,FAIL", "--mail-user=alice@example.com"},
			want: v0044.V0044JobDescMsg{
				Name: s("rich_job"), Partition: s("debug"), Account: s("root"), Qos: s("normal"),
				CurrentWorkingDirectory: cwd, Tasks: i32(2), CpusPerTask: i32(1), MinimumNodes: i32(1),
				MaximumNodes: i32(1), MemoryPerNode: u64(200), TimeLimit: u32(15),
				StandardOutput: s("/home/alice/project/rich_%j.out"), StandardError: s("/home/alice/project/rich_%j.err"),
				StandardInput: stdin, Comment: s("rich submit example"), TresPerNode: s("gres/gpu:1"),
				Hold: yes, Requeue: no, MailUser: s("alice@example.com"),
				MailType:    []v0044.V0044JobDescMsgMailTypeItem{"END", "FAIL"},
				MinimumCpus: i32(2), MinimumCpusPerNode: i32(1), TresPerTask: s("cpu=1"),
				Flags: []v0044.V0044JobDescMsgFlagsItem{"EXACT_TASK_COUNT_REQUESTED", "EXACT_CPU_COUNT_REQUESTED"},
			},
		},
		"fixed node count implies min cpus": {
			args: []string{"-N3"},
			want: v0044.V0044JobDescMsg{
				CurrentWorkingDirectory: cwd, StandardInput: stdin,
				MinimumNodes: i32(3), MaximumNodes: i32(3), MinimumCpus: i32(3),
			},
		},
		"tasks per node derive nodes": {
			args: []string{"-n5", "--ntasks-per-node=2"},
			want: v0044.V0044JobDescMsg{
				CurrentWorkingDirectory: cwd, StandardInput: stdin, Tasks: i32(5), TasksPerNode: i32(2),
				MinimumNodes: i32(3), MinimumCpus: i32(5),
				Flags: []v0044.V0044JobDescMsgFlagsItem{"EXACT_TASK_COUNT_REQUESTED"},
			},
		},
		"tasks per node fix the task count": {
			args: []string{"-N2", "--ntasks-per-node=3"},
			want: v0044.V0044JobDescMsg{
				CurrentWorkingDirectory: cwd, StandardInput: stdin, Tasks: i32(6), TasksPerNode: i32(3),
				MinimumNodes: i32(2), MaximumNodes: i32(2), MinimumCpus: i32(6),
				Flags: []v0044.V0044JobDescMsgFlagsItem{"EXACT_TASK_COUNT_REQUESTED"},
			},
		},
		"tasks per node with a node range leave the task count open": {
			args: []string{"-N1-3", "--ntasks-per-node=2"},
			want: v0044.V0044JobDescMsg{
				CurrentWorkingDirectory: cwd, StandardInput: stdin, TasksPerNode: i32(2),
				MinimumNodes: i32(1), MaximumNodes: i32(3), MinimumCpus: i32(1),
			},
		},
		"gpus and misc": {
			args: []string{"-G", "2", "--gpus-per-node=a100:1", "--gres=nic", "--mem-per-gpu=1G", "--cpus-per-gpu=3",
				"--exclusive", "--nice=-10", "--priority=5", "-t", "UNLIMITED", "--begin=now+60",
				"-w", "n[2,1],n1", "-x", "n[5-6]", "--signal=B:TERM", "--open-mode=append", "--array=1-3%1",
				"-d", "afterok:1", "--kill-on-invalid-dep=yes", "--spread-job",
				"--tmp=10G", "--licenses=fluent:1", "--resources=foo", "-k", "--wait-all-nodes=1"},
			want: v0044.V0044JobDescMsg{
				CurrentWorkingDirectory: cwd, StandardInput: stdin,
				TresPerJob: s("gres/gpu:2"), TresPerNode: s("gres/gpu:a100:1,gres/nic"),
				MemoryPerTres: s("gres/gpu:1024"), CpusPerTres: s("gres/gpu:3"),
				Shared: []v0044.V0044JobDescMsgSharedItem{"none"}, Nice: i32(-10),
				Priority: v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
					Set: yes, Number: i32(5),
				}),
				TimeLimit: v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
					Set: no, Infinite: yes,
				}),
				BeginTime:         u64(testNow.Unix() + 60),
				RequiredNodes:     v0044.V0044CsvString{"n[1-2]"},
				ExcludedNodes:     v0044.V0044CsvString{"n[5-6]"},
				MinimumNodes:      i32(2),
				MinimumCpus:       i32(2),
				KillWarningSignal: s("15"),
				KillWarningDelay: v0044.NewOptV0044Uint16NoValStruct(v0044.V0044Uint16NoValStruct{
					Set: yes, Number: i32(60),
				}),
				KillWarningFlags:     []v0044.V0044JobDescMsgKillWarningFlagsItem{"BATCH_JOB"},
				OpenMode:             []v0044.V0044JobDescMsgOpenModeItem{"APPEND"},
				Array:                s("1-3%1"),
				Dependency:           s("afterok:1"),
				Flags:                []v0044.V0044JobDescMsgFlagsItem{"KILL_INVALID_DEPENDENCY", "SPREAD_JOB"},
				TemporaryDiskPerNode: i32(10240),
				Licenses:             s("fluent:1,foo"),
				KillOnNodeFail:       no,
				WaitAllNodes:         yes,
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o, e := input{args: tc.args}.parse()
			if e != nil {
				t.Fatalf("exit: %+v", e)
			}
			got := o.JobDesc()
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestExportEnvironment(t *testing.T) {
	own := []string{"PATH=/bin", "HOME=/home/alice", "MYVAR=1", "SLURM_SUBMIT_DIR=/x", "SLURMD_NODENAME=n1", "OTHER=2"}
	tests := map[string]struct {
		args []string
		want []string
	}{
		"default is all": {
			want: own,
		},
		"ALL": {
			args: []string{"--export=all"},
			want: own,
		},
		"NONE keeps SLURM variables": {
			args: []string{"--export=NONE"},
			want: []string{"SLURM_SUBMIT_DIR=/x", "SLURMD_NODENAME=n1", "SLURM_GET_USER_ENV=1"},
		},
		"NIL": {
			args: []string{"--export=NIL"},
			want: []string{"SLURM_SUBMIT_DIR=/x", "SLURMD_NODENAME=n1"},
		},
		"list": {
			args: []string{"--export=MYVAR,NEW=a b,MISSING,'Q=x,y'"},
			want: []string{"MYVAR=1", "NEW=a b", "Q=x,y", "SLURM_SUBMIT_DIR=/x", "SLURMD_NODENAME=n1", "SLURM_GET_USER_ENV=1"},
		},
		"list with ALL": {
			args: []string{"--export=ALL,MYVAR=2"},
			want: []string{"PATH=/bin", "HOME=/home/alice", "MYVAR=2", "SLURM_SUBMIT_DIR=/x", "SLURMD_NODENAME=n1", "OTHER=2", "SLURM_GET_USER_ENV=1"},
		},
		"get-user-env": {
			args: []string{"--get-user-env"},
			want: append(append([]string(nil), own...), "SLURM_GET_USER_ENV=1"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o, e := input{args: tc.args}.parse()
			if e != nil {
				t.Fatalf("exit: %+v", e)
			}
			got := o.ExportEnvironment(NewEnviron(own)).List()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAddJobEnv(t *testing.T) {
	o, e := input{args: []string{"-n4", "-c2", "--ntasks-per-node=2", "-G", "1", "-m", "cyclic", "--threads-per-core=1"}}.parse()
	if e != nil {
		t.Fatalf("exit: %+v", e)
	}
	env := NewEnviron([]string{"HYDRA_BOOTSTRAP=ssh", "I_MPI_HYDRA_BOOTSTRAP=slurm"})
	o.AddJobEnv(env)
	want := []string{
		"HYDRA_BOOTSTRAP=ssh",
		"I_MPI_HYDRA_BOOTSTRAP=slurm",
		"SLURM_GPUS=1",
		"SLURM_TRES_PER_TASK=cpu=2",
		"OMPI_MCA_plm_slurm_args=--external-launcher",
		"PRTE_MCA_plm_slurm_args=--external-launcher",
		"I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS=--external-launcher",
		"SLURM_CPUS_PER_TASK=2",
		"SLURM_DISTRIBUTION=cyclic",
		"SLURM_NPROCS=4",
		"SLURM_NTASKS=4",
		"SLURM_NTASKS_PER_NODE=2",
		"SLURM_THREADS_PER_CORE=1",
	}
	if diff := cmp.Diff(want, env.List()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestEnviron(t *testing.T) {
	e := NewEnviron([]string{"A=1", "B=2", "junk", "=x", "A=3"})
	e.Set("C", "4")
	e.Set("B", "5")
	e.Add("B", "6")
	e.Add("D", "7")
	e.Unset("A")
	e.Unset("nope")
	if diff := cmp.Diff([]string{"B=5", "C=4", "D=7"}, e.List()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestGPUsPerTaskEnv: --gpus-per-task sets SLURM_TRES_PER_TASK, as 25.11
// does, and the SLURM_GPUS_PER_TASK older releases set (Ray reads it).
func TestGPUsPerTaskEnv(t *testing.T) {
	o, e := input{args: []string{"-n2", "--gpus-per-task=2"}}.parse()
	if e != nil {
		t.Fatalf("exit: %+v", e)
	}
	env := NewEnviron(nil)
	o.AddJobEnv(env)
	got := map[string]string{}
	for _, kv := range env.List() {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	if got["SLURM_GPUS_PER_TASK"] != "2" || got["SLURM_TRES_PER_TASK"] != "gres/gpu=2" {
		t.Errorf("SLURM_GPUS_PER_TASK=%q SLURM_TRES_PER_TASK=%q", got["SLURM_GPUS_PER_TASK"], got["SLURM_TRES_PER_TASK"])
	}
}
