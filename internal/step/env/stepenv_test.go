package env

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// slurmOnly keeps the variables this package writes or Slurm forwards.
func slurmOnly(m map[string]string) map[string]string {
	for k := range m {
		switch k {
		case "HOME", "PATH", "USER":
			delete(m, k)
		}
	}
	return m
}

func TestStepVars(t *testing.T) {
	user := []string{"HOME=/home/alice", "PATH=/usr/bin:/bin", "USER=alice"}
	two := Step{
		JobID: 7, StepID: 0, JobName: "train", Cluster: "c", Partition: "gpu",
		Nodes: []string{"g1", "g2"}, TasksPerNode: []int{2, 2}, JobCPUsPerNode: []uint32{4, 4},
		SrunHost: "10.0.0.5", SrunPort: 40000, Umask: "0027", UID: 1000, GID: 100, User: "alice", Group: "staff",
		SubmitDir: "/home/alice/run", SubmitHost: "login1", OwnAllocation: true,
		StartTime: time.Unix(1_000_000, 0), TimeLimitMin: 60, MemPerNode: 4096,
	}
	ownAlloc := map[string]string{
		"SLURM_CLUSTER_NAME": "c", "SLURM_JOB_ID": "7", "SLURM_JOBID": "7", "SLURM_JOB_NAME": "train",
		"SLURM_JOB_PARTITION": "gpu", "SLURM_JOB_NODELIST": "g[1-2]", "SLURM_NODELIST": "g[1-2]",
		"SLURM_JOB_NUM_NODES": "2", "SLURM_NNODES": "2", "SLURM_JOB_CPUS_PER_NODE": "4(x2)",
		"SLURM_MEM_PER_NODE": "4096", "SLURM_NTASKS": "4", "SLURM_NPROCS": "4", "SLURM_TASKS_PER_NODE": "2(x2)",
		"SLURM_STEP_ID": "0", "SLURM_STEPID": "0", "SLURM_STEP_NODELIST": "g[1-2]", "SLURM_STEP_NUM_NODES": "2",
		"SLURM_STEP_NUM_TASKS": "4", "SLURM_STEP_TASKS_PER_NODE": "2(x2)", "SLURM_STEP_LAUNCHER_PORT": "40000",
		"SLURM_SRUN_COMM_PORT": "40000", "SLURM_SRUN_COMM_HOST": "10.0.0.5", "SLURM_LAUNCH_NODE_IPADDR": "10.0.0.5",
		"SLURM_DISTRIBUTION": "block", "SLURM_UMASK": "0027", "SRUN_DEBUG": "3", "SLURMD_DEBUG": "2",
		"SLURM_PRIO_PROCESS": "0", "SLURM_SUBMIT_DIR": "/home/alice/run", "SLURM_SUBMIT_HOST": "login1",
		"SLURM_JOB_UID": "1000", "SLURM_JOB_GID": "100", "SLURM_JOB_USER": "alice", "SLURM_JOB_GROUP": "staff",
		"SLURM_JOB_START_TIME": "1000000", "SLURM_JOB_END_TIME": "1003600", "SLURM_OOM_KILL_STEP": "0",
		"OMPI_MCA_plm_slurm_args": "--external-launcher", "PRTE_MCA_plm_slurm_args": "--external-launcher",
		"HYDRA_BOOTSTRAP": "slurm", "HYDRA_LAUNCHER_EXTRA_ARGS": "--external-launcher",
		"I_MPI_HYDRA_BOOTSTRAP": "slurm", "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS": "--external-launcher",
	}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "<unset>" {
				delete(out, kv[i])
			} else {
				out[kv[i]] = kv[i+1]
			}
		}
		return out
	}
	tests := map[string]struct {
		base []string
		step func(Step) Step
		want map[string]string
	}{
		"own allocation": {
			base: user, step: func(s Step) Step { return s }, want: ownAlloc,
		},
		"inside an allocation keeps the job's values": {
			base: append(user, "SLURM_JOB_NODELIST=g[1-4]", "SLURM_JOB_NUM_NODES=4", "SLURM_JOB_CPUS_PER_NODE=8(x4)",
				"SLURM_MEM_PER_NODE=9999", "SLURM_UMASK=0077", "SRUN_DEBUG=5", "SLURM_SUBMIT_DIR=/old"),
			step: func(s Step) Step {
				s.OwnAllocation = false
				s.JobNodes = []string{"g1", "g2", "g3", "g4"}
				return s
			},
			want: with(ownAlloc, "SLURM_JOB_NODELIST", "g[1-4]", "SLURM_JOB_NUM_NODES", "4", "SLURM_NODELIST", "g[1-4]",
				"SLURM_JOB_CPUS_PER_NODE", "8(x4)", "SLURM_MEM_PER_NODE", "9999", "SLURM_UMASK", "0077", "SRUN_DEBUG", "5",
				"SLURM_SUBMIT_DIR", "/old", "SLURM_SUBMIT_HOST", "<unset>"),
		},
		"-E keeps the counts": {
			base: append(user, "SLURM_NNODES=4", "SLURM_NTASKS=32", "SLURM_NPROCS=32", "SLURM_TASKS_PER_NODE=8(x4)"),
			step: func(s Step) Step { s.PreserveEnv, s.OwnAllocation = true, false; return s },
			want: with(ownAlloc, "SLURM_NNODES", "4", "SLURM_NTASKS", "32", "SLURM_NPROCS", "32", "SLURM_TASKS_PER_NODE", "8(x4)",
				"SLURM_JOB_NUM_NODES", "<unset>", "SLURM_SUBMIT_DIR", "<unset>", "SLURM_SUBMIT_HOST", "<unset>"),
		},
		"options": {
			base: user,
			step: func(s Step) Step {
				s.CPUsPerTask, s.Distribution, s.CPUBind, s.Verbosity, s.SlurmdDebug = 2, "cyclic:block", "verbose,map_cpu:0,2*2", 2, 9
				s.Nice, s.OOMKillStep, s.Account, s.QOS, s.Reservation, s.Licenses = 10, true, "proj", "high", "maint", "fluent:2"
				s.TimeLimitMin, s.MemPerCPU = Infinite, 512
				return s
			},
			want: with(ownAlloc, "SLURM_CPUS_PER_TASK", "2", "SLURM_DISTRIBUTION", "cyclic:block",
				"SLURM_CPU_BIND", "verbose,map_cpu:0,2,2", "SLURM_CPU_BIND_TYPE", "map_cpu:", "SLURM_CPU_BIND_LIST", "0,2,2",
				"SLURM_CPU_BIND_VERBOSE", "verbose", "SRUN_DEBUG", "5", "SLURMD_DEBUG", "6", "SLURM_PRIO_PROCESS", "10",
				"SLURM_OOM_KILL_STEP", "1", "SLURM_JOB_ACCOUNT", "proj", "SLURM_JOB_QOS", "high",
				"SLURM_JOB_RESERVATION", "maint", "SLURM_JOB_LICENSES", "fluent:2",
				"SLURM_JOB_END_TIME", "32536000", "SLURM_MEM_PER_NODE", "<unset>", "SLURM_MEM_PER_CPU", "512"),
		},
		"default distribution with a task per node": {
			base: user,
			step: func(s Step) Step { s.TasksPerNode = []int{1, 1}; return s },
			want: with(ownAlloc, "SLURM_DISTRIBUTION", "cyclic", "SLURM_NTASKS", "2", "SLURM_NPROCS", "2",
				"SLURM_TASKS_PER_NODE", "1(x2)", "SLURM_STEP_TASKS_PER_NODE", "1(x2)", "SLURM_STEP_NUM_TASKS", "2"),
		},
		"cpu-bind quiet sets nothing, invalid sets nothing": {
			base: append(user, "SLURM_CPU_BIND=verbose,cores", "SLURM_CPU_BIND_TYPE=cores"),
			step: func(s Step) Step { s.CPUBind = "quiet"; return s },
			want: with(ownAlloc, "SLURM_CPU_BIND", "verbose,cores", "SLURM_CPU_BIND_TYPE", "cores"),
		},
		"user's MPI bootstrap is kept": {
			base: append(user, "HYDRA_BOOTSTRAP=ssh", "OMPI_MCA_plm_slurm_args=--mine"),
			step: func(s Step) Step { return s },
			want: with(ownAlloc, "HYDRA_BOOTSTRAP", "ssh", "HYDRA_LAUNCHER_EXTRA_ARGS", "<unset>", "OMPI_MCA_plm_slurm_args", "--mine"),
		},
		"22.05": {
			base: user,
			step: func(s Step) Step { s.Release = Slurm2205; return s },
			want: with(ownAlloc, "SLURMD_DEBUG", "<unset>", "SLURM_JOB_GROUP", "<unset>", "SLURM_MEM_PER_NODE", "<unset>",
				"SLURM_JOB_START_TIME", "<unset>", "SLURM_JOB_END_TIME", "<unset>", "SLURM_OOM_KILL_STEP", "<unset>",
				"OMPI_MCA_plm_slurm_args", "<unset>", "PRTE_MCA_plm_slurm_args", "<unset>", "HYDRA_BOOTSTRAP", "<unset>",
				"HYDRA_LAUNCHER_EXTRA_ARGS", "<unset>", "I_MPI_HYDRA_BOOTSTRAP", "<unset>",
				"I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "<unset>"),
		},
		"22.05 inside an allocation": {
			base: user,
			step: func(s Step) Step { s.Release, s.OwnAllocation = Slurm2205, false; return s },
			want: with(ownAlloc, "SLURMD_DEBUG", "<unset>", "SLURM_JOB_GROUP", "<unset>", "SLURM_MEM_PER_NODE", "<unset>",
				"SLURM_JOB_START_TIME", "<unset>", "SLURM_JOB_END_TIME", "<unset>", "SLURM_OOM_KILL_STEP", "<unset>",
				"OMPI_MCA_plm_slurm_args", "<unset>", "PRTE_MCA_plm_slurm_args", "<unset>", "HYDRA_BOOTSTRAP", "<unset>",
				"HYDRA_LAUNCHER_EXTRA_ARGS", "<unset>", "I_MPI_HYDRA_BOOTSTRAP", "<unset>",
				"I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "<unset>", "SLURM_CLUSTER_NAME", "<unset>",
				"SLURM_JOB_NUM_NODES", "<unset>", "SLURM_SUBMIT_DIR", "<unset>", "SLURM_SUBMIT_HOST", "<unset>",
				"SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0", "4(x2)"),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := slurmOnly(envMap(StepVars(tc.base, tc.step(two))))
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("StepVars (-want +got):\n%s", d)
			}
		})
	}
}

func TestTaskVars(t *testing.T) {
	inherited := []string{"CUDA_VISIBLE_DEVICES=0,1,2,3", "GPU_DEVICE_ORDINAL=0,1,2,3", "ROCR_VISIBLE_DEVICES=0,1,2,3",
		"ZE_AFFINITY_MASK=0,1,2,3", "SLURM_GPUS_ON_NODE=4", "SLURM_JOB_GPUS=0,1,2,3", "SLURM_CPUS_ON_NODE=8", "TMPDIR=/scratch"}
	gpus := func(onNode, step, devs string) map[string]string {
		m := map[string]string{"SLURM_GPUS_ON_NODE": onNode, "SLURM_STEP_GPUS": step, "CUDA_VISIBLE_DEVICES": devs,
			"GPU_DEVICE_ORDINAL": devs, "ROCR_VISIBLE_DEVICES": devs, "ZE_AFFINITY_MASK": devs}
		for k, v := range m {
			if v == "" {
				delete(m, k)
			}
		}
		return m
	}
	base := Task{ID: 9, Local: 1, NodeIndex: 2, NodeName: "g3", NodeTasks: []int{8, 9}}
	tests := map[string]struct {
		env  []string
		task func(Task) Task
		want map[string]string // GPU, binding and CPU variables only
	}{
		"step GPUs as they are": {
			env:  inherited,
			task: func(t Task) Task { t.StepGPUs = []int{3, 1}; return t },
			want: gpus("2", "1,3", "1,3"),
		},
		"step GPUs, confined devices count from 0": {
			env:  inherited,
			task: func(t Task) Task { t.StepGPUs, t.ConstrainDevices = []int{1, 3}, true; return t },
			want: gpus("2", "1,3", "0,1"),
		},
		"bound to one GPU": {
			env:  inherited,
			task: func(t Task) Task { t.StepGPUs, t.GPUs = []int{1, 3}, []int{3}; return t },
			want: gpus("2", "3", "3"),
		},
		"bound to one GPU, confined": {
			env:  inherited,
			task: func(t Task) Task { t.StepGPUs, t.GPUs, t.ConstrainDevices = []int{1, 3}, []int{3}, true; return t },
			want: gpus("2", "3", "1"),
		},
		"bound to none of the step's GPUs": {
			env:  inherited,
			task: func(t Task) Task { t.StepGPUs, t.GPUs = []int{1, 3}, []int{}; return t },
			want: gpus("2", "", ""),
		},
		"no GPUs clears the job's": {
			env:  inherited,
			task: func(t Task) Task { return t },
			want: map[string]string{},
		},
		"node CPUs and pid": {
			env:  nil,
			task: func(t Task) Task { t.CPUsOnNode, t.PID = 4, 4242; return t },
			want: map[string]string{"SLURM_CPUS_ON_NODE": "4", "SLURM_TASK_PID": "4242"},
		},
		"auto binding writes masks": {
			env:  []string{"SLURM_CPU_BIND_VERBOSE=verbose", "SLURM_CPU_BIND_TYPE=cores", "SLURM_CPU_BIND=verbose,cores", "SLURM_CPU_BIND_LIST="},
			task: func(t Task) Task { t.CPUBindList = "0x3,0xC"; return t },
			want: map[string]string{"SLURM_CPU_BIND": "verbose,mask_cpu:0x3,0xC", "SLURM_CPU_BIND_TYPE": "mask_cpu:",
				"SLURM_CPU_BIND_LIST": "0x3,0xC", "SLURM_CPU_BIND_VERBOSE": "verbose"},
		},
		"binding without request is quiet": {
			env:  nil,
			task: func(t Task) Task { t.CPUBindList = "0x1,0x2"; return t },
			want: map[string]string{"SLURM_CPU_BIND": "quiet,mask_cpu:0x1,0x2", "SLURM_CPU_BIND_TYPE": "mask_cpu:",
				"SLURM_CPU_BIND_LIST": "0x1,0x2", "SLURM_CPU_BIND_VERBOSE": "quiet"},
		},
		"map_cpu keeps its type": {
			env:  []string{"SLURM_CPU_BIND_VERBOSE=quiet", "SLURM_CPU_BIND_TYPE=map_cpu:", "SLURM_CPU_BIND=quiet,map_cpu:4,5", "SLURM_CPU_BIND_LIST=4,5"},
			task: func(t Task) Task { t.CPUBindList = "4,5"; return t },
			want: map[string]string{"SLURM_CPU_BIND": "quiet,map_cpu:4,5", "SLURM_CPU_BIND_TYPE": "map_cpu:",
				"SLURM_CPU_BIND_LIST": "4,5", "SLURM_CPU_BIND_VERBOSE": "quiet"},
		},
	}
	fixed := map[string]string{"SLURMD_NODENAME": "g3", "SLURM_NODEID": "2", "SLURM_PROCID": "9", "SLURM_LOCALID": "1",
		"SLURM_GTIDS": "8,9", "SLURM_TOPOLOGY_ADDR": "g3", "SLURM_TOPOLOGY_ADDR_PATTERN": "node"}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := envMap(TaskVars(tc.env, tc.task(base)))
			want := map[string]string{"SLURM_JOB_GPUS": "0,1,2,3", "SLURM_CPUS_ON_NODE": "8", "TMPDIR": "/scratch"}
			if tc.env == nil || tc.env[0] != inherited[0] {
				want = map[string]string{"TMPDIR": "/tmp"}
				for _, kv := range tc.env {
					k, v, _ := cutAny(kv, "=")
					want[k] = v
				}
			}
			for k, v := range fixed {
				want[k] = v
			}
			for k, v := range tc.want {
				want[k] = v
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("TaskVars (-want +got):\n%s", d)
			}
		})
	}
}

func TestTaskTopology(t *testing.T) {
	got := envMap(TaskVars(nil, Task{NodeName: "n1", TopologyAddr: "s0.s1.n1", TopologyPattern: "switch.switch.node"}))
	if got["SLURM_TOPOLOGY_ADDR"] != "s0.s1.n1" || got["SLURM_TOPOLOGY_ADDR_PATTERN"] != "switch.switch.node" {
		t.Errorf("topology: %v", got)
	}
}

func TestReleaseString(t *testing.T) {
	for r, want := range map[Release]string{0: "26.11", Slurm2205: "22.05", Slurm2405: "24.05"} {
		if got := r.String(); got != want {
			t.Errorf("Release(%d).String() = %q, want %q", r, got, want)
		}
	}
}

func TestFold(t *testing.T) {
	tests := map[string]struct {
		in   []int
		want string
	}{
		"one":       {[]int{2}, "2"},
		"fold tail": {[]int{5, 1, 1, 1}, "5,1(x3)"},
		"all equal": {[]int{4, 4}, "4(x2)"},
		"runs":      {[]int{2, 2, 1, 2}, "2(x2),1,2"},
		"none":      {nil, ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := fold(tc.in); got != tc.want {
				t.Errorf("fold(%v) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
