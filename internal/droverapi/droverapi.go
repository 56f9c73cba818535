// Package droverapi holds the paths and messages of Drover's own REST
// additions under /drover/v1 that the commands call and the controller
// serves, so that the commands need none of the controller's code to
// speak them.
package droverapi

// TokenPath is Drover's addition for `scontrol token` (slurmctld's
// REQUEST_AUTH_TOKEN has no slurmrestd operation): POST with the query
// parameters lifespan (seconds, or "infinite") and username; the answer
// is {"token": "..."} or slurmrestd's error envelope.
const TokenPath = "/drover/v1/token"

// TokenReply is the token endpoint's answer.
type TokenReply struct {
	Token string `json:"token"`
}

// DiagResetPath is Drover's addition for `sdiag -r` (slurmctld's
// REQUEST_STATS_INFO with STAT_COMMAND_RESET has no slurmrestd
// operation): POST with no body; the answer is slurmrestd's payload-less
// envelope, or its error envelope when the caller is not root, SlurmUser,
// an operator or an administrator.
const DiagResetPath = "/drover/v1/diag/reset"

// The headers by which replicated controllers and their clients find the
// leader and make retries safe.
const (
	// RequestIDHeader names one logical request across the retries a
	// client makes to one controller or another (at most 64 characters
	// of [A-Za-z0-9_-]). A submission or allocation that carries one is
	// applied once: a retry after an answer was lost gets the first
	// job's id.
	RequestIDHeader = "X-Drover-Request-Id"
	// StandbyHeader ("1") marks a 503 from a controller that is not the
	// leader and knows of none to forward to (during an election): the
	// client tries the next SlurmctldHost.
	StandbyHeader = "X-Drover-Standby"
	// LeaderHeader, on answers a follower forwarded, names the leading
	// controller (host:port), which a client may go to directly.
	LeaderHeader = "X-Drover-Leader"
)

// ControllersPath is Drover's addition for `scontrol ping` and sdiag's
// replication section: GET with no parameters. Every controller answers
// it itself, follower or leader, and while none leads: it pings each
// SlurmctldHost (ReplicaPath) and answers Controllers, in SlurmctldHost
// order. Callers authenticate as for any REST request.
const ControllersPath = "/drover/v1/controllers"

// ReplicaPath is how one controller asks another for its replica's
// state: GET, answered by the controller reached (never forwarded),
// with a Replica; only a request carrying a controller's daemon token
// (msgauth.Controller) is answered.
const ReplicaPath = "/drover/v1/replica"

// TakeoverPath is Drover's addition for `scontrol takeover` (slurmctld's
// REQUEST_TAKEOVER): POST with the query parameter controller (an index
// into the SlurmctldHost lines, 1 the first backup, or a SlurmctldHost
// name; 1 when absent). The leader hands leadership to that controller
// and answers slurmrestd's payload-less envelope once it leads, or the
// error envelope (the caller is not root, SlurmUser, an operator or an
// administrator; no such controller; a single controller).
const TakeoverPath = "/drover/v1/takeover"

// Controllers is ControllersPath's answer.
type Controllers struct {
	// Replicated is whether slurm.conf lists several SlurmctldHost
	// lines (and the controllers replicate their state).
	Replicated bool `json:"replicated"`
	// Controllers are the SlurmctldHost lines, in order.
	Controllers []Controller `json:"controllers"`
}

// Controller is one SlurmctldHost as the controller asked sees it.
type Controller struct {
	// Name is the SlurmctldHost name, Addr where it is reached
	// (host:port).
	Name string `json:"name"`
	Addr string `json:"addr"`
	// Mode is Slurm's name for the line's place: "primary", "backup"
	// (the second of two), "backupN".
	Mode string `json:"mode"`
	// Responding is whether it answered; LatencyMicros how long the ping
	// took (or until it failed).
	Responding    bool  `json:"responding"`
	LatencyMicros int64 `json:"latency"`
	// Leader is whether it leads now (as it says itself).
	Leader bool `json:"leader"`
	// Self marks the controller that answered.
	Self bool `json:"self,omitempty"`
	// Error says why it did not answer.
	Error string `json:"error,omitempty"`
	// Replica is its replica's state, when it answered and controllers
	// are replicated.
	Replica *Replica `json:"replica,omitempty"`
}

// Replica is a controller's replica of the replicated log (ReplicaPath's
// answer).
type Replica struct {
	// State is raft's: "Leader", "Follower", "Candidate" or "Shutdown".
	State string `json:"state"`
	// Leader is the leading controller's name as this one knows it.
	Leader       string `json:"leader"`
	Term         uint64 `json:"term"`
	LastIndex    uint64 `json:"last_index"`
	CommitIndex  uint64 `json:"commit_index"`
	AppliedIndex uint64 `json:"applied_index"`
	// LastContactSeconds is how long ago this replica last heard from
	// the leader; -1 on the leader itself, or before any contact.
	LastContactSeconds float64 `json:"last_contact"`
	// LeaderTerms counts the elections this replica won since it
	// started.
	LeaderTerms uint64 `json:"leader_terms"`
	// LeaderChanges counts the new leaders this replica learnt of
	// since it started.
	LeaderChanges uint64 `json:"leader_changes"`
	Voters        int    `json:"voters"`
}
