// Package jobopts parses the job description options that sbatch (and
// later srun and salloc) share, with Slurm's rules: getopt_long's syntax and
// messages, the SBATCH_* input environment variables, "#SBATCH" directives,
// and Slurm's precedence between them (command line over environment over
// directives). The result is a plain Options value; JobDesc turns it into the
// slurmrestd v0.0.44 job description real sbatch would have sent.
//
// Behaviour is re-implemented from Slurm 25.11's documentation and observed
// output; messages and exit codes are Slurm's.
package jobopts

import (
	"time"

	"github.com/droverhq/drover/internal/timefmt"
)

// Maybe is a value that may be unset. Slurm tells "not given" from zero for
// many options (--nice=0 is not the same as no --nice), so those fields carry
// Set.
type Maybe[T any] struct {
	Val T
	Set bool
}

// Some returns a set Maybe.
func Some[T any](v T) Maybe[T] { return Maybe[T]{Val: v, Set: true} }

// Source says where an option's current value came from; later sources
// override earlier ones, in this order.
type Source int

// Sources, in increasing precedence.
const (
	FromDefault Source = iota
	FromScript
	FromEnv
	FromCommandLine
)

// String names the source for messages.
func (s Source) String() string {
	switch s {
	case FromScript:
		return "script"
	case FromEnv:
		return "environment"
	case FromCommandLine:
		return "command line"
	}
	return "default"
}

// Shared is the --exclusive/--oversubscribe choice (job_desc's shared).
type Shared int

// Shared values; the names are Slurm's REST spellings.
const (
	SharedUnset         Shared = iota
	SharedNone                 // --exclusive
	SharedOversubscribe        // --oversubscribe, --exclusive=oversubscribe
	SharedUser                 // --exclusive=user
	SharedMCS                  // --exclusive=mcs
	SharedTopo                 // --exclusive=topo
)

// String returns the REST spelling ("none", "oversubscribe"...), or "" when
// unset.
func (s Shared) String() string {
	switch s {
	case SharedNone:
		return "none"
	case SharedOversubscribe:
		return "oversubscribe"
	case SharedUser:
		return "user"
	case SharedMCS:
		return "mcs"
	case SharedTopo:
		return "topo"
	}
	return ""
}

// NodeCount is a --nodes request: Min nodes, at most Max (0: no maximum), or
// the explicit sizes of a list form ("1,4,8", "2-8:2"), kept in Sizes as
// Slurm's job_size_str.
type NodeCount struct {
	Min, Max int
	Sizes    string
}

// Signal is a --signal request: send Signal (a number or a name such as
// "USR1") Delay seconds before the time limit.
type Signal struct {
	Signal string
	Delay  int
	// Batch sends it to the batch shell only ("B:"); Reservation sends it
	// when the reservation ends ("R:").
	Batch, Reservation bool
}

// Options is the parsed job description of one command invocation. Strings
// are empty and Maybe fields unset when not given.
type Options struct {
	// Identity and accounting.
	JobName   Maybe[string]
	Account   string
	Partition string
	QOS       string
	// Reservation is --reservation.
	Reservation string
	Comment     string
	WCKey       string
	// UID and GID are --uid/--gid, resolved to numbers (root only).
	UID, GID    Maybe[uint32]
	MCSLabel    string
	Dependency  string
	Array       string
	MailType    Maybe[[]string]
	MailUser    string
	Priority    Maybe[uint32]
	Nice        Maybe[int]
	Hold        Maybe[bool]
	Requeue     Maybe[bool]
	Expedite    bool // --requeue=expedite
	NoKill      bool
	KillInvDep  Maybe[bool]
	Profile     []string
	Licenses    string
	Resources   string
	BurstBuffer string
	Container   string
	// ContainerID is --container-id.
	ContainerID string
	Context     string
	Extra       string
	Network     string
	AcctgFreq   string
	CPUFreq     string
	Signal      Maybe[Signal]
	OOMKillStep Maybe[int]
	SegmentSize Maybe[int]

	// Placement and resources.
	Nodes             Maybe[NodeCount]
	Ntasks            Maybe[int]
	NtasksPerNode     Maybe[int]
	NtasksPerSocket   Maybe[int]
	NtasksPerCore     Maybe[int]
	NtasksPerGPU      Maybe[int]
	NtasksPerTRES     Maybe[int]
	CPUsPerTask       Maybe[int]
	CPUsPerGPU        Maybe[int]
	MinCPUs           Maybe[int] // --mincpus
	SocketsPerNode    Maybe[int]
	CoresPerSocket    Maybe[int]
	ThreadsPerCore    Maybe[int]
	Mem               Maybe[uint64] // megabytes per node
	MemPerCPU         Maybe[uint64]
	MemPerGPU         Maybe[uint64]
	TmpDisk           Maybe[uint64]
	GRES              string // as sent in tres_per_node ("gres/gpu:2"), or "none"
	GRESFlags         []string
	GPUs              string
	GPUsPerNode       string
	GPUsPerSocket     string
	GPUsPerTask       string
	TRESPerTask       string
	TRESBind          string
	TRESFreq          string
	GPUBind, GPUFreq  string
	NodeList          string
	Exclude           string
	NodeFile          string
	Constraint        string
	Prefer            string
	ClusterConstraint string
	BatchFeatures     string
	Shared            Shared
	Contiguous        bool
	Overcommit        bool
	Reboot            bool
	SpreadJob         bool
	SpreadSegments    bool
	Consolidate       bool
	UseMinNodes       bool
	StepMgr           bool
	GRESEnforceBind   bool
	GRESDisableBind   bool
	CoreSpec          Maybe[int]
	ThreadSpec        Maybe[int]
	Switches          Maybe[int]
	SwitchWait        Maybe[int] // seconds
	Distribution      string     // normalised, e.g. "block:cyclic", "plane"
	PlaneSize         Maybe[int]
	DistPack          string // "pack" or "nopack"
	Hint              string
	MemBind           string
	WaitAllNodes      Maybe[int]

	// Time.
	TimeLimit Maybe[timefmt.Limit]
	TimeMin   Maybe[timefmt.Limit]
	Begin     Maybe[time.Time]
	Deadline  Maybe[time.Time]
	DelayBoot Maybe[int] // seconds

	// Files and environment.
	Chdir      string // absolute
	Output     string
	Error      string
	Input      string
	OpenMode   string // "APPEND" or "TRUNCATE"
	Export     Maybe[string]
	GetUserEnv bool
	Propagate  Maybe[string]

	// Command behaviour.
	Wrap      Maybe[string]
	Parsable  bool
	Wait      bool
	IgnorePBS bool
	Quiet     int
	Verbose   int

	// EnvVars are the variables the command sets in its own environment
	// while parsing (SLURM_HINT, SLURM_JOB_DEPENDENCY, SLURM_EXPORT_ENV),
	// which reach the job's environment like the caller's own.
	EnvVars []EnvVar

	// Warnings are messages the command prints as "warning: ..." (sbatch's
	// "can't run N processes on M nodes").
	Warnings []string

	// Sources records where each option given came from, by long option
	// name; options never given are absent.
	Sources map[string]Source

	// impliedTasks is the task count sbatch assumes for a fixed node count
	// without --ntasks (one per node); it only feeds minimum_cpus.
	impliedTasks int
}

// EnvVar is one NAME=value environment entry.
type EnvVar struct {
	Name, Value string
}

// IsSet reports whether the option with the given long name was given.
func (o *Options) IsSet(name string) bool {
	_, ok := o.Sources[name]
	return ok
}

// setByCLI reports whether the option was given on the command line or in
// a directive: Slurm counts both as "command line" when it resolves
// conflicts with environment variables.
func (o *Options) setByCLI(name string) bool {
	s, ok := o.Sources[name]
	return ok && s != FromEnv
}
