package salloc

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/cli/jobopts"
	"github.com/droverhq/drover/internal/cli/readmodel"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// options parses salloc's command line and environment as Run does.
func options(t *testing.T, env map[string]string, args ...string) *jobopts.Options {
	t.Helper()
	p := jobopts.NewSalloc(jobopts.Config{
		Prog: "salloc", Now: time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC), Cwd: "/home/alice/project",
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	})
	if _, err := p.Parse(args); err != nil {
		t.Fatalf("salloc %v: %v", args, err)
	}
	return p.Options()
}

// allocBuilder builds the allocation a test job was granted.
type allocBuilder struct{ a allocation }

func granted(id uint32, list string, nodes ...string) *allocBuilder {
	a := allocation{JobID: id, NodeList: list, Nodes: nodes, Partition: "batch", Cluster: "c1"}
	for range nodes {
		a.CPUs = append(a.CPUs, 4)
	}
	return &allocBuilder{a}
}

func (b *allocBuilder) cpus(c ...int) *allocBuilder { b.a.CPUs = c; return b }
func (b *allocBuilder) account(acct, qos string) *allocBuilder {
	b.a.Account, b.a.QOS = acct, qos
	return b
}
func (b *allocBuilder) partition(p, cluster string) *allocBuilder {
	b.a.Partition, b.a.Cluster = p, cluster
	return b
}
func (b *allocBuilder) memPerCPU(mb uint64) *allocBuilder { b.a.MemPerCPU = mb; return b }
func (b *allocBuilder) build() allocation                 { return b.a }

// readEnv reads an `env | sort` capture.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			out[k] = v
		}
	}
	return out
}

func asMap(env []string) map[string]string {
	out := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		out[k] = v
	}
	return out
}

// mpiHint reports the variables Slurm sets for MPI launchers since 25.11
// (set_env_from_opts), which 22.05 did not.
func mpiHint(name string) bool {
	for _, p := range []string{"OMPI_", "PRTE_", "HYDRA_", "I_MPI_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// TestCommandEnvReference rebuilds the environment real salloc gave
// `salloc -N2 -n4 env` (Slurm 22.05) from the same allocation: job 24601
// on n[2-3] holding 3 and 1 CPUs, partition gpu, account root, QOS normal.
// SLURM_NODE_ALIASES is 22.05's alone; the MPI launcher hints are newer.
func TestCommandEnvReference(t *testing.T) {
	want := readEnv(t, filepath.Join(clitest.ReferenceDir(t), "env", "22.05", "salloc_N2_n4.env"))
	delete(want, "SLURM_NODE_ALIASES")
	// The submission environment (COMMANDS.md): SLURM_CONF is the
	// caller's.
	base := []string{"HOME=" + want["HOME"], "USER=" + want["USER"], "PATH=" + want["PATH"], "SLURM_CONF=" + want["SLURM_CONF"]}
	o := options(t, nil, "-N2", "-n4", "env")
	a := granted(24601, "n[2-3]", "n2", "n3").cpus(3, 1).account("root", "normal").partition("gpu", "refcluster").build()
	env, err := commandEnv(base, o, a, submission{Dir: want["SLURM_SUBMIT_DIR"], Host: want["SLURM_SUBMIT_HOST"]})
	if err != nil {
		t.Fatal(err)
	}
	got := asMap(env)
	for k := range got {
		if mpiHint(k) {
			delete(got, k)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environment mismatch (-22.05 +drover):\n%s", diff)
	}
}

func TestCommandEnv(t *testing.T) {
	two := granted(7, "n[1-2]", "n1", "n2")
	tests := map[string]struct {
		args   []string
		vars   map[string]string // salloc's input environment
		base   []string
		alloc  allocation
		want   map[string]string
		absent []string
	}{
		"nodes only": {
			args:  []string{"-N2"},
			alloc: two.build(),
			want: map[string]string{
				"SLURM_JOB_ID": "7", "SLURM_JOBID": "7", "SLURM_JOB_NAME": "interactive", "SLURM_JOB_NUM_NODES": "2",
				"SLURM_NNODES": "2", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_NODELIST": "n[1-2]",
				"SLURM_JOB_CPUS_PER_NODE": "4(x2)", "SLURM_TASKS_PER_NODE": "4(x2)", "SLURM_JOB_PARTITION": "batch",
				"SLURM_CLUSTER_NAME": "c1", "SLURM_SUBMIT_DIR": "/home/alice/project", "SLURM_SUBMIT_HOST": "login1",
				"OMPI_MCA_plm_slurm_args": "--external-launcher", "HYDRA_BOOTSTRAP": "slurm",
			},
			absent: []string{"SLURM_NTASKS", "SLURM_NPROCS", "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS", "SLURM_DISTRIBUTION",
				"SLURM_MEM_PER_CPU", "SLURM_MEM_PER_NODE", "SLURM_CPUS_PER_TASK"},
		},
		"cpus per task": {
			args:  []string{"-n3", "-c2"},
			alloc: granted(7, "n[1-2]", "n1", "n2").cpus(4, 2).build(),
			want: map[string]string{
				"SLURM_NTASKS": "3", "SLURM_NPROCS": "3", "SLURM_CPUS_PER_TASK": "2", "SLURM_TRES_PER_TASK": "cpu=2",
				"SLURM_JOB_CPUS_PER_NODE": "4,2", "SLURM_TASKS_PER_NODE": "2,1",
			},
		},
		"cpus per task, no task count": {
			args:  []string{"-N2", "-c2"},
			alloc: two.build(),
			want:  map[string]string{"SLURM_TASKS_PER_NODE": "2(x2)", "SLURM_CPUS_PER_TASK": "2"},
		},
		"tasks per node": {
			args:  []string{"-N2", "--ntasks-per-node=2"},
			alloc: two.build(),
			want:  map[string]string{"SLURM_NTASKS": "4", "SLURM_NPROCS": "4", "SLURM_NTASKS_PER_NODE": "2", "SLURM_TASKS_PER_NODE": "2(x2)"},
		},
		"fewer tasks than nodes granted": {
			args:  []string{"-N1-2", "-n1"},
			alloc: two.build(),
			want:  map[string]string{"SLURM_NTASKS": "2", "SLURM_TASKS_PER_NODE": "1(x2)"},
		},
		"cyclic": {
			args:  []string{"-n4", "-m", "cyclic"},
			alloc: granted(7, "n[1-2]", "n1", "n2").cpus(3, 1).build(),
			want:  map[string]string{"SLURM_DISTRIBUTION": "cyclic", "SLURM_TASKS_PER_NODE": "3,1"},
		},
		"plane": {
			args:  []string{"-n4", "-m", "plane=2"},
			alloc: two.build(),
			want:  map[string]string{"SLURM_DISTRIBUTION": "plane", "SLURM_DIST_PLANESIZE": "2", "SLURM_TASKS_PER_NODE": "2(x2)"},
		},
		"memory per node": {
			args:  []string{"--mem=500"},
			alloc: two.build(),
			want:  map[string]string{"SLURM_MEM_PER_NODE": "500"},
		},
		"memory per cpu from the job": {
			args:   []string{"--mem-per-cpu=100"},
			alloc:  granted(7, "n1", "n1").memPerCPU(128).build(),
			want:   map[string]string{"SLURM_MEM_PER_CPU": "128"},
			absent: []string{"SLURM_MEM_PER_NODE"},
		},
		"default memory is not the user's": {
			alloc:  granted(7, "n1", "n1").memPerCPU(100).build(),
			absent: []string{"SLURM_MEM_PER_CPU", "SLURM_MEM_PER_NODE"},
		},
		"options passed on": {
			args: []string{"-O", "--threads-per-core=1", "--gpus-per-node=2", "--network=ib", "--acctg-freq=30",
				"-J", "probe", "-A", "physics"},
			alloc: granted(7, "n1", "n1").account("physics", "high").build(),
			want: map[string]string{
				"SLURM_OVERCOMMIT": "1", "SLURM_THREADS_PER_CORE": "1", "SLURM_GPUS_PER_NODE": "2", "SLURM_NETWORK": "ib",
				"SLURM_ACCTG_FREQ": "30", "SLURM_JOB_NAME": "probe", "SLURM_JOB_ACCOUNT": "physics", "SLURM_JOB_QOS": "high",
			},
		},
		"no shell": {
			args:  []string{"--no-shell"},
			alloc: two.build(),
			want:  map[string]string{"SLURM_JOB_NAME": "no-shell"},
		},
		"set while checking options": {
			args:  []string{"--ntasks-per-core=1", "--mem-bind=local"},
			alloc: granted(7, "n1", "n1").build(),
			want:  map[string]string{"SLURM_NTASKS_PER_CORE": "1", "SLURM_MEM_BIND": "local", "SLURM_MEM_BIND_VERBOSE": "quiet"},
		},
		"hint": {
			args:  []string{"--hint=nomultithread"},
			alloc: granted(7, "n1", "n1").build(),
			want:  map[string]string{"SLURM_HINT": "nomultithread", "SLURM_THREADS_PER_CORE": "1"},
		},
		"nested in another allocation": {
			base: []string{"SLURM_JOB_ID=3", "SLURM_JOBID=3", "SLURM_STEPMGR=n9", "SLURM_NTASKS=64",
				"OMPI_MCA_plm_slurm_args=--mine", "HYDRA_BOOTSTRAP=ssh", "TERM=xterm"},
			alloc: granted(7, "n1", "n1").build(),
			want: map[string]string{
				"SLURM_JOB_ID": "7", "SLURM_JOBID": "7", "SLURM_NTASKS": "64", "OMPI_MCA_plm_slurm_args": "--mine",
				"HYDRA_BOOTSTRAP": "ssh", "TERM": "xterm",
			},
			absent: []string{"SLURM_STEPMGR", "HYDRA_LAUNCHER_EXTRA_ARGS"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := options(t, tc.vars, tc.args...)
			env, err := commandEnv(tc.base, o, tc.alloc, submission{Dir: "/home/alice/project", Host: "login1"})
			if err != nil {
				t.Fatal(err)
			}
			got := asMap(env)
			picked := map[string]string{}
			for k := range tc.want {
				if v, ok := got[k]; ok {
					picked[k] = v
				}
			}
			if diff := cmp.Diff(tc.want, picked, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("variables (-want +got):\n%s", diff)
			}
			for _, k := range tc.absent {
				if v, ok := got[k]; ok {
					t.Errorf("%s=%s set, want it absent", k, v)
				}
			}
		})
	}
}

func TestAllocationOf(t *testing.T) {
	node := func(i int32, name string, cpus int32) v0044.V0044JobResNode {
		return v0044.V0044JobResNode{Index: i, Name: name, Cpus: v0044.NewOptV0044JobResNodeCpus(v0044.V0044JobResNodeCpus{Count: v0044.NewOptInt32(cpus)})}
	}
	mem := func(n int64) v0044.OptV0044Uint64NoValStruct {
		return v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptInt64(n)})
	}
	j := v0044.V0044JobInfo{
		Nodes: v0044.NewOptString("n[1-2]"), Partition: v0044.NewOptString("batch"), Account: v0044.NewOptString("physics"),
		Qos: v0044.NewOptString("normal"), Cluster: v0044.NewOptString("c1"), ResvName: v0044.NewOptString("maint"),
		MemoryPerCPU: mem(100), MemoryPerNode: v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{Set: v0044.NewOptBool(false)}),
		JobResources: v0044.NewOptV0044JobRes(v0044.V0044JobRes{Nodes: v0044.NewOptV0044JobResNodes(v0044.V0044JobResNodes{
			Allocation: v0044.V0044JobResNodesList{node(1, "n2", 1), node(0, "n1", 3)},
		})}),
	}
	want := allocation{
		JobID: 9, NodeList: "n[1-2]", Nodes: []string{"n1", "n2"}, CPUs: []int{3, 1},
		Partition: "batch", Account: "physics", QOS: "normal", Reservation: "maint", Cluster: "c1", MemPerCPU: 100,
	}
	if diff := cmp.Diff(want, allocationOf(9, readmodel.FromV0044JobInfo(&j))); diff != "" {
		t.Errorf("allocation (-want +got):\n%s", diff)
	}

	// Without per-node detail the job's CPUs are shared out.
	j.JobResources.Reset()
	j.Cpus = v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptInt32(8)})
	if got := allocationOf(9, readmodel.FromV0044JobInfo(&j)); !cmp.Equal(got.Nodes, []string{"n1", "n2"}) || !cmp.Equal(got.CPUs, []int{4, 4}) {
		t.Errorf("without job_resources: nodes %v, CPUs %v", got.Nodes, got.CPUs)
	}
}

func TestFindCommand(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	work := filepath.Join(dir, "work")
	for _, d := range []string{bin, work, filepath.Join(bin, "adir")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(path string, mode os.FileMode) {
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(bin, "tool"), 0o755)
	write(filepath.Join(bin, "plain"), 0o644)
	write(filepath.Join(work, "plain"), 0o755)
	write(filepath.Join(work, "local"), 0o755)
	tests := map[string]struct {
		name string
		want string // "" for not found
	}{
		"in PATH":                       {"tool", filepath.Join(bin, "tool")},
		"not executable in PATH":        {"plain", filepath.Join(work, "plain")},
		"working directory last":        {"local", filepath.Join(work, "local")},
		"dot is the working directory":  {"./local", filepath.Join(work, "local")},
		"absolute":                      {filepath.Join(bin, "tool"), filepath.Join(bin, "tool")},
		"directory is no command":       {"adir", ""},
		"missing":                       {"nothing-here", ""},
		"dot does not search PATH":      {"./tool", ""},
		"absolute, not executable file": {filepath.Join(bin, "plain"), ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := findCommand(tc.name, work, "/nonexistent:"+bin)
			if ok != (tc.want != "") || got != tc.want {
				t.Errorf("findCommand(%q) = %q, %v; want %q", tc.name, got, ok, tc.want)
			}
		})
	}
}

func TestShellOf(t *testing.T) {
	passwd := "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/home/alice:/usr/bin/zsh\nbad line\n"
	for uid, want := range map[uint32]string{0: "/bin/bash", 1000: "/usr/bin/zsh", 1001: ""} {
		if got := shellOf(passwd, uid); got != want {
			t.Errorf("shellOf(%d) = %q, want %q", uid, got, want)
		}
	}
}
