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
	// Request is the client request that created the step
	// (droverapi.RequestIDHeader), named by UserID; TaskIDs (the global
	// task ids on each node) and Warnings are the rest of what it was
	// answered. A retry of the request is answered the same step. Kept
	// only for steps created under a request id.
	Request  string   `json:"request,omitempty"`
	TaskIDs  [][]int  `json:"task_ids,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
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
	// MaxGPUMem and MaxGPUUtil are the most GPU memory (bytes) and
	// utilization (percent, summed over the GPUs) the samples saw.
	MaxGPUMem  uint64 `json:"max_gpu_mem,omitempty"`
	MaxGPUUtil uint64 `json:"max_gpu_util,omitempty"`
}

// UsageStat is one measure over a step's tasks, as slurmdbd keeps a TRES
// of TRESUsageIn/Out: the largest and the smallest task's value, with
// the node and task that had them, and the sum over the tasks.
type UsageStat struct {
	Max     uint64 `json:"max"`
	Min     uint64 `json:"min"`
	Tot     uint64 `json:"tot"`
	MaxNode string `json:"max_node,omitempty"`
	MinNode string `json:"min_node,omitempty"`
	MaxTask uint32 `json:"max_task"`
	MinTask uint32 `json:"min_task"`
}

func (s *UsageStat) add(v uint64, node string, task uint32, first bool) {
	s.merge(UsageStat{Max: v, Min: v, Tot: v, MaxNode: node, MinNode: node, MaxTask: task, MinTask: task}, first)
}

func (s *UsageStat) merge(o UsageStat, first bool) {
	if first || o.Max > s.Max {
		s.Max, s.MaxNode, s.MaxTask = o.Max, o.MaxNode, o.MaxTask
	}
	if first || o.Min < s.Min {
		s.Min, s.MinNode, s.MinTask = o.Min, o.MinNode, o.MinTask
	}
	s.Tot += o.Tot
}

// UsageStats are a step's measures over its tasks: CPU time (user and
// system, in milliseconds, as Slurm counts the cpu TRES), resident and
// virtual memory and page faults (the largest each task showed), bytes
// read and written.
type UsageStats struct {
	Tasks  uint32    `json:"tasks"`
	CPU    UsageStat `json:"cpu"`
	RSS    UsageStat `json:"rss"`
	VMSize UsageStat `json:"vmsize"`
	Pages  UsageStat `json:"pages"`
	Read   UsageStat `json:"read"`
	Write  UsageStat `json:"write"`
	// GPUMem and GPUUtil are kept for steps that had GPUs.
	GPUMem  UsageStat `json:"gpu_mem,omitzero"`
	GPUUtil UsageStat `json:"gpu_util,omitzero"`
	GPUs    bool      `json:"gpus,omitempty"`
}

// AddTask counts one task's usage, on node as task.
func (s *UsageStats) AddTask(u Usage, node string, task uint32) {
	first := s.Tasks == 0
	s.Tasks++
	s.CPU.add(uint64((u.UserCPU + u.SystemCPU).Milliseconds()), node, task, first)
	s.RSS.add(u.MaxRSS, node, task, first)
	s.VMSize.add(u.MaxVMSize, node, task, first)
	s.Pages.add(u.MaxPages, node, task, first)
	s.Read.add(u.MaxDiskRead, node, task, first)
	s.Write.add(u.MaxDiskWrite, node, task, first)
	s.GPUMem.add(u.MaxGPUMem, node, task, first)
	s.GPUUtil.add(u.MaxGPUUtil, node, task, first)
	s.GPUs = s.GPUs || u.MaxGPUMem > 0 || u.MaxGPUUtil > 0
}

// Merge adds another set of tasks (another node's).
func (s *UsageStats) Merge(o UsageStats) {
	if o.Tasks == 0 {
		return
	}
	first := s.Tasks == 0
	s.Tasks += o.Tasks
	s.CPU.merge(o.CPU, first)
	s.RSS.merge(o.RSS, first)
	s.VMSize.merge(o.VMSize, first)
	s.Pages.merge(o.Pages, first)
	s.Read.merge(o.Read, first)
	s.Write.merge(o.Write, first)
	s.GPUMem.merge(o.GPUMem, first)
	s.GPUUtil.merge(o.GPUUtil, first)
	s.GPUs = s.GPUs || o.GPUs
}
