package protocol

// The MPI plugin (kind "mpi", version 1) runs on a node and serves the
// process-management interface of an MPI type the node daemon does not
// serve itself (pmix: a PMIx server through libpmix). The node daemon
// calls Setup before a step's tasks start, gives each task the
// environment Setup returned for its rank, relays the plugin's events
// (Next: fences to exchange with the step's other nodes through srun, and
// aborts) and answers fences with every node's data (Fence), then calls
// Teardown when the step ends.
const (
	// MPIMethodSetup prepares a step on the node (MPISetupRequest,
	// MPISetupReply).
	MPIMethodSetup = "Setup"
	// MPIMethodNext waits up to a second for the step's next event
	// (MPIStepRequest, MPIEvent).
	MPIMethodNext = "Next"
	// MPIMethodFence completes a fence with every node's data
	// (MPIFenceRequest, MPIReply).
	MPIMethodFence = "Fence"
	// MPIMethodTeardown forgets a step (MPIStepRequest, MPIReply).
	MPIMethodTeardown = "Teardown"
)

// MPIMethods lists them, for the service description.
var MPIMethods = []string{MPIMethodSetup, MPIMethodNext, MPIMethodFence, MPIMethodTeardown}

// MPIRequest is what every mpi call carries.
type MPIRequest struct {
	// Args are the plugin's arguments from the node's configuration.
	Args []string `json:"args,omitempty"`
	// Step names the step: its PMI job id ("JOB.STEP").
	Step string `json:"step"`
}

// MPISetupRequest describes a step to the node's plugin.
type MPISetupRequest struct {
	MPIRequest
	// UID and GID are the tasks' owner, whom the plugin lets connect.
	UID uint32 `json:"uid"`
	GID uint32 `json:"gid"`
	// Nodes are the step's nodes in order, NodeIndex this one's, and
	// Ranks each node's ranks (their union is 0..Size-1).
	Nodes     []string `json:"nodes"`
	NodeIndex int      `json:"node_index"`
	Ranks     [][]int  `json:"ranks"`
	Size      int      `json:"size"`
}

// MPISetupReply gives each local rank's extra environment.
type MPISetupReply struct {
	// Env maps a rank to the variables its task gets ("NAME=value").
	Env   map[int][]string `json:"env"`
	Error string           `json:"error,omitempty"`
}

// MPIStepRequest names a step.
type MPIStepRequest struct {
	MPIRequest
}

// MPI event kinds.
const (
	// MPIEventNone: nothing happened within the wait.
	MPIEventNone = ""
	// MPIEventFence: the node's tasks entered fence Epoch; Data is what
	// the node contributes.
	MPIEventFence = "fence"
	// MPIEventAbort: Rank aborted the step with Code and Message.
	MPIEventAbort = "abort"
)

// MPIEvent is what the plugin reports of a step.
type MPIEvent struct {
	Kind    string `json:"kind,omitempty"`
	Epoch   int32  `json:"epoch,omitempty"`
	Data    []byte `json:"data,omitempty"`
	Rank    int    `json:"rank,omitempty"`
	Code    int    `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// MPIFenceRequest completes fence Epoch with every node's data, in node
// order, one after the other.
type MPIFenceRequest struct {
	MPIRequest
	Epoch int32  `json:"epoch"`
	Data  []byte `json:"data"`
}

// MPIReply is the answer of calls that return nothing else.
type MPIReply struct {
	Error string `json:"error,omitempty"`
}
