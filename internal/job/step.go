package job

import "time"

// BatchStep is the id of a job's batch step (SLURM_BATCH_SCRIPT), as
// scontrol and squeue -s name it: "12.batch".
const BatchStep uint32 = 0xFFFFFFFB

// A Step is a job step that srun started within a job's allocation. The
// controller keeps a step only while it runs: Slurm's accounting of ended
// steps belongs to the accounting database.
type Step struct {
	JobID ID     `json:"job_id"`
	ID    uint32 `json:"id"`
	Name  string `json:"name"`
	// UserID and UserName are who started it (the job's owner, or root).
	UserID   uint32 `json:"uid"`
	UserName string `json:"user"`
	// Nodes are the step's nodes, in the allocation's order; Tasks the
	// number of tasks on each; CPUs the CPUs of the job's allocation the
	// step holds on each (none for an --overlap step, which shares).
	Nodes       []string `json:"nodes"`
	Tasks       []uint32 `json:"tasks"`
	CPUs        []uint32 `json:"cpus"`
	CPUsPerTask uint32   `json:"cpus_per_task"`
	// GPUs are the device indices the step may use on each node.
	GPUs [][]int `json:"gpus,omitempty"`
	// MemMB is the memory the step may use on each node (MB; 0: no
	// limit): its --mem or --mem-per-cpu, else the job's there.
	MemMB   []uint64 `json:"mem_mb,omitempty"`
	Overlap bool     `json:"overlap,omitempty"`
	// TimeLimit is in minutes (Infinite: the job's).
	TimeLimit uint32    `json:"time_limit"`
	StartTime time.Time `json:"start_time"`
	// SrunHost and SrunPID say where the srun that runs it lives.
	SrunHost string   `json:"srun_host"`
	SrunPID  uint32   `json:"srun_pid"`
	Argv     []string `json:"argv"`
	// Distribution is SLURM_DISTRIBUTION's value.
	Distribution string `json:"distribution"`
	Partition    string `json:"partition"`
}

// NumTasks is the step's task count.
func (s *Step) NumTasks() uint32 {
	var n uint32
	for _, t := range s.Tasks {
		n += t
	}
	return n
}

// Usage is what a step's processes used, as the kernel reported it when
// they were reaped (getrusage): CPU times, the largest resident set, and
// bytes read and written from storage.
type Usage struct {
	UserCPU      time.Duration `json:"user_cpu,omitempty"`
	SystemCPU    time.Duration `json:"system_cpu,omitempty"`
	MaxRSS       uint64        `json:"max_rss,omitempty"`
	MaxDiskRead  uint64        `json:"max_disk_read,omitempty"`
	MaxDiskWrite uint64        `json:"max_disk_write,omitempty"`
	// MaxVMSize and MaxPages (major page faults) are known only from
	// samples taken while the processes ran.
	MaxVMSize uint64 `json:"max_vmsize,omitempty"`
	MaxPages  uint64 `json:"max_pages,omitempty"`
}
