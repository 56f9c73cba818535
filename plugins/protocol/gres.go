package protocol

import "github.com/droverhq/drover/gres"

// The GRES plugin (kind "gres", version 1) runs on a node, for one GRES
// name (gpu): it finds the node's devices, tells the node daemon how to
// set up a step's tasks on the devices they were given, and watches the
// devices' health. Choosing devices for a job or step stays with the
// controller, as in Slurm (gres_select runs in slurmctld, not in the
// plugin): it uses the topology the plugin reports (NVLinks, near CPUs)
// for every candidate placement of every scheduling cycle, far too often
// for a call to another process.
//
// Every request carries the plugin's arguments, so that a plugin started
// again after a crash can set itself up from whichever call comes first.
const (
	// GresMethodDiscover lists the devices (DiscoverRequest,
	// DiscoverReply).
	GresMethodDiscover = "Discover"
	// GresMethodPrepare sets up one step on the node (PrepareRequest,
	// PrepareReply).
	GresMethodPrepare = "Prepare"
	// GresMethodHealth returns the critical events seen since the last
	// call (HealthRequest, HealthReply).
	GresMethodHealth = "Health"
	// GresMethodUsage measures what processes use on devices
	// (UsageRequest, UsageReply), for job accounting's gres/gpumem and
	// gres/gpuutil (Slurm's acct_gather_gpu). Added within version 1: a
	// plugin without it answers with an unknown-method error, and the
	// node daemon then records no GPU usage.
	GresMethodUsage = "Usage"
)

// GresMethods lists them, for the service description.
var GresMethods = []string{GresMethodDiscover, GresMethodPrepare, GresMethodHealth, GresMethodUsage}

// GresRequest is what every gres call carries.
type GresRequest struct {
	// Args are the plugin's arguments from the node's configuration.
	Args []string `json:"args,omitempty"`
	// Node is the node's name.
	Node string `json:"node,omitempty"`
}

// DiscoverRequest asks for the node's devices.
type DiscoverRequest struct {
	GresRequest
}

// DiscoverReply lists the devices found, in device index order.
type DiscoverReply struct {
	// Source says where they come from ("nvml", "mock:dgxa100").
	Source  string        `json:"source"`
	Devices []gres.Device `json:"devices"`
	// Lost are the indices of devices present but unusable (fallen off
	// the bus): the node reports fewer devices and is drained for it.
	Lost []int `json:"lost,omitempty"`
}

// PrepareTask is one of the step's tasks on the node.
type PrepareTask struct {
	GlobalID int `json:"global_id"`
	LocalID  int `json:"local_id"`
	// GPUs are the devices the task is bound to (--gpu-bind,
	// --gpus-per-task); nil: all of StepGPUs.
	GPUs []int `json:"gpus,omitempty"`
}

// PrepareRequest describes a step about to start on the node.
type PrepareRequest struct {
	GresRequest
	JobID  uint32 `json:"job_id"`
	StepID uint32 `json:"step_id"`
	UID    uint32 `json:"uid"`
	// StepGPUs are the device indices the step holds on the node.
	StepGPUs []int `json:"step_gpus,omitempty"`
	// Tasks are the step's tasks on the node, by local id.
	Tasks []PrepareTask `json:"tasks,omitempty"`
	// ConstrainDevices is cgroup.conf's ConstrainDevices=yes.
	ConstrainDevices bool `json:"constrain_devices,omitempty"`
	// Env is the step's environment as the tasks would get it, Slurm's
	// GPU variables included, so that the plugin can leave alone what
	// the user set.
	Env []string `json:"env,omitempty"`
}

// PrepareReply is the plugin's part of the step's set-up.
type PrepareReply struct {
	// Env changes apply to every task, after Drover's own GPU
	// variables; TaskEnv[i] to Tasks[i] only, after Env.
	Env     []EnvChange   `json:"env,omitempty"`
	TaskEnv [][]EnvChange `json:"task_env,omitempty"`
	// Deny are device files the step's tasks must not open: with
	// ConstrainDevices, the node's devices the step was not given.
	Deny []string `json:"deny,omitempty"`
	// Error fails the step with the plugin's message.
	Error string `json:"error,omitempty"`
}

// UsageRequest asks what the processes Pids use on the devices Devices
// (indices) now.
type UsageRequest struct {
	GresRequest
	Devices []int `json:"devices"`
	Pids    []int `json:"pids"`
}

// UsageReply is each of the processes' memory on each device it uses,
// and how busy each device is.
type UsageReply struct {
	Processes []ProcessUsage `json:"processes,omitempty"`
	Devices   []DeviceUsage  `json:"devices,omitempty"`
}

// ProcessUsage is one process on one device: its device memory (bytes).
type ProcessUsage struct {
	Device int    `json:"device"`
	Pid    int    `json:"pid"`
	Memory uint64 `json:"memory"`
}

// DeviceUsage is how busy a device is: the percentage of the last sample
// period in which a kernel ran (NVML's utilization rate).
type DeviceUsage struct {
	Index       int    `json:"index"`
	Utilization uint32 `json:"utilization"`
}

// HealthRequest asks for news of the devices.
type HealthRequest struct {
	GresRequest
}

// HealthReply lists the critical events since the last call. Error says
// the plugin cannot watch any more (the driver went away): the node
// daemon logs it and goes on without health checks.
type HealthReply struct {
	Events []gres.HealthEvent `json:"events,omitempty"`
	Error  string             `json:"error,omitempty"`
}
