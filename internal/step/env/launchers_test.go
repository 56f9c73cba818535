package env

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/hostlist"
)

// rendezvous is what a launcher derives from a task's environment to set
// up torch.distributed (or its own bookkeeping).
type rendezvous struct {
	WorldSize, GlobalRank, LocalRank, NodeRank int
	LocalWorldSize                             int // torchrun only: tasks on this node
	NumNodes                                   int // submitit only
	MasterAddr                                 string
	MasterPort                                 int // Lightning only
}

func atoiEnv(env map[string]string, name string) (int, error) {
	v, ok := env[name]
	if !ok {
		return 0, fmt.Errorf("%s unset", name)
	}
	return strconv.Atoi(v)
}

// lightning mirrors lightning.fabric.plugins.environments.SLURMEnvironment:
// it applies when srun launched the task (SLURM_NTASKS set, job name not
// "bash" or "interactive"), ranks come from SLURM_NTASKS, SLURM_PROCID,
// SLURM_LOCALID and SLURM_NODEID, the main address is the first host of
// SLURM_NODELIST by its resolve_root_node_address regexes, and the port is
// 15000 plus the last four digits of SLURM_JOB_ID.
func lightning(env map[string]string) (rendezvous, error) {
	var r rendezvous
	if _, ok := env["SLURM_NTASKS"]; !ok || env["SLURM_JOB_NAME"] == "bash" || env["SLURM_JOB_NAME"] == "interactive" {
		return r, fmt.Errorf("not launched by srun")
	}
	var err error
	for _, f := range []struct {
		dst  *int
		name string
	}{{&r.WorldSize, "SLURM_NTASKS"}, {&r.GlobalRank, "SLURM_PROCID"}, {&r.LocalRank, "SLURM_LOCALID"}, {&r.NodeRank, "SLURM_NODEID"}} {
		if *f.dst, err = atoiEnv(env, f.name); err != nil {
			return r, err
		}
	}
	nodes := regexp.MustCompile(`\[(.*?)[,-].*\]`).ReplaceAllString(env["SLURM_NODELIST"], "$1")
	nodes = regexp.MustCompile(`\[(.*?)\]`).ReplaceAllString(nodes, "$1")
	r.MasterAddr = strings.Split(strings.Split(nodes, " ")[0], ",")[0]
	job := env["SLURM_JOB_ID"]
	if r.MasterPort, err = strconv.Atoi(job[max(len(job)-4, 0):]); err != nil {
		return r, err
	}
	r.MasterPort += 15000
	return r, nil
}

// submitit mirrors submitit.slurm.slurm.SlurmJobEnvironment: SLURM_NTASKS,
// SLURM_JOB_NUM_NODES, SLURM_NODEID, SLURM_PROCID, SLURM_LOCALID, and the
// hosts of SLURM_JOB_NODELIST (the first is where its users rendezvous).
func submitit(env map[string]string) (rendezvous, error) {
	var r rendezvous
	var err error
	for _, f := range []struct {
		dst  *int
		name string
	}{{&r.WorldSize, "SLURM_NTASKS"}, {&r.NumNodes, "SLURM_JOB_NUM_NODES"}, {&r.NodeRank, "SLURM_NODEID"},
		{&r.GlobalRank, "SLURM_PROCID"}, {&r.LocalRank, "SLURM_LOCALID"}} {
		if *f.dst, err = atoiEnv(env, f.name); err != nil {
			return r, err
		}
	}
	hosts, err := hostlist.Expand(env["SLURM_JOB_NODELIST"])
	if err != nil || len(hosts) == 0 {
		return r, fmt.Errorf("SLURM_JOB_NODELIST %q: %v", env["SLURM_JOB_NODELIST"], err)
	}
	r.MasterAddr = hosts[0]
	return r, nil
}

// torchrun is the SLURM-aware launch of torch.distributed scripts run one
// task per process under srun: WORLD_SIZE = SLURM_NTASKS, RANK =
// SLURM_PROCID, LOCAL_RANK = SLURM_LOCALID, GROUP_RANK = SLURM_NODEID,
// LOCAL_WORLD_SIZE = the tasks of SLURM_GTIDS, MASTER_ADDR = the first
// host of SLURM_JOB_NODELIST.
func torchrun(env map[string]string) (rendezvous, error) {
	var r rendezvous
	var err error
	for _, f := range []struct {
		dst  *int
		name string
	}{{&r.WorldSize, "SLURM_NTASKS"}, {&r.GlobalRank, "SLURM_PROCID"}, {&r.LocalRank, "SLURM_LOCALID"}, {&r.NodeRank, "SLURM_NODEID"}} {
		if *f.dst, err = atoiEnv(env, f.name); err != nil {
			return r, err
		}
	}
	r.LocalWorldSize = len(strings.Split(env["SLURM_GTIDS"], ","))
	hosts, err := hostlist.Expand(env["SLURM_JOB_NODELIST"])
	if err != nil || len(hosts) == 0 {
		return r, fmt.Errorf("SLURM_JOB_NODELIST %q: %v", env["SLURM_JOB_NODELIST"], err)
	}
	r.MasterAddr = hosts[0]
	return r, nil
}

// TestLaunchersSeeSlurmLayout derives, for every task of the 8-task
// capture (srun -N4 -n8 --gres=gpu:1, tasks 5,1,1,1 on n[1-4]), what
// PyTorch Lightning, submitit and torchrun would compute, from Drover's
// environment and from Slurm's: both must give the layout the step has.
func TestLaunchersSeeSlurmLayout(t *testing.T) {
	c := captureCases()["22.05 srun -N4 -n8 --gres=gpu:1"]
	got := c.buildTasks(readCapture(t, c.batch))
	layout := layoutOf(c.step.TasksPerNode, c.step.Distribution)
	launchers := map[string]func(map[string]string) (rendezvous, error){
		"lightning": lightning, "submitit": submitit, "torchrun": torchrun,
	}
	seen := map[string]map[[2]int]bool{}
	for id := range 8 {
		slurm := envMap(readCapture(t, fmt.Sprintf("22.05/srun_N4_n8_gres1_task%d.env", id)))
		drover := envMap(got[id])
		node, local := -1, -1
		for n, ids := range layout {
			for l, tid := range ids {
				if tid == id {
					node, local = n, l
				}
			}
		}
		for name, derive := range launchers {
			want := rendezvous{WorldSize: 8, GlobalRank: id, LocalRank: local, NodeRank: node, MasterAddr: "n1"}
			switch name {
			case "lightning":
				want.MasterPort = 15000 + 4599 // job 24599
			case "submitit":
				want.NumNodes = 4
			case "torchrun":
				want.LocalWorldSize = len(layout[node])
			}
			fromSlurm, err := derive(slurm)
			if err != nil {
				t.Fatalf("%s on Slurm's task %d: %v", name, id, err)
			}
			fromDrover, err := derive(drover)
			if err != nil {
				t.Fatalf("%s on Drover's task %d: %v", name, id, err)
			}
			if d := cmp.Diff(want, fromSlurm); d != "" {
				t.Errorf("%s, Slurm's task %d (-want +got):\n%s", name, id, d)
			}
			if d := cmp.Diff(fromSlurm, fromDrover); d != "" {
				t.Errorf("%s, task %d (-slurm +drover):\n%s", name, id, d)
			}
			if seen[name] == nil {
				seen[name] = map[[2]int]bool{}
			}
			key := [2]int{fromDrover.NodeRank, fromDrover.LocalRank}
			if seen[name][key] {
				t.Errorf("%s: two tasks at node %d local rank %d", name, key[0], key[1])
			}
			seen[name][key] = true
		}
	}
	// Every process group is complete: 8 ranks, local ranks 0..k-1 per node.
	for name, s := range seen {
		if len(s) != 8 {
			t.Errorf("%s saw %d distinct (node, local rank) pairs, want 8", name, len(s))
		}
	}
}
