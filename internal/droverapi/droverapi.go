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
