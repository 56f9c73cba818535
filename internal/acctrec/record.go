// Package acctrec holds the records of job accounting as the accounting
// store (internal/acctdb) keeps them and the controller's state queues
// them for it: runs, steps, nodes' usage and nodes' events. It does no
// I/O, so that the state machine can hold records without linking the
// SQL drivers.
package acctrec

import (
	"time"

	"github.com/droverhq/drover/internal/job"
)

// Step ids of the steps that are not srun's, as Slurm numbers them.
const (
	StepBatch  uint32 = 0xfffffffb // SLURM_BATCH_SCRIPT
	StepExtern uint32 = 0xfffffffc // SLURM_EXTERN_CONT
)

// NoTask is an array task id that is not one: the job is no array's, or
// its record stands for the array's tasks not yet split off.
const NoTask uint32 = 0xfffffffe

// Job is one run of a job: a requeued job has a record for each run.
type Job struct {
	Cluster string `json:"cluster"`
	JobID   uint32 `json:"job_id"`
	// Run is the job's restart count when this run began.
	Run         uint32 `json:"run"`
	ArrayJobID  uint32 `json:"array_job_id,omitempty"`
	ArrayTaskID uint32 `json:"array_task_id"`
	// ArrayTasks are the tasks a pending array record stands for, as
	// Slurm prints them ("2-9%2").
	ArrayTasks string `json:"array_tasks,omitempty"`
	// HetJobID and HetJobOffset place a heterogeneous job's component
	// (HetJobID 0: none).
	HetJobID     uint32 `json:"het_job_id,omitempty"`
	HetJobOffset uint32 `json:"het_job_offset,omitempty"`

	Name        string `json:"name"`
	User        string `json:"user"`
	UID         uint32 `json:"uid"`
	Group       string `json:"group"`
	GID         uint32 `json:"gid"`
	Account     string `json:"account"`
	QOS         string `json:"qos"`
	Partition   string `json:"partition"`
	Reservation string `json:"reservation,omitempty"`

	// Nodes is the allocation's host list ("n[1-4]"), empty until it
	// starts.
	Nodes     string `json:"nodes,omitempty"`
	NodeCount uint32 `json:"node_count"`
	AllocCPUs uint32 `json:"alloc_cpus"`
	ReqCPUs   uint32 `json:"req_cpus"`
	// ReqMemMB is the memory asked, per CPU when ReqMemPerCPU.
	ReqMemMB     uint64 `json:"req_mem_mb,omitempty"`
	ReqMemPerCPU bool   `json:"req_mem_per_cpu,omitempty"`
	ReqTRES      string `json:"req_tres,omitempty"`
	AllocTRES    string `json:"alloc_tres,omitempty"`

	Submit   time.Time `json:"submit"`
	Eligible time.Time `json:"eligible,omitzero"`
	Start    time.Time `json:"start,omitzero"`
	End      time.Time `json:"end,omitzero"`
	// TimeLimit is in minutes (job.Infinite: none).
	TimeLimit uint32 `json:"time_limit"`
	Priority  uint32 `json:"priority"`

	// State is the run's state as Slurm names it ("COMPLETED",
	// "NODE_FAIL", "REQUEUED"), Reason why it waits or ended.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// KilledBy is the uid that cancelled it (-1: none).
	KilledBy        int64 `json:"killed_by"`
	ExitCode        int32 `json:"exit_code"`
	Signal          int32 `json:"signal"`
	DerivedExitCode int32 `json:"derived_exit_code"`
	DerivedSignal   int32 `json:"derived_signal"`

	WorkDir    string `json:"work_dir,omitempty"`
	SubmitLine string `json:"submit_line,omitempty"`
	StdOut     string `json:"stdout,omitempty"`
	StdErr     string `json:"stderr,omitempty"`
	StdIn      string `json:"stdin,omitempty"`
}

// Step is one step of one run of a job: the batch script, srun's steps.
type Step struct {
	Cluster   string    `json:"cluster"`
	JobID     uint32    `json:"job_id"`
	Run       uint32    `json:"run"`
	StepID    uint32    `json:"step_id"`
	Name      string    `json:"name"`
	Nodes     string    `json:"nodes,omitempty"`
	NodeCount uint32    `json:"node_count"`
	Tasks     uint32    `json:"tasks"`
	CPUs      uint32    `json:"cpus"`
	AllocTRES string    `json:"alloc_tres,omitempty"`
	Start     time.Time `json:"start,omitzero"`
	End       time.Time `json:"end,omitzero"`
	State     string    `json:"state"`
	ExitCode  int32     `json:"exit_code"`
	Signal    int32     `json:"signal"`
	Usage     Usage     `json:"usage,omitzero"`
}

// Usage is what a step's processes used, from the node daemons.
type Usage struct {
	UserCPU        time.Duration `json:"user_cpu,omitempty"`
	SystemCPU      time.Duration `json:"system_cpu,omitempty"`
	MaxRSS         uint64        `json:"max_rss,omitempty"`
	MaxRSSNode     string        `json:"max_rss_node,omitempty"`
	MaxRSSTask     uint32        `json:"max_rss_task,omitempty"`
	AveRSS         uint64        `json:"ave_rss,omitempty"`
	MaxVMSize      uint64        `json:"max_vmsize,omitempty"`
	MaxPages       uint64        `json:"max_pages,omitempty"`
	MaxDiskRead    uint64        `json:"max_disk_read,omitempty"`
	MaxDiskWrite   uint64        `json:"max_disk_write,omitempty"`
	ConsumedEnergy uint64        `json:"consumed_energy,omitempty"`
	// Stats are the measures over the step's tasks (what the figures
	// above sum up), with the nodes and tasks of the extremes.
	Stats job.UsageStats `json:"stats,omitzero"`
}

// NodeUsage is what one node's tasks of a step used, as that node
// reported it; a step's usage is its nodes' together (Steps).
type NodeUsage struct {
	Cluster string `json:"cluster"`
	JobID   uint32 `json:"job_id"`
	Run     uint32 `json:"run"`
	StepID  uint32 `json:"step_id"`
	Node    string `json:"node"`
	Tasks   uint32 `json:"tasks"`
	// Usage's MaxRSSTask is the task of the largest resident set, AveRSS
	// the node's tasks' average.
	Usage Usage `json:"usage"`
}

// Event is a period a node was out of service (DOWN or DRAIN), as
// slurmdbd's event table keeps them: End is zero while it lasts. CPUs
// is what the node had, for the time sreport counts as Down.
type Event struct {
	Cluster string    `json:"cluster"`
	Node    string    `json:"node"`
	Start   time.Time `json:"start"`
	End     time.Time `json:"end,omitzero"`
	State   string    `json:"state"`
	Reason  string    `json:"reason,omitempty"`
	CPUs    uint32    `json:"cpus"`
}

// Batch is what one write puts in the store.
type Batch struct {
	Jobs   []Job
	Steps  []Step
	Usage  []NodeUsage
	Events []Event
}

// TotalCPU is the user and system CPU time together.
func (u Usage) TotalCPU() time.Duration { return u.UserCPU + u.SystemCPU }
