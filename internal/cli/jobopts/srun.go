package jobopts

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// NewSrun returns a parser with srun's option table (Slurm 25.11's), filling
// a fresh Options. srun reads its input environment variables first
// (ParseEnv), then its command line (ParseArgs, which returns the command to
// run), then checks the whole (Finish), as srun's
// initialize_and_process_args does.
func NewSrun(cfg Config) *Parser {
	return newParser(cfg, cmdSrun, srunOptions(), srunEnv())
}

// srunOptionNames are srun's options in slurm_opt.c's table order (the
// order getopt lists ambiguous abbreviations in), with the
// environment-only entries (alloc-nodelist, switch-req, switch-wait) where
// Slurm keeps them.
var srunOptionNames = []string{
	"accel-bind", "account", "acctg-freq", "alloc-nodelist", "autocomplete",
	"bcast", "bcast-exclude", "begin", "bb", "bbf", "cluster-constraint",
	"chdir", "cluster", "clusters", "comment", "compress",
	"consolidate-segments", "container", "container-id", "context",
	"contiguous", "constraint", "core-spec", "cores-per-socket", "cpu-bind",
	"cpu_bind", "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline",
	"debugger-test", "delay-boot", "dependency", "disable-status",
	"distribution", "epilog", "error", "exact", "exclude", "exclusive",
	"export", "external-launcher", "extra", "extra-node-info", "gpu-bind",
	"gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task",
	"gres", "gres-flags", "help", "het-group", "hint", "hold", "immediate",
	"input", "interactive", "jobid", "job-name", "kill-on-bad-exit", "label",
	"licenses", "mail-type", "mail-user", "threads", "mcs-label", "mem",
	"mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "mpi",
	"msg-timeout", "multi-prog", "network", "nice", "no-allocate", "no-kill",
	"nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core",
	"ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket",
	"ntasks-per-tres", "oom-kill-step", "open-mode", "output", "overcommit",
	"overlap", "oversubscribe", "pack-group", "partition", "prefer",
	"preserve-env", "priority", "profile", "prolog", "propagate", "pty", "qos",
	"quiet", "quit-on-interrupt", "reboot", "relative", "resources",
	"reservation", "resv-ports", "segment", "send-libs", "signal",
	"slurmd-debug", "sockets-per-node", "spread-job", "spread-segments",
	"stepmgr", "switch-req", "switch-wait", "switches", "task-epilog",
	"task-prolog", "tasks-per-node", "test-only", "thread-spec",
	"threads-per-core", "time", "time-min", "tmp", "treewidth", "tres-bind",
	"tres-per-task", "unbuffered", "use-min-nodes", "verbose", "version",
	"usage", "wait", "wait-for-children", "wckey", "whole", "x11",
}

func srunOptions() []*optDef {
	return pickOptions(srunOptionNames, sbatchOptions(), allocOptions(), srunOnlyOptions())
}

// srunMaxThreads is SRUN_MAX_THREADS, the --threads value srun warns above.
const srunMaxThreads = 60

// srunOnlyOptions are the options only srun has, and srun's own meaning of
// the ones it shares a name with (-W/--wait, --test-only).
func srunOnlyOptions() []*optDef {
	cpuBind := strOpt("cpu-bind", 0, "type", "Bind tasks to CPUs", func(o *Options) *string { return &o.CPUBind })
	hide := func(d *optDef) *optDef {
		d.hidden = true
		return d
	}
	return []*optDef{
		{
			spec:    spec{long: "accel-bind", arg: requiredArgument, id: "accel-bind"},
			argName: "type", usage: "bind tasks to accelerators (g, n, v)",
			set: func(p *Parser, v string, _ bool) error {
				if !strings.ContainsAny(v, "vgn") {
					return optErrorf("Invalid --accel-bind specification")
				}
				p.opts.AccelBind = v
				return nil
			},
			reset: func(o *Options) { o.AccelBind = "" },
		},
		{
			// SLURM_JOB_NODELIST: the allocation srun runs in.
			spec: spec{id: "alloc-nodelist", arg: requiredArgument},
			set: func(p *Parser, v string, _ bool) error {
				p.opts.AllocNodeList = v
				return nil
			},
			reset: func(o *Options) { o.AllocNodeList = "" },
		},
		unsupported("bcast", 0, optionalArgument, "Copy executable file to compute nodes"),
		unsupported("bcast-exclude", 0, requiredArgument, "Shared object directory paths to exclude"),
		unsupported("compress", 0, optionalArgument, "data compression library used with --bcast"),
		cpuBind,
		alias(cpuBind, "cpu_bind"),
		hide(unsupported("debugger-test", 0, noArgument, "parallel debugger test")),
		flagOpt("disable-status", 'X', "Disable Ctrl-C status feature", func(o *Options) *bool { return &o.DisableStatus }),
		strOpt("epilog", 0, "program", "run \"program\" after launching job step", func(o *Options) *string { return &o.Epilog }),
		flagOpt("exact", 0, "use only the resources requested for the step", func(o *Options) *bool { return &o.Exact }),
		{
			spec:  spec{long: "external-launcher", arg: optionalArgument, id: "external-launcher"},
			usage: "run an MPI launcher's daemons as the step",
			set: func(p *Parser, _ string, _ bool) error {
				p.opts.ExternalLauncher = true
				return nil
			},
			reset: func(o *Options) { o.ExternalLauncher = false },
		},
		strOpt("het-group", 0, "value", "hetjob component allocation(s) in which to launch application", func(o *Options) *string { return &o.HetGroup }),
		hide(flagOpt("interactive", 0, "interactive step", func(o *Options) *bool { return &o.Interactive })),
		{
			spec:    spec{long: "jobid", arg: requiredArgument, id: "jobid"},
			argName: "id", usage: "run under already allocated job",
			set:   setJobID,
			reset: func(o *Options) { o.JobID, o.ArrayTaskID = Maybe[uint32]{}, Maybe[uint32]{} },
		},
		{
			spec:    spec{long: "kill-on-bad-exit", short: 'K', arg: optionalArgument, id: "kill-on-bad-exit"},
			argName: "0|1", usage: "kill the job if any task terminates with a non-zero exit code",
			set: func(p *Parser, v string, has bool) error {
				if !has {
					p.opts.KillOnBadExit = Some(1)
					return nil
				}
				n, err := parseInt("--kill-on-bad-exit", v, false)
				if err != nil {
					return err
				}
				p.opts.KillOnBadExit = Some(n)
				return nil
			},
			reset: func(o *Options) { o.KillOnBadExit = Maybe[int]{} },
		},
		flagOpt("label", 'l', "prepend task number to lines of stdout/err", func(o *Options) *bool { return &o.Label }),
		{
			spec:    spec{long: "threads", short: 'T', arg: requiredArgument, id: "threads"},
			argName: "threads", usage: "set srun launch fanout",
			set: func(p *Parser, v string, _ bool) error {
				n, err := parseInt("--threads", v, true)
				if err != nil {
					return err
				}
				if n > srunMaxThreads {
					p.opts.Messages = append(p.opts.Messages, "error: Thread value --threads="+strconv.Itoa(n)+
						" exceeds recommended limit of "+strconv.Itoa(srunMaxThreads))
				}
				p.opts.Threads = Some(n)
				return nil
			},
			reset: func(o *Options) { o.Threads = Maybe[int]{} },
		},
		strOpt("mpi", 0, "type", "type of MPI being used", func(o *Options) *string { return &o.MPI }),
		hide(intOpt("msg-timeout", 0, "secs", "message timeout", true, func(o *Options) *Maybe[int] { return &o.MsgTimeout })),
		flagOpt("multi-prog", 0, "if set the program name specified is the configuration specification for multiple programs", func(o *Options) *bool { return &o.MultiProg }),
		flagOpt("no-allocate", 'Z', "don't allocate nodes (must supply -w)", func(o *Options) *bool { return &o.NoAllocate }),
		{
			spec:  spec{long: "overlap", arg: optionalArgument, id: "overlap"},
			usage: "Allow other steps to overlap this step",
			set: func(p *Parser, _ string, _ bool) error {
				p.opts.Overlap = true
				return nil
			},
			reset: func(o *Options) { o.Overlap = false },
		},
		// --pack-group is the older spelling of --het-group.
		func() *optDef {
			d := strOpt("pack-group", 0, "value", "hetjob component allocation(s) in which to launch application", func(o *Options) *string { return &o.HetGroup })
			d.id = "het-group"
			d.hidden = true
			return d
		}(),
		flagOpt("preserve-env", 'E', "env vars for node and task counts override command-line flags", func(o *Options) *bool { return &o.PreserveEnv }),
		strOpt("prolog", 0, "program", "run \"program\" before launching job step", func(o *Options) *string { return &o.Prolog }),
		{
			spec:    spec{long: "pty", arg: optionalArgument, id: "pty"},
			argName: "fd", usage: "run task zero in pseudo terminal",
			set: func(p *Parser, v string, has bool) error {
				p.opts.Pty, p.opts.PtyFD = true, ""
				if has {
					p.opts.PtyFD = v
				}
				return nil
			},
			reset: func(o *Options) { o.Pty, o.PtyFD = false, "" },
		},
		flagOpt("quit-on-interrupt", 0, "quit on single Ctrl-C", func(o *Options) *bool { return &o.QuitOnInterrupt }),
		intOpt("relative", 'r', "n", "run job step relative to node n of allocation", false, func(o *Options) *Maybe[int] { return &o.Relative }),
		{
			spec:    spec{long: "send-libs", arg: optionalArgument, id: "send-libs"},
			argName: "yes|no", usage: "autodetect and broadcast shared objects",
			set: func(p *Parser, v string, has bool) error {
				switch {
				case !has || strings.EqualFold(v, "yes") || strings.EqualFold(v, "y"):
					p.opts.SendLibs = Some(true)
				case strings.EqualFold(v, "no") || strings.EqualFold(v, "n"):
					p.opts.SendLibs = Some(false)
				default:
					return optErrorf("Invalid --send-libs specification")
				}
				return nil
			},
			reset: func(o *Options) { o.SendLibs = Maybe[bool]{} },
		},
		{
			spec:    spec{long: "slurmd-debug", arg: requiredArgument, id: "slurmd-debug"},
			argName: "level", usage: "slurmd debug level",
			set: func(p *Parser, v string, _ bool) error {
				level := logLevel(v)
				if p.cfg.UID != 0 && p.cfg.UID != p.cfg.SlurmUserID && level != logLevelError {
					user := p.cfg.SlurmUser
					if user == "" {
						user = "root"
					}
					return optErrorf("Use of --slurmd-debug is allowed only for root and SlurmUser(%s)", user)
				}
				p.opts.SlurmdDebug = Some(level)
				return nil
			},
			reset: func(o *Options) { o.SlurmdDebug = Maybe[int]{} },
		},
		strOpt("task-epilog", 0, "program", "run \"program\" after launching task", func(o *Options) *string { return &o.TaskEpilog }),
		strOpt("task-prolog", 0, "program", "run \"program\" before launching task", func(o *Options) *string { return &o.TaskProlog }),
		flagOpt("test-only", 0, "validate the job and estimate its start time", func(o *Options) *bool { return &o.TestOnly }),
		hide(&optDef{
			spec:    spec{long: "treewidth", arg: requiredArgument, id: "treewidth"},
			argName: "width", usage: "message fan-out",
			set: func(p *Parser, v string, _ bool) error {
				if strings.EqualFold(v, "off") {
					p.opts.TreeWidth = Some(0xfffd)
					return nil
				}
				n, ok := parseUint16(v)
				if !ok {
					return optErrorf("Invalid --treewidth value: %s", v)
				}
				p.opts.TreeWidth = Some(n)
				return nil
			},
			reset: func(o *Options) { o.TreeWidth = Maybe[int]{} },
		}),
		flagOpt("unbuffered", 'u', "do not line-buffer stdout/err", func(o *Options) *bool { return &o.Unbuffered }),
		intOpt("wait", 'W', "sec", "seconds to wait after first task exits before killing job", false, func(o *Options) *Maybe[int] { return &o.WaitSec }),
		flagOpt("wait-for-children", 0, "wait for all children processes in a task to close before considering the task ended.", func(o *Options) *bool { return &o.WaitForChildren }),
		flagOpt("whole", 0, "use whole nodes of the allocation for the step", func(o *Options) *bool { return &o.Whole }),
	}
}

// setJobID is --jobid (and SLURM_JOB_ID), read as slurm_parse_step_str
// does: "job[_task][+offset][.step]"; the job id is atoi of what precedes
// the first separator, so junk reads as job 0. The messages name that
// part, as Slurm's do after cutting the string.
func setJobID(p *Parser, v string, _ bool) error {
	isDigit := func(s string) bool { return s != "" && s[0] >= '0' && s[0] <= '9' }
	name := v
	plus := false
	if i := strings.IndexByte(name, '.'); i >= 0 {
		step := name[i+1:]
		name = name[:i]
		switch {
		case step == "batch", step == "extern", step == "interactive", step == "TBD", isDigit(step):
		default:
			return fatalf("Bad step specified: %s", name)
		}
		plus = strings.Contains(step, "+")
	}
	task := Maybe[uint32]{}
	if i := strings.IndexByte(name, '_'); i >= 0 {
		under := name[i+1:]
		name = name[:i]
		if !isDigit(under) {
			return fatalf("Bad job array element specified: %s", name)
		}
		task = Some(uint32(int32(atoll(under))))
	} else if i := strings.IndexByte(name, '+'); !plus && i >= 0 {
		off := name[i+1:]
		name = name[:i]
		if !isDigit(off) {
			return fatalf("Bad hetjob offset specified: %s", name)
		}
	}
	p.opts.JobID = Some(uint32(int32(atoll(name))))
	p.opts.ArrayTaskID = task
	return nil
}

// Slurm's log levels (LOG_LEVEL_*), as --slurmd-debug takes them.
const (
	logLevelError  = 2
	logLevelDebug2 = 6
	// noVal16 is what log_string2num returns for an unknown name.
	noVal16 = 0xfffe
)

var logLevelNames = []string{"quiet", "fatal", "error", "info", "verbose", "debug", "debug2", "debug3", "debug4", "debug5"}

// logLevel is log_string2num: a leading number (atoi), or a level name.
func logLevel(s string) int {
	if s != "" && s[0] >= '0' && s[0] <= '9' {
		return int(uint16(atoll(s)))
	}
	for i, n := range logLevelNames {
		if strings.EqualFold(s, n) {
			return i
		}
	}
	return noVal16
}

// logLevelName is log_num2string.
func logLevelName(n int) string {
	if n >= 0 && n < len(logLevelNames) {
		return logLevelNames[n]
	}
	return "unknown"
}

// srunEnv is srun's table of input environment variables, in its order
// (later variables override earlier ones for the same option: SLURM_NTASKS
// wins over SLURM_NPROCS). srun reads SLURM_JOB_NUM_NODES (not
// SLURM_NNODES) and SLURM_JOB_ID (not SLURM_JOBID), although its manual
// lists the others. SLURM_POWER, whose option Slurm 25.11 no longer has,
// is left out.
func srunEnv() []envDef {
	return []envDef{
		{"SLURM_ACCOUNT", "account"},
		{"SLURM_ACCTG_FREQ", "acctg-freq"},
		{"SLURM_BCAST", "bcast"},
		{"SLURM_BCAST_EXCLUDE", "bcast-exclude"},
		{"SLURM_BURST_BUFFER", "bb"},
		{"SLURM_CLUSTERS", "clusters"},
		{"SLURM_CLUSTER_CONSTRAINT", "cluster-constraint"},
		{"SLURM_COMPRESS", "compress"},
		{"SLURM_CONSOLIDATE_SEGMENTS", "consolidate-segments"},
		{"SLURM_CONSTRAINT", "constraint"},
		{"SLURM_CORE_SPEC", "core-spec"},
		{"SLURM_CPUS_PER_TASK", "cpus-per-task"},
		{"SLURM_CPU_BIND", "cpu-bind"},
		{"SLURM_CPU_FREQ_REQ", "cpu-freq"},
		{"SLURM_CPUS_PER_GPU", "cpus-per-gpu"},
		{"SLURM_DELAY_BOOT", "delay-boot"},
		{"SLURM_DEPENDENCY", "dependency"},
		{"SLURM_DISABLE_STATUS", "disable-status"},
		{"SLURM_DISTRIBUTION", "distribution"},
		{"SLURM_EPILOG", "epilog"},
		{"SLURM_EXACT", "exact"},
		{"SLURM_EXCLUSIVE", "exclusive"},
		{"SLURM_EXPORT_ENV", "export"},
		{"SRUN_EXPORT_ENV", "export"},
		{"SLURM_EXTERNAL_LAUNCHER", "external-launcher"},
		{"SLURM_GPUS", "gpus"},
		{"SLURM_GPU_BIND", "gpu-bind"},
		{"SLURM_GPU_FREQ", "gpu-freq"},
		{"SLURM_GPUS_PER_NODE", "gpus-per-node"},
		{"SLURM_GPUS_PER_SOCKET", "gpus-per-socket"},
		{"SLURM_GPUS_PER_TASK", "gpus-per-task"},
		{"SLURM_GRES", "gres"},
		{"SLURM_GRES_FLAGS", "gres-flags"},
		{"SLURM_HINT", "hint"},
		{"SLURM_JOB_ID", "jobid"},
		{"SLURM_JOB_NAME", "job-name"},
		{"SLURM_JOB_NODELIST", "alloc-nodelist"},
		{"SLURM_JOB_NUM_NODES", "nodes"},
		{"SLURM_KILL_BAD_EXIT", "kill-on-bad-exit"},
		{"SLURM_LABELIO", "label"},
		{"SLURM_MEM_BIND", "mem-bind"},
		{"SLURM_MEM_PER_CPU", "mem-per-cpu"},
		{"SLURM_MEM_PER_GPU", "mem-per-gpu"},
		{"SLURM_MEM_PER_NODE", "mem"},
		{"SLURM_MPI_TYPE", "mpi"},
		{"SLURM_NCORES_PER_SOCKET", "cores-per-socket"},
		{"SLURM_NETWORK", "network"},
		{"SLURM_NO_KILL", "no-kill"},
		{"SLURM_NPROCS", "ntasks"},
		{"SLURM_NTASKS", "ntasks"},
		{"SLURM_NSOCKETS_PER_NODE", "sockets-per-node"},
		{"SLURM_NTASKS_PER_CORE", "ntasks-per-core"},
		{"SLURM_NTASKS_PER_NODE", "ntasks-per-node"},
		{"SLURM_NTASKS_PER_GPU", "ntasks-per-gpu"},
		{"SLURM_NTASKS_PER_TRES", "ntasks-per-tres"},
		{"SLURM_OOM_KILL_STEP", "oom-kill-step"},
		{"SLURM_OPEN_MODE", "open-mode"},
		{"SLURM_OVERCOMMIT", "overcommit"},
		{"SLURM_OVERLAP", "overlap"},
		{"SLURM_PARTITION", "partition"},
		{"SLURM_PROFILE", "profile"},
		{"SLURM_PROLOG", "prolog"},
		{"SLURM_QOS", "qos"},
		{"SLURM_REMOTE_CWD", "chdir"},
		{"SLURM_REQ_SWITCH", "switch-req"},
		{"SLURM_RESERVATION", "reservation"},
		{"SLURM_RESV_PORTS", "resv-ports"},
		{"SLURM_SEND_LIBS", "send-libs"},
		{"SLURM_SIGNAL", "signal"},
		{"SLURM_SPREAD_JOB", "spread-job"},
		{"SLURM_SPREAD_SEGMENTS", "spread-segments"},
		{"SLURM_SRUN_MULTI", "multi-prog"},
		{"SLURM_STDERRMODE", "error"},
		{"SLURM_STDINMODE", "input"},
		{"SLURM_STDOUTMODE", "output"},
		{"SLURM_TASK_EPILOG", "task-epilog"},
		{"SLURM_TASK_PROLOG", "task-prolog"},
		{"SLURM_THREAD_SPEC", "thread-spec"},
		{"SLURM_THREADS", "threads"},
		{"SLURM_THREADS_PER_CORE", "threads-per-core"},
		{"SLURM_TIMELIMIT", "time"},
		{"SLURM_TRES_BIND", "tres-bind"},
		{"SLURM_TRES_PER_TASK", "tres-per-task"},
		{"SLURM_UNBUFFEREDIO", "unbuffered"},
		{"SLURM_USE_MIN_NODES", "use-min-nodes"},
		{"SLURM_WAIT", "wait"},
		{"SLURM_WAIT4SWITCH", "switch-wait"},
		{"SLURM_WCKEY", "wckey"},
		{"SLURM_WORKING_DIR", "chdir"},
		{"SLURMD_DEBUG", "slurmd-debug"},
		{"SRUN_CONTAINER", "container"},
		{"SRUN_CONTAINER_ID", "container-id"},
		{"SLURM_DEBUG", "verbose"},
		{"SRUN_ERROR", "error"},
		{"SRUN_INPUT", "input"},
		{"SRUN_OUTPUT", "output"},
		{"SRUN_SEGMENT_SIZE", "segment"},
	}
}

// MPIList is the --mpi value that asks srun for the list of MPI types
// instead of running anything; the command prints MPIListText and exits 0
// (Finish returns that as an *Exit too).
const MPIList = "list"

// MPITypes are the --mpi values that work: "none" (also spelled
// "openmpi", which Slurm treats as none) and "pmi2", served by the node
// daemons (package pmi), then "pmix" where the PMIx plugin is installed
// beside the commands and can serve (drover-mpi-pmix --check).
func MPITypes() []string {
	types := []string{"none", "pmi2"}
	if PMIxAvailable() {
		types = append(types, "pmix")
	}
	return types
}

// PMIxAvailable reports whether the PMIx plugin is installed with the
// commands and built with libpmix; asked once per process.
var PMIxAvailable = sync.OnceValue(func() bool {
	exe, err := os.Executable()
	if err != nil {
		return false
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, filepath.Join(filepath.Dir(exe), "drover-mpi-pmix"), "--check").Run() == nil
})

// MPIListText is srun --mpi=list's output (plugrack_print_mpi_plugins)
// for MPITypes.
func MPIListText() string {
	var b strings.Builder
	b.WriteString("MPI plugin types are...\n")
	types := MPITypes()
	for _, t := range types {
		b.WriteString("\t" + t + "\n")
	}
	if slices.Contains(types, "pmix") {
		b.WriteString("specific pmix plugin versions available: pmix_v4\n")
	}
	return b.String()
}

func validMPI(t string) bool {
	switch t {
	case "openmpi", "none", "pmi2":
		return true
	}
	return slices.Contains(MPITypes(), t)
}

// StdioKind says what srun's -i, -o or -e designates (fname_create).
type StdioKind int

// Standard stream designations.
const (
	// StdioAll: every task's stream (the default; "all" or "-").
	StdioAll StdioKind = iota
	// StdioNone: /dev/null for every task ("none").
	StdioNone
	// StdioTask: only task Task's stream, the others get /dev/null.
	StdioTask
	// StdioFile: a file name pattern (%t, %n, %j...), opened on the
	// nodes; PerTask when it holds a per-task field.
	StdioFile
)

// String names the kind.
func (k StdioKind) String() string {
	switch k {
	case StdioNone:
		return "none"
	case StdioTask:
		return "task"
	case StdioFile:
		return "file"
	}
	return "all"
}

// Stdio is one of srun's standard stream options, resolved for a step of
// ntasks tasks.
type Stdio struct {
	Kind StdioKind
	// Task is the task of StdioTask.
	Task int
	// Pattern is the file name pattern of StdioFile, unexpanded.
	Pattern string
}

// SrunStdio interprets srun's --input, --output or --error value (as
// Options holds it: "none" already reads as /dev/null) the way srun's
// fname_create does: empty, "all" (any case, as a prefix) or "-..." is every
// task's stream, /dev/null is none, a task number below ntasks is that
// task's alone, anything else is a file name pattern.
func SrunStdio(v string, ntasks int) Stdio {
	switch {
	case v == "" || strings.HasPrefix(v, "-") || (len(v) >= 3 && strings.EqualFold(v[:3], "all")):
		return Stdio{Kind: StdioAll}
	case v == "/dev/null" || strings.EqualFold(v, "none"):
		return Stdio{Kind: StdioNone}
	}
	if n, rest, ok := cStrtol(v); ok && rest == "" && n >= 0 && n < int64(ntasks) {
		return Stdio{Kind: StdioTask, Task: int(n)}
	}
	return Stdio{Kind: StdioFile, Pattern: v}
}

// Tasks is the number of tasks srun launches: --ntasks (or SLURM_NTASKS),
// else what srun derived from the node count (one per node), else 1.
func (o *Options) Tasks() int {
	switch {
	case o.Ntasks.Set:
		return o.Ntasks.Val
	case o.impliedTasks > 0:
		return o.impliedTasks
	}
	return 1
}

// StepName is the name srun gives a step it launches in an existing
// allocation: --job-name from the command line, else the command's base
// name (launch.c); SLURM_JOB_NAME, inherited from the job, does not name
// the step.
func (o *Options) StepName() string {
	if o.setByCLI("job-name") {
		return o.JobName.Val
	}
	return o.CmdName
}

// cmdName is srun's base_name of the command.
func cmdName(operands []string) string {
	if len(operands) == 0 || operands[0] == ":" {
		return ""
	}
	name := operands[0]
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return name
}
