package job

// State is a job's base state, with Slurm's spellings (JOB_PENDING...).
type State uint8

// Job states in slurm.h order.
const (
	Pending State = iota
	Running
	Suspended
	Completed
	Cancelled
	Failed
	Timeout
	NodeFail
	Preempted
	BootFail
	Deadline
	OutOfMemory
)

var stateNames = [...]string{"PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY"}
var stateShort = [...]string{"PD", "R", "S", "CD", "CA", "F", "TO", "NF", "PR", "BF", "DL", "OOM"}

// String returns the state as squeue %T and REST job_state print it.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "UNKNOWN"
}

// Short returns the compact code squeue %t prints.
func (s State) Short() string {
	if int(s) < len(stateShort) {
		return stateShort[s]
	}
	return "?"
}

// Terminal reports whether the job has finished for good.
func (s State) Terminal() bool { return s >= Completed }

// ParseState accepts a long or short state name, case-insensitively.
func ParseState(name string) (State, bool) {
	for i, n := range stateNames {
		if equalFold(n, name) || equalFold(stateShort[i], name) {
			return State(i), true
		}
	}
	return 0, false
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'a' <= x && x <= 'z' {
			x -= 'a' - 'A'
		}
		if 'a' <= y && y <= 'z' {
			y -= 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Reason is why a job pends or how it ended, with Slurm's names
// (job_state_reason strings as squeue %r prints them).
type Reason string

// Reasons Drover assigns.
const (
	ReasonNone                 Reason = "None"
	ReasonPriority             Reason = "Priority"
	ReasonResources            Reason = "Resources"
	ReasonPartitionTimeLimit   Reason = "PartitionTimeLimit"
	ReasonPartitionNodeLimit   Reason = "PartitionNodeLimit"
	ReasonPartitionDown        Reason = "PartitionDown"
	ReasonPartitionInactive    Reason = "PartitionInactive"
	ReasonReqNodeNotAvail      Reason = "ReqNodeNotAvail"
	ReasonReqNodeReserved      Reason = "ReqNodeNotAvail, May be reserved for other job"
	ReasonReservation          Reason = "Reservation"
	ReasonReservationDeleted   Reason = "ReservationDeleted"
	ReasonHeldUser             Reason = "JobHeldUser"
	ReasonHeldAdmin            Reason = "JobHeldAdmin"
	ReasonBeginTime            Reason = "BeginTime"
	ReasonDependency           Reason = "Dependency"
	ReasonDependencyNever      Reason = "DependencyNeverSatisfied"
	ReasonArrayTaskLimit       Reason = "JobArrayTaskLimit"
	ReasonNonZeroExitCode      Reason = "NonZeroExitCode"
	ReasonTimeLimit            Reason = "TimeLimit"
	ReasonNodeDown             Reason = "NodeDown"
	ReasonLaunchFailRequeue    Reason = "launch_failed_requeued_held"
	ReasonBadConstraints       Reason = "BadConstraints"
	ReasonJobLaunchFailure     Reason = "JobLaunchFailure"
	ReasonRaisedSignal         Reason = "RaisedSignal"
	ReasonWaitingForScheduling Reason = "WaitingForScheduling"
)
