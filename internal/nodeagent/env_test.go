package nodeagent

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/nodeproto"
)

// readEnv loads an `env | sort` capture from real Slurm (testdata/, copied
// from shared/reference/env).
func readEnv(t *testing.T, name string) map[string]string {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		m[k] = v
	}
	return m
}

func envMap(list []string) map[string]string {
	m := map[string]string{}
	for _, kv := range list {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// TestBatchEnvMatchesSlurm builds the batch environment for the jobs of the
// reference captures and compares every variable Slurm sets, except those
// that depend on the machine or on accounting (pids, SLUID, account, QOS).
func TestBatchEnvMatchesSlurm(t *testing.T) {
	submitted := []string{"HOME=/home/alice", "USER=root", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"SLURM_CONF=/etc/slurm/slurm.conf", "SLURM_SUBMIT_DIR=/home/alice/project", "SLURM_SUBMIT_HOST=node0",
		"SLURM_PRIO_PROCESS=0", "SLURM_UMASK=0022", "SLURM_RLIMIT_CORE=0"}
	tests := map[string]struct {
		launch nodeproto.Launch
		node   string
		ignore []string
	}{
		"batch_N1_n2_gres2.env": {
			launch: nodeproto.Launch{
				JobID: 153, ArrayTaskID: 0xFFFFFFFE, Name: "srunenv", Cluster: "rccluster", Partition: "debug",
				UserName: "root", Environment: submitted, SubmitDir: "/home/alice/project", SubmitHost: "node0",
				Nodes: []string{"rc1"}, CPUsPerNode: []uint32{2}, TasksPerNode: []uint32{2}, NumTasks: 2,
				MemPerNode: 200, GPUs: []int{0, 1}, TimeLimitMin: 0xFFFFFFFF, StartTime: time.Unix(1795964956, 0),
			},
			node:   "rc1",
			ignore: []string{"SLURM_JOB_SLUID", "SLURM_TASK_PID", "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS", "HOSTNAME", "PWD", "TMPDIR"},
		},
		"batch_alloc_N4_n8_gres1.env": {
			launch: nodeproto.Launch{
				JobID: 24599, ArrayTaskID: 0xFFFFFFFE, Name: "envalloc", Cluster: "refcluster", Partition: "gpu",
				UserName: "root", Environment: submitted, SubmitDir: "/home/alice/project", SubmitHost: "node0",
				Nodes: []string{"n1", "n2", "n3", "n4"}, CPUsPerNode: []uint32{5, 1, 1, 1}, TasksPerNode: []uint32{5, 1, 1, 1},
				NumTasks: 8, MemPerCPU: 1000, GPUs: []int{0}, TimeLimitMin: 0xFFFFFFFF, StartTime: time.Unix(1795964956, 0),
			},
			node: "n1",
			// 22.05 predates the variables 25.11 adds; those are checked
			// against the 26.11 capture above.
			ignore: []string{"SLURM_TASK_PID", "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS", "HOSTNAME", "PWD", "TMPDIR",
				"SLURM_NODE_ALIASES", "SLURM_WORKING_CLUSTER"},
		},
	}
	newer := []string{"SLURM_JOB_START_TIME", "SLURM_JOB_END_TIME", "SLURM_JOB_EXCLUSIVE", "SLURM_JOB_OVERSUBSCRIBE",
		"SLURM_OOM_KILL_STEP", "SLURM_RESTART_COUNT", "SLURM_STEP_ID", "SLURM_STEPID", "OMPI_MCA_plm_slurm_args",
		"PRTE_MCA_plm_slurm_args", "HYDRA_BOOTSTRAP", "HYDRA_LAUNCHER_EXTRA_ARGS", "I_MPI_HYDRA_BOOTSTRAP",
		"I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS"}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			want := readEnv(t, name)
			list, prop := batchEnv(&tc.launch, tc.node, false)
			got := envMap(list)
			drop := append([]string{}, tc.ignore...)
			if strings.HasPrefix(tc.launch.Cluster, "ref") {
				drop = append(drop, newer...)
			} else if want["SLURM_RESTART_COUNT"] == "0" {
				// 26.11 sets it on a first run; 25.11, which Drover
				// follows, only once the job was requeued.
				delete(want, "SLURM_RESTART_COUNT")
			}
			for _, k := range drop {
				delete(want, k)
				delete(got, k)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("environment (-slurm +drover):\n%s", d)
			}
			if prop.umask != "0022" || prop.limits[4] != 0 {
				t.Errorf("propagated %+v, want umask 0022 and RLIMIT_CORE 0", prop)
			}
		})
	}
}

func TestPerNode(t *testing.T) {
	tests := map[string]struct {
		in   []uint32
		want string
	}{
		"one":       {[]uint32{2}, "2"},
		"fold tail": {[]uint32{5, 1, 1, 1}, "5,1(x3)"},
		"all equal": {[]uint32{4, 4}, "4(x2)"},
		"mixed":     {[]uint32{3, 1}, "3,1"},
		"runs":      {[]uint32{2, 2, 1, 2}, "2(x2),1,2"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := perNode(tc.in); got != tc.want {
				t.Errorf("perNode(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
