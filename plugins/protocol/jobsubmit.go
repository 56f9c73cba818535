package protocol

// The job submission filter (kind "job_submit", version 1), as Slurm's
// job_submit plugins (job_submit/lua): the controller calls Submit for
// every new job before checking it, and Modify for every change a user
// asks for (scontrol update). The plugin may change the fields that
// JobDesc marks as changeable, and may reject the job with a message the
// user sees ("sbatch: error: <message>").
const (
	// JobSubmitMethodSubmit filters a new job (SubmitRequest,
	// SubmitReply).
	JobSubmitMethodSubmit = "Submit"
	// JobSubmitMethodModify filters a change to a pending job
	// (ModifyRequest, SubmitReply).
	JobSubmitMethodModify = "Modify"
)

// JobSubmitMethods lists them, for the service description.
var JobSubmitMethods = []string{JobSubmitMethodSubmit, JobSubmitMethodModify}

// JobDesc is a job description as job_submit/lua's job_desc shows it,
// with Slurm's field names. Zero values are "not given". A plugin may
// change the fields above the line; the others are there to read.
type JobDesc struct {
	Name        string `json:"name,omitempty"`
	Partition   string `json:"partition,omitempty"`
	Account     string `json:"account,omitempty"`
	QOS         string `json:"qos,omitempty"`
	Reservation string `json:"reservation,omitempty"`
	Comment     string `json:"comment,omitempty"`
	Dependency  string `json:"dependency,omitempty"`
	// TimeLimit and TimeMin are in minutes; 0xFFFFFFFF is UNLIMITED.
	TimeLimit    uint32 `json:"time_limit,omitempty"`
	TimeMin      uint32 `json:"time_min,omitempty"`
	Nice         int32  `json:"nice,omitempty"`
	MinNodes     uint32 `json:"min_nodes,omitempty"`
	MaxNodes     uint32 `json:"max_nodes,omitempty"`
	NumTasks     uint32 `json:"num_tasks,omitempty"`
	CPUsPerTask  uint32 `json:"cpus_per_task,omitempty"`
	TasksPerNode uint32 `json:"ntasks_per_node,omitempty"`
	// MemPerNode and MemPerCPU are in MB (--mem, --mem-per-cpu).
	MemPerNode uint64 `json:"pn_min_memory,omitempty"`
	MemPerCPU  uint64 `json:"mem_per_cpu,omitempty"`
	// Gres is the GRES request as written ("gpu:a100:2"); changing it
	// changes the job's GPUs.
	Gres      string `json:"gres,omitempty"`
	Exclusive bool   `json:"exclusive,omitempty"`
	Requeue   bool   `json:"requeue,omitempty"`

	// Read only.
	UserID      uint32   `json:"user_id"`
	GroupID     uint32   `json:"group_id"`
	UserName    string   `json:"user_name,omitempty"`
	WorkDir     string   `json:"work_dir,omitempty"`
	StdOut      string   `json:"std_out,omitempty"`
	StdErr      string   `json:"std_err,omitempty"`
	Script      string   `json:"script,omitempty"`
	Argv        []string `json:"argv,omitempty"`
	Environment []string `json:"environment,omitempty"`
	Array       string   `json:"array_inx,omitempty"`
	Interactive bool     `json:"interactive,omitempty"`
	SubmitHost  string   `json:"alloc_node,omitempty"`
}

// SubmitRequest is a new job.
type SubmitRequest struct {
	// Args are the plugin's arguments from the configuration.
	Args []string `json:"args,omitempty"`
	Job  JobDesc  `json:"job"`
	// SubmitUID is who submitted it (root may submit for others).
	SubmitUID uint32 `json:"submit_uid"`
}

// ModifyRequest is a change to a job: Job is the job as it stands,
// Update what the user asks to change (only the changed fields set).
type ModifyRequest struct {
	Args      []string `json:"args,omitempty"`
	JobID     uint32   `json:"job_id"`
	Job       JobDesc  `json:"job"`
	Update    JobDesc  `json:"update"`
	SubmitUID uint32   `json:"submit_uid"`
}

// SubmitReply is the filter's decision. Job, when set, replaces the job
// description (Submit) or the update (Modify): its changeable fields are
// applied, the others ignored. Reject refuses the job with Message and
// ErrorCode (a Slurm error number; 0: "Unspecified error"); otherwise
// Message, when set, is shown to the user as job_submit/lua's
// slurm.log_user does.
type SubmitReply struct {
	Job       *JobDesc `json:"job,omitempty"`
	Reject    bool     `json:"reject,omitempty"`
	Message   string   `json:"message,omitempty"`
	ErrorCode int32    `json:"error_code,omitempty"`
}
