package layout

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/hostlist"
)

// referenceDir locates shared/reference beside the repository (as
// internal/cli/clitest's ReferenceDir does), or $DROVER_REFERENCE_DIR, and
// skips the test when it is absent.
func referenceDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("DROVER_REFERENCE_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	d := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "reference")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("reference captures not found at %s", d)
	}
	return d
}

// readEnv reads an `env | sort` capture.
func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			env[k] = v
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return env
}

// jobAlloc is the job's allocation as its environment states it:
// SLURM_JOB_NODELIST with SLURM_JOB_CPUS_PER_NODE.
func jobAlloc(t *testing.T, env map[string]string) []NodeAvail {
	t.Helper()
	names, err := hostlist.Expand(env["SLURM_JOB_NODELIST"])
	if err != nil {
		t.Fatal(err)
	}
	cpus, err := ParseTasksPerNode(env["SLURM_JOB_CPUS_PER_NODE"])
	if err != nil {
		t.Fatal(err)
	}
	if len(cpus) != len(names) {
		t.Fatalf("%d nodes but %d CPU counts", len(names), len(cpus))
	}
	a := make([]NodeAvail, len(names))
	for i := range names {
		a[i] = NodeAvail{Name: names[i], CPUs: cpus[i]}
	}
	return a
}

func atoi(t *testing.T, env map[string]string, key string) int {
	t.Helper()
	n, err := strconv.Atoi(env[key])
	if err != nil {
		t.Fatalf("%s=%q: %v", key, env[key], err)
	}
	return n
}

// TestReferenceSteps reproduces every srun step captured from real Slurm
// (shared/reference/env, commands in COMMANDS.md) from the job's allocation
// and compares, per task file, SLURM_NODEID, SLURM_LOCALID, SLURM_PROCID and
// SLURM_GTIDS, and the step's SLURM_TASKS_PER_NODE,
// SLURM_STEP_TASKS_PER_NODE, SLURM_STEP_NODELIST, SLURM_STEP_NUM_NODES,
// SLURM_STEP_NUM_TASKS and SLURM_DISTRIBUTION.
func TestReferenceSteps(t *testing.T) {
	ref := referenceDir(t)
	tests := map[string]struct {
		dir, batch, prefix string
		req                Request
	}{
		// srun -N2 -n4 inside sbatch -N4 -n8 (SLURM_JOB_NUM_NODES=4 and
		// SLURM_NTASKS=8 in the environment, overridden by -N and -n).
		"22.05 srun -N2 -n4": {
			dir: "22.05", batch: "batch_alloc_N4_n8_gres1.env", prefix: "srun_N2_n4_task",
			req: req().N(2).n(4).Build(),
		},
		"22.05 srun -N4 -n8 --gres=gpu:1": {
			dir: "22.05", batch: "batch_alloc_N4_n8_gres1.env", prefix: "srun_N4_n8_gres1_task",
			req: req().N(4).n(8).Build(),
		},
		// srun -n2 inside sbatch -N1 -n2: -N comes from
		// SLURM_JOB_NUM_NODES=1.
		"26.11 srun -n2 --gres=gpu:1": {
			dir: "26.11", batch: "batch_N1_n2_gres2.env", prefix: "srun_n2_gres1_task",
			req: req().N(1).envN().n(2).Build(),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(ref, "env", tc.dir)
			batch := readEnv(t, filepath.Join(dir, tc.batch))
			lay, err := Place(jobAlloc(t, batch), tc.req)
			if err != nil {
				t.Fatalf("Place: %v", err)
			}
			files, err := filepath.Glob(filepath.Join(dir, tc.prefix+"*.env"))
			if err != nil || len(files) == 0 {
				t.Fatalf("no task files %s*.env: %v", tc.prefix, err)
			}
			if len(files) != lay.NumTasks() {
				t.Errorf("%d task files, layout has %d tasks", len(files), lay.NumTasks())
			}
			for _, f := range files {
				env := readEnv(t, f)
				task := atoi(t, env, "SLURM_PROCID")
				node, local := lay.NodeOf(task)
				gtids := ""
				if node >= 0 {
					ids := make([]string, len(lay.Tasks[node]))
					for i, id := range lay.Tasks[node] {
						ids[i] = strconv.Itoa(id)
					}
					gtids = strings.Join(ids, ",")
				}
				want := map[string]string{
					"SLURM_PROCID":              env["SLURM_PROCID"],
					"SLURM_NODEID":              env["SLURM_NODEID"],
					"SLURM_LOCALID":             env["SLURM_LOCALID"],
					"SLURM_GTIDS":               env["SLURM_GTIDS"],
					"SLURM_TASKS_PER_NODE":      env["SLURM_TASKS_PER_NODE"],
					"SLURM_STEP_TASKS_PER_NODE": env["SLURM_STEP_TASKS_PER_NODE"],
					"SLURM_STEP_NODELIST":       env["SLURM_STEP_NODELIST"],
					"SLURM_STEP_NUM_NODES":      env["SLURM_STEP_NUM_NODES"],
					"SLURM_STEP_NUM_TASKS":      env["SLURM_STEP_NUM_TASKS"],
					"SLURM_DISTRIBUTION":        env["SLURM_DISTRIBUTION"],
				}
				got := map[string]string{
					"SLURM_PROCID":              strconv.Itoa(task),
					"SLURM_NODEID":              strconv.Itoa(node),
					"SLURM_LOCALID":             strconv.Itoa(local),
					"SLURM_GTIDS":               gtids,
					"SLURM_TASKS_PER_NODE":      lay.TasksPerNode(),
					"SLURM_STEP_TASKS_PER_NODE": lay.TasksPerNode(),
					"SLURM_STEP_NODELIST":       hostlist.Compress(lay.Nodes),
					"SLURM_STEP_NUM_NODES":      strconv.Itoa(len(lay.Nodes)),
					"SLURM_STEP_NUM_TASKS":      strconv.Itoa(lay.NumTasks()),
					"SLURM_DISTRIBUTION":        lay.Dist.String(),
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s mismatch (-want +got):\n%s", filepath.Base(f), diff)
				}
			}
		})
	}
}

// TestReferenceJobTasksPerNode reproduces SLURM_TASKS_PER_NODE of batch
// scripts and salloc: the job's tasks (SLURM_NTASKS, else one per CPU)
// laid out in blocks over the job's CPUs (env.c,
// env_array_for_job/env_array_for_batch_job).
func TestReferenceJobTasksPerNode(t *testing.T) {
	ref := referenceDir(t)
	for _, file := range []string{
		"22.05/batch_simple.env", "22.05/batch_alloc_N4_n8_gres1.env", "22.05/array_task1.env",
		"22.05/array_task2.env", "22.05/salloc_N2_n4.env",
		"26.11/batch_N1_n2.env", "26.11/batch_N1_n2_gres2.env", "26.11/array_task1.env", "26.11/array_task2.env",
	} {
		t.Run(file, func(t *testing.T) {
			env := readEnv(t, filepath.Join(ref, "env", file))
			a := jobAlloc(t, env)
			tasks := 0
			if _, ok := env["SLURM_NTASKS"]; ok {
				tasks = atoi(t, env, "SLURM_NTASKS")
			} else {
				for _, n := range a {
					tasks += n.CPUs
				}
			}
			lay, err := Distribute(a, TaskSpec{Tasks: tasks})
			if err != nil {
				t.Fatalf("Distribute: %v", err)
			}
			if diff := cmp.Diff(env["SLURM_TASKS_PER_NODE"], lay.TasksPerNode()); diff != "" {
				t.Errorf("SLURM_TASKS_PER_NODE mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
