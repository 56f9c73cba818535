package readmodel

import "strings"

// State is a job state as Slurm's commands see it: a base state in the low
// byte and flag bits above it (job_state in slurm.h). The commands compare
// and print whole values, so flags such as COMPLETING are kept rather than
// folded into the base state.
type State uint32

// Base states, in slurm.h order.
const (
	StatePending State = iota
	StateRunning
	StateSuspended
	StateCompleted
	StateCancelled
	StateFailed
	StateTimeout
	StateNodeFail
	StatePreempted
	StateBootFail
	StateDeadline
	StateOutOfMemory
	stateEnd
)

// State flags, with Slurm's bit positions.
const (
	FlagLaunchFailed State = 1 << 8
	FlagRequeue      State = 1 << 10
	FlagRequeueHold  State = 1 << 11
	FlagSpecialExit  State = 1 << 12
	FlagResizing     State = 1 << 13
	FlagConfiguring  State = 1 << 14
	FlagCompleting   State = 1 << 15
	FlagStopped      State = 1 << 16
	FlagReconfigFail State = 1 << 17
	FlagPowerUpNode  State = 1 << 18
	FlagRevoked      State = 1 << 19
	FlagRequeueFed   State = 1 << 20
	FlagResvDelHold  State = 1 << 21
	FlagSignaling    State = 1 << 22
	FlagStageOut     State = 1 << 23
	FlagExpediting   State = 1 << 24
)

const (
	stateBaseMask  State = 0xff
	stateFlagsMask State = ^stateBaseMask
)

var baseNames = [...]string{"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}
var baseCompact = [...]string{"PD", "R", "S", "CD", "CA", "F", "TO", "NF", "PR", "BF", "DL", "OOM"}

// stateFlag describes one printable state flag.
type stateFlag struct {
	flag          State
	name, compact string
	// wire is the spelling in the REST job_state list.
	wire string
	// parseOrder is the flag's rank in job_state_num's search.
	parseOrder int
}

// flagNames lists the flags job_state_string names, in the order it tests
// them: the first flag set wins over the base state.
var flagNames = []stateFlag{
	{FlagCompleting, "COMPLETING", "CG", "COMPLETING", 0},
	{FlagStageOut, "STAGE_OUT", "SO", "STAGE_OUT", 11},
	{FlagConfiguring, "CONFIGURING", "CF", "CONFIGURING", 1},
	{FlagExpediting, "EXPEDITING", "", "EXPEDITING", 2},
	{FlagResizing, "RESIZING", "RS", "RESIZING", 3},
	{FlagRequeue, "REQUEUED", "RQ", "REQUEUED", 5},
	{FlagRequeueFed, "REQUEUE_FED", "RF", "REQUEUE_FED", 6},
	{FlagRequeueHold, "REQUEUE_HOLD", "RH", "REQUEUE_HOLD", 7},
	{FlagSpecialExit, "SPECIAL_EXIT", "SE", "SPECIAL_EXIT", 10},
	{FlagStopped, "STOPPED", "ST", "STOPPED", 12},
	{FlagRevoked, "REVOKED", "RV", "REVOKED", 8},
	{FlagResvDelHold, "RESV_DEL_HOLD", "RD", "RESV_DEL_HOLD", 4},
	{FlagSignaling, "SIGNALING", "SI", "SIGNALING", 9},
}

// wireOnlyFlags are flags the REST API reports that job_state_string never
// prints (they do not change what squeue shows).
var wireOnlyFlags = map[string]State{
	"LAUNCH_FAILED": FlagLaunchFailed,
	"RECONFIG_FAIL": FlagReconfigFail,
	"POWER_UP_NODE": FlagPowerUpNode,
}

// Base returns the base state without flags.
func (s State) Base() State { return s & stateBaseMask }

// Flags returns the flag bits alone.
func (s State) Flags() State { return s & stateFlagsMask }

// String names the state as squeue's %T and scontrol's JobState= do
// (job_state_string): a flag such as COMPLETING takes precedence over the
// base state.
func (s State) String() string {
	for _, f := range flagNames {
		if s&f.flag != 0 {
			return f.name
		}
	}
	if b := s.Base(); b < stateEnd {
		return baseNames[b]
	}
	return "?"
}

// printsFlag reports a flag that job_state_string names before the base
// state.
func (s State) printsFlag() bool {
	for _, f := range flagNames {
		if s&f.flag != 0 {
			return true
		}
	}
	return false
}

// Compact names the state as squeue's %t does (job_state_string_compact).
// EXPEDITING has no compact spelling in Slurm and falls through to the base
// state there too.
func (s State) Compact() string {
	for _, f := range flagNames {
		if s&f.flag != 0 && f.compact != "" {
			return f.compact
		}
	}
	if b := s.Base(); b < stateEnd {
		return baseCompact[b]
	}
	return "?"
}

// IsPending reports a pending base state (IS_JOB_PENDING).
func (s State) IsPending() bool { return s.Base() == StatePending }

// IsRunning reports a running base state (IS_JOB_RUNNING).
func (s State) IsRunning() bool { return s.Base() == StateRunning }

// IsSuspended reports a suspended base state (IS_JOB_SUSPENDED).
func (s State) IsSuspended() bool { return s.Base() == StateSuspended }

// IsCompleting reports the COMPLETING flag (IS_JOB_COMPLETING).
func (s State) IsCompleting() bool { return s&FlagCompleting != 0 }

// IsStageOut reports the STAGE_OUT flag (IS_JOB_STAGE_OUT).
func (s State) IsStageOut() bool { return s&FlagStageOut != 0 }

// IsFinished reports a base state past SUSPENDED (IS_JOB_FINISHED): the job
// ended, whether or not it is still completing.
func (s State) IsFinished() bool { return s.Base() > StateSuspended }

// ParseState converts a state name, long or compact and in any case, as
// Slurm's job_state_num does: base states first, then the flags in Slurm's
// lookup order. It returns false for unknown names.
func ParseState(name string) (State, bool) {
	for i := range baseNames {
		if strings.EqualFold(name, baseNames[i]) || strings.EqualFold(name, baseCompact[i]) {
			return State(i), true
		}
	}
	for _, f := range flagsInParseOrder() {
		if strings.EqualFold(name, f.name) || (f.compact != "" && strings.EqualFold(name, f.compact)) {
			return f.flag, true
		}
		// EXPEDITING has no compact name, so job_state_string_compact
		// yields the base "PD" for it: already matched above.
	}
	return 0, false
}

// flagsInParseOrder returns flagNames in job_state_num's search order.
func flagsInParseOrder() []stateFlag {
	out := make([]stateFlag, len(flagNames))
	for _, f := range flagNames {
		out[f.parseOrder] = f
	}
	return out
}

// StateNames lists, lower-case, every name ParseState accepts in its long
// form, in the order Slurm's commands list them after "Valid job states
// include:".
func StateNames() []string {
	var names []string
	for _, n := range baseNames {
		names = append(names, strings.ToLower(n))
	}
	for _, f := range flagsInParseOrder() {
		names = append(names, strings.ToLower(f.name))
	}
	return names
}

// StateFromWire rebuilds a state from the REST job_state list (a base state
// followed by flags, as slurmrestd writes it). Unknown names are ignored.
func StateFromWire(items []string) State {
	var s State
	for _, it := range items {
		found := false
		for i, n := range baseNames {
			if it == n {
				s = s&stateFlagsMask | State(i)
				found = true
				break
			}
		}
		if found {
			continue
		}
		for _, f := range flagNames {
			if it == f.wire {
				s |= f.flag
				found = true
				break
			}
		}
		if !found {
			s |= wireOnlyFlags[it]
		}
	}
	return s
}
