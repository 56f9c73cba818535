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
