// Package proto is the part of srun's conversation with the controller
// that slurmrestd's API has no operation for: creating a job step, ending
// it, and listing steps (Slurm's REQUEST_JOB_STEP_CREATE,
// REQUEST_STEP_COMPLETE, REQUEST_JOB_STEP_INFO and REQUEST_JOB_STEP_STAT
// RPCs). JSON over HTTP
// under /drover/v1/, beside the v0.0.44 paths and authenticated as they
// are; errors come back in slurmrestd's error envelope.
package proto

import "time"

// Paths on the controller.
const (
	PathCreate = "/drover/v1/job/{job_id}/steps"
	PathEnd    = "/drover/v1/job/{job_id}/step/{step_id}/end"
	PathSignal = "/drover/v1/job/{job_id}/step/{step_id}/signal"
	PathList   = "/drover/v1/steps"
	// PathComplete releases an allocation (slurm_complete_job), with
	// ?exit_code=N.
	PathComplete = "/drover/v1/job/{job_id}/complete"
	// PathStat asks what a running job's steps use now, from their
	// nodes (sstat; REQUEST_JOB_STEP_STAT), with ?step=N or ?step=batch
	// for one step.
	PathStat = "/drover/v1/job/{job_id}/stat"
)

// BatchStep is the batch script's step id, as Slurm numbers it
// (SLURM_BATCH_SCRIPT).
const BatchStep uint32 = 0xfffffffb

// Stats answers PathStat: the job's running steps, the batch script's
// included.
type Stats struct {
	Steps []StepStat `json:"steps"`
}

// StepStat is one running step, node by node.
type StepStat struct {
	JobID  uint32     `json:"job_id"`
	StepID uint32     `json:"step_id"`
	Nodes  []NodeStat `json:"nodes"`
}

// NodeStat is what one node's tasks of the step use; Error says why the
// node did not answer.
type NodeStat struct {
	Node  string     `json:"node"`
	Tasks []TaskStat `json:"tasks,omitempty"`
	Error string     `json:"error,omitempty"`
}

// TaskStat is one task as its node measured it: CPU time and bytes read
// and written so far, the largest resident and virtual memory and page
// faults seen, and its live processes.
type TaskStat struct {
	Task      uint32        `json:"task"`
	Pids      []int         `json:"pids,omitempty"`
	UserCPU   time.Duration `json:"user_cpu"`
	SystemCPU time.Duration `json:"system_cpu"`
	RSS       uint64        `json:"rss"`
	VMSize    uint64        `json:"vmsize"`
	Pages     uint64        `json:"pages"`
	DiskRead  uint64        `json:"disk_read"`
	DiskWrite uint64        `json:"disk_write"`
	// GPUMem and GPUUtil are what its processes use on the step's GPUs
	// (none without GPUs or a GPU plugin that measures them).
	GPUMem  uint64 `json:"gpu_mem,omitempty"`
	GPUUtil uint64 `json:"gpu_util,omitempty"`
	GPUs    bool   `json:"gpus,omitempty"`
}

// CreateRequest asks for a step in a running job.
type CreateRequest struct {
	Name         string   `json:"name"`
	MinNodes     int      `json:"min_nodes,omitempty"`
	MaxNodes     int      `json:"max_nodes,omitempty"`
	Tasks        int      `json:"tasks,omitempty"`
	TasksPerNode int      `json:"tasks_per_node,omitempty"`
	CPUsPerTask  int      `json:"cpus_per_task,omitempty"`
	Distribution string   `json:"distribution,omitempty"`
	NodeList     []string `json:"node_list,omitempty"`
	Exclude      []string `json:"exclude,omitempty"`
	// Relative is -r (-1: not given).
	Relative   int      `json:"relative"`
	Arbitrary  []string `json:"arbitrary,omitempty"`
	Overcommit bool     `json:"overcommit,omitempty"`
	// NodesFromEnv and TasksFromEnv say -N and -n were inherited from the
	// job (SLURM_JOB_NUM_NODES, SLURM_NTASKS), which srun treats apart.
	NodesFromEnv bool   `json:"nodes_from_env,omitempty"`
	TasksFromEnv bool   `json:"tasks_from_env,omitempty"`
	Overlap      bool   `json:"overlap,omitempty"`
	Exact        bool   `json:"exact,omitempty"`
	GPUsPerNode  int    `json:"gpus_per_node,omitempty"`
	GPUsPerTask  int    `json:"gpus_per_task,omitempty"`
	MemPerNode   uint64 `json:"mem_per_node,omitempty"`
	MemPerCPU    uint64 `json:"mem_per_cpu,omitempty"`
	TimeLimit    uint32 `json:"time_limit,omitempty"`
	SrunAddr     string `json:"srun_addr"`
	// SrunCert is the SHA-256 (hex) of the certificate srun's port
	// presents under TLS; the step credential carries it to the nodes.
	SrunCert string   `json:"srun_cert,omitempty"`
	SrunHost string   `json:"srun_host"`
	SrunPID  uint32   `json:"srun_pid"`
	Argv     []string `json:"argv"`
	// HetStepID asks for the step id the same srun's step already has
	// in another component of the heterogeneous job.
	HetStepID *uint32 `json:"het_step_id,omitempty"`
}

// EndRequest is srun's report of a step's end (optional body of
// PathEnd): the highest exit code of its tasks, or the signal that ended
// one, and whether srun ended the step (a signal, --kill-on-bad-exit).
type EndRequest struct {
	ExitCode  int32 `json:"exit_code"`
	Signal    int32 `json:"signal,omitempty"`
	Cancelled bool  `json:"cancelled,omitempty"`
}

// Grant is a created step: its layout, where its nodes' daemons listen,
// its credential, and the job's side of the environment.
type Grant struct {
	JobID     uint32   `json:"job_id"`
	StepID    uint32   `json:"step_id"`
	Nodes     []string `json:"nodes"`
	NodeAddrs []string `json:"node_addrs"`
	Tasks     [][]int  `json:"tasks"`
	CPUs      []uint32 `json:"cpus"`
	GPUs      [][]int  `json:"gpus"`
	// MemMB is the step's memory limit on each node (MB, 0: none).
	MemMB        []uint64 `json:"mem_mb,omitempty"`
	Cred         string   `json:"cred"`
	Distribution string   `json:"distribution"`
	// Warnings are srun's lines about adjusted options ("can't run 2
	// processes on 3 nodes, setting nnodes to 2").
	Warnings []string `json:"warnings,omitempty"`
	// The job, for the step's environment.
	JobName        string   `json:"job_name"`
	Cluster        string   `json:"cluster"`
	Partition      string   `json:"partition"`
	Account        string   `json:"account"`
	QOS            string   `json:"qos"`
	JobNodes       []string `json:"job_nodes"`
	JobCPUsPerNode []uint32 `json:"job_cpus_per_node"`
	JobTasks       []uint32 `json:"job_tasks_per_node"`
	JobNumTasks    uint32   `json:"job_num_tasks"`
	UID            uint32   `json:"uid"`
	GID            uint32   `json:"gid"`
	User           string   `json:"user"`
	MemPerCPU      uint64   `json:"mem_per_cpu,omitempty"`
	MemPerNode     uint64   `json:"mem_per_node,omitempty"`
	TimeLimit      uint32   `json:"time_limit"`
	KillWait       int      `json:"kill_wait"`
}

// Step is a running step, as squeue -s and scontrol show step list it.
type Step struct {
	JobID        uint32    `json:"job_id"`
	StepID       uint32    `json:"step_id"`
	Name         string    `json:"name"`
	UserID       uint32    `json:"uid"`
	User         string    `json:"user"`
	Partition    string    `json:"partition"`
	Nodes        []string  `json:"nodes"`
	Tasks        []uint32  `json:"tasks"`
	CPUs         []uint32  `json:"cpus"`
	CPUsPerTask  uint32    `json:"cpus_per_task"`
	StartTime    time.Time `json:"start_time"`
	TimeLimit    uint32    `json:"time_limit"`
	SrunHost     string    `json:"srun_host"`
	SrunPID      uint32    `json:"srun_pid"`
	Distribution string    `json:"distribution"`
	Argv         []string  `json:"argv"`
}

// List is the answer to GET PathList.
type List struct {
	Steps []Step `json:"steps"`
}
