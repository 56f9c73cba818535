// Package jobopts parses the job description options that sbatch, srun and
// salloc share, with Slurm's rules: getopt_long's syntax and messages, the
// input environment variables (SBATCH_*, srun's SLURM_*, SALLOC_*),
// "#SBATCH" directives, and Slurm's precedence between them (command line
// over environment over directives). Each command has its own option table,
// in Slurm's order, built from one definition per option. The result is a
// plain Options value; JobDesc turns it into the slurmrestd v0.0.44 job
// description real sbatch would have sent.
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
	// Clusters is -M's list of clusters ("all" for every one).
	Clusters string
	WCKey    string
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

	// Step launch (srun). Fields srun fills from slurm.conf when not
	// given (--mpi, --wait, --threads, --kill-on-bad-exit...) stay unset.

	// Label is -l/--label: prefix each output line with its task number.
	Label bool
	// Unbuffered is -u/--unbuffered: forward task output without line
	// buffering (implied by --pty).
	Unbuffered bool
	// Overlap is --overlap: the step shares its resources (CPUs, memory,
	// GRES) with other steps.
	Overlap bool
	// HetGroup is srun's --het-group: the components of a heterogeneous
	// job to launch the step in ("0,2-3"; empty: the first).
	HetGroup string
	// Exact is --exact (also implied by srun's --exclusive): the step
	// gets only the resources it asks for, not whole nodes' CPUs.
	Exact bool
	// Whole is --whole: the step gets whole nodes of the allocation.
	Whole bool
	// KillOnBadExit is -K/--kill-on-bad-exit[=0|1]: 1 ends the step when a
	// task exits non-zero, 0 never does; unset follows KillOnBadExit in
	// slurm.conf.
	KillOnBadExit Maybe[int]
	// WaitSec is -W/--wait: seconds to wait after the first task exits
	// before ending the others (0: wait forever).
	WaitSec Maybe[int]
	// Relative is -r/--relative: run the step from this node index of the
	// allocation.
	Relative Maybe[int]
	// CPUBind is --cpu-bind as given (validated with srun's rules), with
	// the binding level srun derives from --threads-per-core, --hint,
	// --ntasks-per-core and --ntasks-per-socket appended ("threads",
	// "cores,verbose"...).
	CPUBind string
	// AccelBind is --accel-bind (any of g, n, v).
	AccelBind string
	// MPI is --mpi: "none", "pmi2" or "pmix" ("list" asks for the list of
	// types, see MPIList); empty means MpiDefault.
	MPI string
	// DisableStatus is -X/--disable-status: a single Ctrl-C forwards
	// SIGINT instead of printing the tasks' status.
	DisableStatus bool
	// QuitOnInterrupt is -q/--quit-on-interrupt: a single Ctrl-C ends
	// srun.
	QuitOnInterrupt bool
	// MultiProg is --multi-prog: the command is a configuration file
	// giving each task its own program.
	MultiProg bool
	// Pty is --pty: task zero runs in a pseudo terminal; PtyFD is the
	// optional terminal file descriptor ("--pty=fd").
	Pty   bool
	PtyFD string
	// Threads is -T/--threads: srun's fan-out when launching tasks.
	Threads Maybe[int]
	// SlurmdDebug is --slurmd-debug, as a Slurm log level (2 error ... 6
	// debug2), clamped to that range as srun does.
	SlurmdDebug Maybe[int]
	// JobID is --jobid (or SLURM_JOB_ID): run the step in this existing
	// job; ArrayTaskID is the array element of "--jobid=123_4".
	JobID       Maybe[uint32]
	ArrayTaskID Maybe[uint32]
	// AllocNodeList is the allocation's node list inherited through
	// SLURM_JOB_NODELIST.
	AllocNodeList string
	// TestOnly is --test-only: estimate when the job would start, run
	// nothing.
	TestOnly bool
	// PreserveEnv is -E/--preserve-env: tasks see the inherited
	// SLURM_JOB_NUM_NODES and SLURM_NTASKS rather than the step's counts.
	PreserveEnv bool
	// Prolog and Epilog are srun's --prolog/--epilog (run by srun itself);
	// TaskProlog and TaskEpilog run around each task on the nodes.
	Prolog, Epilog         string
	TaskProlog, TaskEpilog string
	// SendLibs is --send-libs[=yes|no].
	SendLibs Maybe[bool]
	// NoAllocate is -Z/--no-allocate (root only in Slurm): run on the
	// nodes of -w without an allocation.
	NoAllocate bool
	// ExternalLauncher is --external-launcher: the step is an MPI
	// launcher's daemons (mpirun started inside a job).
	ExternalLauncher bool
	// Interactive is srun's hidden --interactive (salloc's interactive
	// step).
	Interactive bool
	// MsgTimeout is --msg-timeout, in seconds; TreeWidth is --treewidth,
	// with "off" read as Slurm's 0xfffd.
	MsgTimeout Maybe[int]
	TreeWidth  Maybe[int]
	// WaitForChildren is --wait-for-children.
	WaitForChildren bool
	// GRESAllowTaskSharing is srun's --gres-flags=allow-task-sharing.
	GRESAllowTaskSharing bool
	// CmdName is the base name of the command srun runs; it names the job
	// and the step when --job-name is not given.
	CmdName string

	// Allocation (salloc).

	// Immediate is -I/--immediate[=secs] (srun and salloc): give up if
	// the resources are not available within that many seconds.
	Immediate Maybe[int]
	// Bell is --bell (true) or --no-bell (false); unset rings the bell
	// when the allocation took long.
	Bell Maybe[bool]
	// NoShell is --no-shell: salloc exits once the allocation is granted.
	NoShell bool
	// KillCommand is -K/--kill-command[=signal]: the signal number sent
	// to the command when the allocation ends (SIGTERM by default).
	KillCommand Maybe[int]

	// Messages are lines the command prints to standard error after its
	// name and carries on: Slurm's info() ("Ignoring --cpu-bind=rank...")
	// and error() messages that do not stop it ("error: Thread value
	// ...").
	Messages []string

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
	// PluginValues are the plugin options given, in order.
	PluginValues []PluginValue

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
