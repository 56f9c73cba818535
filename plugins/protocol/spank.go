package protocol

// The SPANK-like launch hooks (kind "spank", version 1). The stages are
// Slurm's, called in Slurm's order: in sbatch, srun and salloc ("local"
// and "allocator" contexts) init, init_post_opt, local_user_init (srun
// only) and exit; on a node ("remote") init, init_post_opt, user_init,
// then per task task_init_privileged, task_init, task_post_fork and
// task_exit, and exit.
const (
	StageInit               = "init"
	StageInitPostOpt        = "init_post_opt"
	StageLocalUserInit      = "local_user_init"
	StageUserInit           = "user_init"
	StageTaskInitPrivileged = "task_init_privileged"
	StageTaskInit           = "task_init"
	StageTaskPostFork       = "task_post_fork"
	StageTaskExit           = "task_exit"
	StageExit               = "exit"
)

// SpankStages lists every stage, in Slurm's order.
var SpankStages = []string{StageInit, StageInitPostOpt, StageLocalUserInit, StageUserInit,
	StageTaskInitPrivileged, StageTaskInit, StageTaskPostFork, StageTaskExit, StageExit}

// SPANK contexts (spank_context).
const (
	ContextLocal     = "local"     // srun
	ContextRemote    = "remote"    // the node daemon
	ContextAllocator = "allocator" // sbatch, salloc
)

// BatchStepID is Hook.StepID in a batch script's stages (Slurm's
// SLURM_BATCH_SCRIPT).
const BatchStepID uint32 = 0xFFFFFFFB

// Spank methods.
const (
	// SpankMethodOptions asks for the options the plugin adds to the
	// commands (OptionsRequest, OptionsReply).
	SpankMethodOptions = "Options"
	// SpankMethodHook runs one stage (Hook, HookReply).
	SpankMethodHook = "Hook"
)

// SpankMethods lists them, for the service description.
var SpankMethods = []string{SpankMethodOptions, SpankMethodHook}

// OptionsRequest carries the plugin's arguments from plugstack.conf.
type OptionsRequest struct {
	Args []string `json:"args,omitempty"`
}

// Option is a command-line option a plugin registers (struct
// spank_option): --Name[=ArgInfo], shown in --help with Usage; HasArg
// says whether it takes a value.
type Option struct {
	Name    string `json:"name"`
	ArgInfo string `json:"arginfo,omitempty"`
	Usage   string `json:"usage,omitempty"`
	HasArg  bool   `json:"has_arg,omitempty"`
}

// OptionsReply lists a plugin's options and the stages it implements
// (a command starts only the plugins that have stages in its context).
type OptionsReply struct {
	Options []Option `json:"options,omitempty"`
	Stages  []string `json:"stages,omitempty"`
	// OnlyWithOptions says the plugin has nothing to do for a job or
	// step that gave none of its options (a container plugin without
	// --container-image): its stages are skipped there, and a command
	// does not start it.
	OnlyWithOptions bool `json:"only_with_options,omitempty"`
}

// Hook is one stage's call: what spank_get_item would answer there.
// Task fields are set in the task stages only.
type Hook struct {
	Stage   string   `json:"stage"`
	Context string   `json:"context"`
	Args    []string `json:"args,omitempty"`
	// Options are the plugin's options the user gave (name to value;
	// "" for one without a value).
	Options map[string]string `json:"options,omitempty"`

	JobID    uint32 `json:"job_id,omitempty"`
	StepID   uint32 `json:"step_id,omitempty"`
	UID      uint32 `json:"uid,omitempty"`
	GID      uint32 `json:"gid,omitempty"`
	NodeList string `json:"node_list,omitempty"`
	// NodeAddrs are the addresses of NodeList's nodes, in order
	// (slurm.conf's NodeAddr, the name where none is set).
	NodeAddrs []string `json:"node_addrs,omitempty"`
	NodeID    int      `json:"node_id,omitempty"`
	NNodes    int      `json:"nnodes,omitempty"`
	NTasks    int      `json:"ntasks,omitempty"`
	Argv      []string `json:"argv,omitempty"`
	// Env is the job's environment (local stages) or the task's.
	Env []string `json:"env,omitempty"`

	// Cwd is the step's working folder; SpoolDir the node daemon's spool
	// folder (oci.conf's %m), where plugins may keep per-node state.
	Cwd      string `json:"cwd,omitempty"`
	SpoolDir string `json:"spool_dir,omitempty"`
	// Devices are the GRES device files the step holds on the node
	// ("/dev/nvidia3"); Cgroup is the step's cgroup on the node, relative
	// to the cgroup mount ("/drover/c/n1/job_7_step_0"), "" when the
	// node tracks processes without cgroups. Remote context only.
	Devices []string `json:"devices,omitempty"`
	Cgroup  string   `json:"cgroup,omitempty"`

	TaskID      int `json:"task_id,omitempty"`
	LocalTaskID int `json:"local_task_id,omitempty"`
	LocalTasks  int `json:"local_tasks,omitempty"`
	TaskPID     int `json:"task_pid,omitempty"`
	// ExitStatus is the task's wait status, in task_exit.
	ExitStatus int `json:"exit_status,omitempty"`
}

// EnvChange is one spank_setenv or spank_unsetenv.
type EnvChange struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
	// Overwrite replaces a value already set; Unset removes the name.
	Overwrite bool `json:"overwrite,omitempty"`
	Unset     bool `json:"unset,omitempty"`
}

// HookReply is a stage's result: environment changes for the job or
// task, and Error, which fails the stage with the plugin's message.
//
// Exec, from task_init in the remote context, replaces how the task is
// started: the node daemon runs Exec (a program and its arguments) in the
// task's place, as root, with the task's standard streams, cgroup and
// limits, and reports its exit status as the task's. A container
// plugin runs the task through an OCI runtime this way; Exec must itself
// start the task as its user. The last plugin to set Exec wins.
type HookReply struct {
	Env   []EnvChange `json:"env,omitempty"`
	Error string      `json:"error,omitempty"`
	Exec  []string    `json:"exec,omitempty"`
}
