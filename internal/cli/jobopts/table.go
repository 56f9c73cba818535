package jobopts

import (
	"errors"
	"math"
	"strings"
	"time"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/timefmt"
)

// strOpt is a plain string option (COMMON_STRING_OPTION): the last value
// wins.
func strOpt(long string, short byte, argName, usage string, field func(*Options) *string) *optDef {
	return &optDef{
		spec:    spec{long: long, short: short, arg: requiredArgument, id: long},
		argName: argName, usage: usage,
		set: func(p *Parser, v string, _ bool) error {
			*field(p.opts) = v
			return nil
		},
		reset: func(o *Options) { *field(o) = "" },
	}
}

// hidden keeps an option out of --help, as Slurm lists only one of its
// spellings.
func hidden(d *optDef) *optDef { d.hidden = true; return d }

// flagOpt is an option without argument that sets a boolean.
func flagOpt(long string, short byte, usage string, field func(*Options) *bool) *optDef {
	return &optDef{
		spec:  spec{long: long, short: short, arg: noArgument, id: long},
		usage: usage,
		set: func(p *Parser, _ string, _ bool) error {
			*field(p.opts) = true
			return nil
		},
		reset: func(o *Options) { *field(o) = false },
	}
}

// intOpt is a parse_int option.
func intOpt(long string, short byte, argName, usage string, positive bool, field func(*Options) *Maybe[int]) *optDef {
	return &optDef{
		spec:    spec{long: long, short: short, arg: requiredArgument, id: long},
		argName: argName, usage: usage,
		set: func(p *Parser, v string, _ bool) error {
			n, err := parseInt("--"+long, v, positive)
			if err != nil {
				return err
			}
			*field(p.opts) = Some(n)
			return nil
		},
		reset: func(o *Options) { *field(o) = Maybe[int]{} },
	}
}

// mbOpt is a size option in megabytes (COMMON_MBYTES_OPTION).
func mbOpt(long, argName, usage string, field func(*Options) *Maybe[uint64]) *optDef {
	return &optDef{
		spec:    spec{long: long, arg: requiredArgument, id: long},
		argName: argName, usage: usage,
		set: func(p *Parser, v string, _ bool) error {
			n, ok := strToMbytes(v)
			if !ok {
				return optErrorf("Invalid --%s specification", long)
			}
			*field(p.opts) = Some(n)
			return nil
		},
		reset: func(o *Options) { *field(o) = Maybe[uint64]{} },
	}
}

// ioOpt is --output, --error or --input: "none" means /dev/null.
func ioOpt(long string, short byte, usage string, field func(*Options) *string) *optDef {
	argName := map[string]string{"output": "out", "error": "err", "input": "in"}[long]
	d := strOpt(long, short, argName, usage, field)
	d.set = func(p *Parser, v string, _ bool) error {
		if strings.EqualFold(v, "none") {
			v = "/dev/null"
		}
		*field(p.opts) = v
		return nil
	}
	return d
}

// unsupported is an option Slurm has and Drover refuses clearly.
func unsupported(long string, short byte, arg argKind, usage string) *optDef {
	return &optDef{
		spec:   spec{long: long, short: short, arg: arg, id: long},
		usage:  usage,
		hidden: true,
		set: func(*Parser, string, bool) error {
			return unsupportedf("--%s", long)
		},
	}
}

// timeOpt is --time or --time-min.
func timeOpt(long string, short byte, usage string, field func(*Options) *Maybe[timefmt.Limit]) *optDef {
	return &optDef{
		spec:    spec{long: long, short: short, arg: requiredArgument, id: long},
		argName: "minutes", usage: usage,
		set: func(p *Parser, v string, _ bool) error {
			l, err := timefmt.ParseTimeOption(v)
			if err != nil {
				return optErrorf("Invalid --%s specification", long)
			}
			*field(p.opts) = Some(l)
			return nil
		},
		reset: func(o *Options) { *field(o) = Maybe[timefmt.Limit]{} },
	}
}

// dateOpt is --begin or --deadline, parsed by Slurm's parse_time rules.
func dateOpt(long string, short byte, usage string, field func(*Options) *Maybe[time.Time]) *optDef {
	return &optDef{
		spec:    spec{long: long, short: short, arg: requiredArgument, id: long},
		argName: "time", usage: usage,
		set: func(p *Parser, v string, _ bool) error {
			t, err := timefmt.ParseTime(v, p.cfg.Now)
			if err != nil {
				f := optErrorf("Invalid --%s specification", long)
				var te *timefmt.TimeError
				if errors.As(err, &te) && !te.NoTime {
					f.lines = append([]string{"error: " + te.Error()}, f.lines...)
				}
				return f
			}
			*field(p.opts) = Some(t)
			return nil
		},
		reset: func(o *Options) { *field(o) = Maybe[time.Time]{} },
	}
}

// gpuListOpt is one of the --gpus* options: a string passed on as given.
func gpuListOpt(long string, short byte, usage string, field func(*Options) *string) *optDef {
	return strOpt(long, short, "n", usage, field)
}

// sbatchOptions returns sbatch's options in Slurm's table order, which is
// the order getopt lists ambiguous abbreviations in.
func sbatchOptions() []*optDef {
	return []*optDef{
		strOpt("account", 'A', "name", "charge job to specified account", func(o *Options) *string { return &o.Account }),
		strOpt("acctg-freq", 0, "freq", "job accounting and profiling sampling intervals", func(o *Options) *string { return &o.AcctgFreq }),
		strOpt("array", 'a', "indexes", "job array index values", func(o *Options) *string { return &o.Array }),
		unsupported("autocomplete", 0, requiredArgument, "shell completion"),
		strOpt("batch", 0, "features", "features required for the batch host", func(o *Options) *string { return &o.BatchFeatures }),
		dateOpt("begin", 'b', "defer job until HH:MM MM/DD/YY", func(o *Options) *Maybe[time.Time] { return &o.Begin }),
		strOpt("bb", 0, "spec", "burst buffer specifications", func(o *Options) *string { return &o.BurstBuffer }),
		unsupported("bbf", 0, requiredArgument, "burst buffer specification file"),
		strOpt("cluster-constraint", 0, "list", "specify a list of cluster constraints", func(o *Options) *string { return &o.ClusterConstraint }),
		{
			spec:    spec{long: "chdir", short: 'D', arg: requiredArgument, id: "chdir"},
			argName: "directory", usage: "set working directory for batch script",
			set: func(p *Parser, v string, _ bool) error {
				p.opts.Chdir = resolvePath(p.cfg.Cwd, v)
				return nil
			},
			reset: func(o *Options) { o.Chdir = "" },
		},
		hidden(strOpt("cluster", 0, "names", "cluster to issue commands to", func(o *Options) *string { return &o.Clusters })),
		strOpt("clusters", 'M', "names", "clusters to issue commands to", func(o *Options) *string { return &o.Clusters }),
		strOpt("comment", 0, "name", "arbitrary comment", func(o *Options) *string { return &o.Comment }),
		flagOpt("consolidate-segments", 0, "consolidate job segments", func(o *Options) *bool { return &o.Consolidate }),
		strOpt("container", 0, "path", "path to OCI container bundle", func(o *Options) *string { return &o.Container }),
		strOpt("container-id", 0, "id", "OCI container ID", func(o *Options) *string { return &o.ContainerID }),
		strOpt("context", 0, "context", "SELinux context", func(o *Options) *string { return &o.Context }),
		flagOpt("contiguous", 0, "demand a contiguous range of nodes", func(o *Options) *bool { return &o.Contiguous }),
		strOpt("constraint", 'C', "list", "specify a list of constraints", func(o *Options) *string { return &o.Constraint }),
		{
			spec:    spec{long: "core-spec", short: 'S', arg: requiredArgument, id: "core-spec"},
			argName: "cores", usage: "count of reserved cores",
			set: func(p *Parser, v string, _ bool) error {
				n, err := parseInt("--core-spec", v, false)
				if err != nil {
					return err
				}
				p.opts.CoreSpec, p.opts.ThreadSpec = Some(n), Maybe[int]{}
				return nil
			},
			reset: func(o *Options) { o.CoreSpec, o.ThreadSpec = Maybe[int]{}, Maybe[int]{} },
		},
		unsupported("cores-per-socket", 0, requiredArgument, "number of cores per socket to allocate"),
		strOpt("cpu-freq", 0, "min[-max[:gov]]", "requested cpu frequency (and governor)", func(o *Options) *string { return &o.CPUFreq }),
		intOpt("cpus-per-gpu", 0, "n", "number of CPUs required per allocated GPU", true, func(o *Options) *Maybe[int] { return &o.CPUsPerGPU }),
		intOpt("cpus-per-task", 'c', "ncpus", "number of cpus required per task", true, func(o *Options) *Maybe[int] { return &o.CPUsPerTask }),
		dateOpt("deadline", 0, "remove the job if no ending possible before this deadline", func(o *Options) *Maybe[time.Time] { return &o.Deadline }),
		{
			spec:    spec{long: "delay-boot", arg: requiredArgument, id: "delay-boot"},
			argName: "mins", usage: "delay boot for desired node features",
			set: func(p *Parser, v string, _ bool) error {
				secs, inf, err := timefmt.ParseSeconds(v)
				if err != nil || inf || secs > math.MaxInt32 {
					return optErrorf("Invalid --delay-boot specification")
				}
				p.opts.DelayBoot = Some(int(secs))
				return nil
			},
			reset: func(o *Options) { o.DelayBoot = Maybe[int]{} },
		},
		strOpt("dependency", 'd', "type:jobid[:time]", "defer job until condition on jobid is satisfied", func(o *Options) *string { return &o.Dependency }),
		{
			spec:    spec{long: "distribution", short: 'm', arg: requiredArgument, id: "distribution"},
			argName: "type", usage: "distribution method for processes to nodes (type = block|cyclic|arbitrary)",
			set: func(p *Parser, v string, _ bool) error {
				d, plane, pack, err := parseDistribution(v, p.getenv)
				if err != nil {
					return err
				}
				p.opts.Distribution, p.opts.DistPack = d, pack
				p.opts.PlaneSize = Maybe[int]{}
				if plane > 0 {
					p.opts.PlaneSize = Some(plane)
				}
				return nil
			},
			reset: func(o *Options) { o.Distribution, o.DistPack, o.PlaneSize = "", "", Maybe[int]{} },
		},
		ioOpt("error", 'e', "file for batch script's standard error", func(o *Options) *string { return &o.Error }),
		strOpt("exclude", 'x', "hosts...", "exclude a specific list of hosts", func(o *Options) *string { return &o.Exclude }),
		{
			spec:    spec{long: "exclusive", arg: optionalArgument, id: "exclusive"},
			argName: "user|mcs|topo", usage: "allocate nodes in exclusive mode",
			set: func(p *Parser, v string, has bool) error {
				switch {
				case !has || strings.EqualFold(v, "exclusive"):
					p.opts.Shared = SharedNone
					if p.cmd == cmdSrun {
						// For a step, --exclusive is --exact.
						p.opts.Exact = true
					}
				case strings.EqualFold(v, "oversubscribe"):
					p.opts.Shared = SharedOversubscribe
				case strings.EqualFold(v, "user"):
					p.opts.Shared = SharedUser
				case strings.EqualFold(v, "mcs"):
					p.opts.Shared = SharedMCS
				case strings.EqualFold(v, "topo"):
					p.opts.Shared = SharedTopo
				default:
					return optErrorf("Invalid --exclusive specification")
				}
				return nil
			},
			reset: func(o *Options) { o.Shared = SharedUnset },
		},
		{
			spec:    spec{long: "export", arg: requiredArgument, id: "export"},
			argName: "names", usage: "specify environment variables to export",
			set: func(p *Parser, v string, _ bool) error {
				p.opts.Export = Some(v)
				return nil
			},
			reset: func(o *Options) { o.Export = Maybe[string]{} },
		},
		unsupported("export-file", 0, requiredArgument, "specify environment variables file or file descriptor to export"),
		unsupported("external", 0, noArgument, "create an external job"),
		strOpt("extra", 0, "string", "arbitrary string for node filtering", func(o *Options) *string { return &o.Extra }),
		{
			spec:    spec{long: "extra-node-info", short: 'B', arg: requiredArgument, id: "extra-node-info"},
			argName: "S[:C[:T]]", usage: "combine request of sockets per node, cores per socket and threads per core",
			set: setExtraNodeInfo,
			reset: func(o *Options) {
				o.SocketsPerNode, o.CoresPerSocket, o.ThreadsPerCore = Maybe[int]{}, Maybe[int]{}, Maybe[int]{}
			},
		},
		{
			// 25.11 takes no argument; older releases' [timeout][S|L]
			// (read as 22.05 reads it, then unused, as 25.11 waits its
			// own time) is still accepted for the scripts that give one.
			spec:  spec{long: "get-user-env", arg: optionalArgument, id: "get-user-env"},
			usage: "load environment from local cluster",
			set: func(p *Parser, v string, has bool) error {
				if has {
					rest := strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(v, "-"), "+"), "0123456789")
					if rest != "" && !strings.ContainsAny(rest[:1], "sSlL") {
						return optErrorf("Invalid --get-user-env specification")
					}
				}
				p.opts.GetUserEnv = true
				return nil
			},
			reset: func(o *Options) { o.GetUserEnv = false },
		},
		{
			spec:    spec{long: "gid", arg: requiredArgument, id: "gid"},
			argName: "group_id", usage: "group ID to run job as (user root only)",
			set: func(p *Parser, v string, _ bool) error {
				if p.cfg.UID != 0 {
					return optErrorf("--gid only permitted by root user")
				}
				gid, err := p.lookupGroup(v)
				if err != nil {
					return optErrorf("Invalid --gid specification")
				}
				if gid == nobody {
					return optErrorf("Rejecting --gid as nobody specification")
				}
				p.opts.GID = Some(gid)
				return nil
			},
			reset: func(o *Options) { o.GID = Maybe[uint32]{} },
		},
		{
			spec:    spec{long: "gpu-bind", arg: requiredArgument, id: "gpu-bind"},
			argName: "...", usage: "task to gpu binding options",
			set: func(p *Parser, v string, _ bool) error {
				if _, err := gres.ParseGPUBind(v); err != nil {
					return optErrorf("Invalid --gpu-bind argument: %s", v)
				}
				p.opts.GPUBind, p.opts.TRESBind = v, "gres/gpu:"+v
				return nil
			},
			reset: func(o *Options) { o.GPUBind, o.TRESBind = "", "" },
		},
		{
			spec:    spec{long: "gpu-freq", arg: requiredArgument, id: "gpu-freq"},
			argName: "...", usage: "frequency and voltage of GPUs",
			set: func(p *Parser, v string, _ bool) error {
				p.opts.GPUFreq, p.opts.TRESFreq = v, "gpu:"+v
				return nil
			},
			reset: func(o *Options) { o.GPUFreq, o.TRESFreq = "", "" },
		},
		gpuListOpt("gpus", 'G', "count of GPUs required for the job", func(o *Options) *string { return &o.GPUs }),
		gpuListOpt("gpus-per-node", 0, "number of GPUs required per allocated node", func(o *Options) *string { return &o.GPUsPerNode }),
		gpuListOpt("gpus-per-socket", 0, "number of GPUs required per allocated socket", func(o *Options) *string { return &o.GPUsPerSocket }),
		gpuListOpt("gpus-per-task", 0, "number of GPUs required per spawned task", func(o *Options) *string { return &o.GPUsPerTask }),
		{
			spec:    spec{long: "gres", arg: requiredArgument, id: "gres"},
			argName: "list", usage: "required generic resources per node",
			set: func(p *Parser, v string, _ bool) error {
				switch {
				case strings.EqualFold(v, "help") || strings.EqualFold(v, "list"):
					return &Exit{Stdout: "Valid gres options are:\ngpu[[:type]:count]\n"}
				case strings.EqualFold(v, "none"):
					p.opts.GRES = v
				default:
					p.opts.GRES = prependTRESType(v)
				}
				return nil
			},
			reset: func(o *Options) { o.GRES = "" },
		},
		{
			spec:    spec{long: "gres-flags", arg: requiredArgument, id: "gres-flags"},
			argName: "opts", usage: "flags related to GRES management",
			set: setGRESFlags,
			reset: func(o *Options) {
				o.GRESEnforceBind, o.GRESDisableBind, o.GRESAllowTaskSharing = false, false, false
			},
		},
		{
			spec:  spec{long: "help", short: 'h', arg: noArgument, id: "help"},
			usage: "show this help message", early: true,
			set: func(p *Parser, _ string, _ bool) error {
				return &Exit{Stdout: p.Help()}
			},
		},
		strOpt("hint", 0, "hint", "bind tasks according to application hints", func(o *Options) *string { return &o.Hint }),
		{
			spec:  spec{long: "hold", short: 'H', arg: noArgument, id: "hold"},
			usage: "submit job in held state",
			set: func(p *Parser, _ string, _ bool) error {
				p.opts.Hold = Some(true)
				return nil
			},
			reset: func(o *Options) { o.Hold = Maybe[bool]{} },
		},
		flagOpt("ignore-pbs", 0, "ignore #PBS and #BSUB options in the batch script", func(o *Options) *bool { return &o.IgnorePBS }),
		ioOpt("input", 'i', "file for batch script's standard input", func(o *Options) *string { return &o.Input }),
		{
			spec:    spec{long: "job-name", short: 'J', arg: requiredArgument, id: "job-name"},
			argName: "jobname", usage: "name of job",
			set: func(p *Parser, v string, _ bool) error {
				p.opts.JobName = Some(v)
				return nil
			},
			reset: func(o *Options) { o.JobName = Maybe[string]{} },
		},
		{
			spec:    spec{long: "kill-on-invalid-dep", arg: requiredArgument, id: "kill-on-invalid-dep"},
			argName: "yes|no", usage: "kill the job if its dependency can never be satisfied",
			set: func(p *Parser, v string, _ bool) error {
				switch {
				case strings.EqualFold(v, "yes"):
					p.opts.KillInvDep = Some(true)
				case strings.EqualFold(v, "no"):
					p.opts.KillInvDep = Some(false)
				default:
					return optErrorf("Invalid --kill-on-invalid-dep specification")
				}
				return nil
			},
			reset: func(o *Options) { o.KillInvDep = Maybe[bool]{} },
		},
		strOpt("licenses", 'L', "names", "required license, comma separated", func(o *Options) *string { return &o.Licenses }),
		{
			spec:    spec{long: "mail-type", arg: requiredArgument, id: "mail-type"},
			argName: "type", usage: "notify on state change: BEGIN, END, FAIL or ALL",
			set: func(p *Parser, v string, _ bool) error {
				t, ok := parseMailType(v)
				if !ok {
					return optErrorf("Invalid --mail-type specification")
				}
				p.opts.MailType = Some(t)
				return nil
			},
			reset: func(o *Options) { o.MailType = Maybe[[]string]{} },
		},
		strOpt("mail-user", 0, "user", "who to send email notification for job state changes", func(o *Options) *string { return &o.MailUser }),
		strOpt("mcs-label", 0, "mcs", "mcs label if mcs plugin mcs/group is used", func(o *Options) *string { return &o.MCSLabel }),
		mbOpt("mem", "MB", "minimum amount of real memory", func(o *Options) *Maybe[uint64] { return &o.Mem }),
		{
			spec:    spec{long: "mem-bind", arg: requiredArgument, id: "mem-bind"},
			argName: "...", usage: "bind memory to locality domains",
			set: func(p *Parser, v string, _ bool) error {
				if _, _, err := parseMemBind(v); err != nil {
					return err
				}
				p.opts.MemBind = v
				return nil
			},
			reset: func(o *Options) { o.MemBind = "" },
		},
		mbOpt("mem-per-cpu", "MB", "maximum amount of real memory per allocated cpu required by the job", func(o *Options) *Maybe[uint64] { return &o.MemPerCPU }),
		mbOpt("mem-per-gpu", "MB", "real memory required per allocated GPU", func(o *Options) *Maybe[uint64] { return &o.MemPerGPU }),
		intOpt("mincpus", 0, "n", "minimum number of logical processors (threads) per node", false, func(o *Options) *Maybe[int] { return &o.MinCPUs }),
		strOpt("network", 0, "type", "specify information pertaining to the switch or network", func(o *Options) *string { return &o.Network }),
		{
			spec:    spec{long: "nice", arg: optionalArgument, id: "nice"},
			argName: "value", usage: "decrease scheduling priority by value",
			set: func(p *Parser, v string, has bool) error {
				n := int64(100)
				if has {
					n = atoll(v)
				}
				if n > maxNice || n < -maxNice {
					return optErrorf("Invalid --nice value, out of range (+/- %d)", maxNice)
				}
				p.opts.Nice = Some(int(n))
				return nil
			},
			reset: func(o *Options) { o.Nice = Maybe[int]{} },
		},
		{
			spec:  spec{long: "no-kill", short: 'k', arg: optionalArgument, id: "no-kill"},
			usage: "do not kill job on node failure",
			set: func(p *Parser, v string, has bool) error {
				switch {
				case !has || strings.EqualFold(v, "set"):
					p.opts.NoKill = true
				case strings.EqualFold(v, "off") || strings.EqualFold(v, "no"):
					p.opts.NoKill = false
				default:
					return optErrorf("Invalid --no-kill specification")
				}
				return nil
			},
			reset: func(o *Options) { o.NoKill = false },
		},
		{
			spec:  spec{long: "no-requeue", arg: noArgument, id: "no-requeue"},
			usage: "if set, do not permit the job to be requeued",
			set: func(p *Parser, _ string, _ bool) error {
				p.opts.Requeue = Some(false)
				return nil
			},
			reset: func(o *Options) { o.Requeue = Maybe[bool]{} },
		},
		strOpt("nodefile", 'F', "filename", "request a specific list of hosts", func(o *Options) *string { return &o.NodeFile }),
		strOpt("nodelist", 'w', "hosts...", "request a specific list of hosts", func(o *Options) *string { return &o.NodeList }),
		{
			spec:    spec{long: "nodes", short: 'N', arg: requiredArgument, id: "nodes"},
			argName: "N", usage: "number of nodes on which to run (N = min[-max])",
			set: func(p *Parser, v string, _ bool) error {
				nc, err := parseNodeCount(v)
				if err != nil {
					return err
				}
				p.opts.Nodes = Some(nc)
				return nil
			},
			reset: func(o *Options) { o.Nodes = Maybe[NodeCount]{} },
		},
		intOpt("ntasks", 'n', "ntasks", "number of tasks to run", true, func(o *Options) *Maybe[int] { return &o.Ntasks }),
		intOpt("ntasks-per-core", 0, "n", "number of tasks to invoke on each core", true, func(o *Options) *Maybe[int] { return &o.NtasksPerCore }),
		intOpt("ntasks-per-gpu", 0, "n", "number of tasks to invoke for each GPU", true, func(o *Options) *Maybe[int] { return &o.NtasksPerGPU }),
		intOpt("ntasks-per-node", 0, "n", "number of tasks to invoke on each node", true, func(o *Options) *Maybe[int] { return &o.NtasksPerNode }),
		intOpt("ntasks-per-socket", 0, "n", "number of tasks to invoke on each socket", true, func(o *Options) *Maybe[int] { return &o.NtasksPerSocket }),
		intOpt("ntasks-per-tres", 0, "n", "number of tasks to invoke for each GPU", true, func(o *Options) *Maybe[int] { return &o.NtasksPerTRES }),
		{
			spec:    spec{long: "oom-kill-step", arg: optionalArgument, id: "oom-kill-step"},
			argName: "0|1", usage: "set the OOMKillStep behaviour",
			set: func(p *Parser, v string, has bool) error {
				if !has {
					p.opts.OOMKillStep = Some(1)
					return nil
				}
				n, ok := parseUint16(v)
				if !ok || n > 1 {
					return optErrorf("Invalid --oom-kill-step specification")
				}
				p.opts.OOMKillStep = Some(n)
				return nil
			},
			reset: func(o *Options) { o.OOMKillStep = Maybe[int]{} },
		},
		{
			spec:    spec{long: "open-mode", arg: requiredArgument, id: "open-mode"},
			argName: "append|truncate", usage: "how to open output and error files",
			set: func(p *Parser, v string, _ bool) error {
				switch {
				case v != "" && (v[0]|0x20) == 'a':
					p.opts.OpenMode = "APPEND"
				case v != "" && (v[0]|0x20) == 't':
					p.opts.OpenMode = "TRUNCATE"
				default:
					return optErrorf("Invalid --open-mode specification")
				}
				return nil
			},
			reset: func(o *Options) { o.OpenMode = "" },
		},
		ioOpt("output", 'o', "file for batch script's standard output", func(o *Options) *string { return &o.Output }),
		flagOpt("overcommit", 'O', "overcommit resources", func(o *Options) *bool { return &o.Overcommit }),
		{
			spec:  spec{long: "oversubscribe", short: 's', arg: noArgument, id: "oversubscribe"},
			usage: "over subscribe resources with other jobs",
			set: func(p *Parser, _ string, _ bool) error {
				p.opts.Shared = SharedOversubscribe
				return nil
			},
			reset: func(o *Options) { o.Shared = SharedUnset },
		},
		flagOpt("parsable", 0, "outputs only the jobid and cluster name (if present), separated by semicolon, only on successful submission.", func(o *Options) *bool { return &o.Parsable }),
		strOpt("partition", 'p', "partition", "partition requested", func(o *Options) *string { return &o.Partition }),
		strOpt("prefer", 0, "list", "features that are preferred but not required", func(o *Options) *string { return &o.Prefer }),
		{
			spec:    spec{long: "priority", arg: requiredArgument, id: "priority"},
			argName: "value", usage: "set the priority of the job to value",
			set: func(p *Parser, v string, _ bool) error {
				if strings.EqualFold(v, "TOP") {
					return unsupportedf("--priority=TOP")
				}
				n := atoll(v)
				switch {
				case n < 0:
					return optErrorf("Priority must be >= 0")
				case n > math.MaxInt32:
					// The v0.0.44 job description holds priority in
					// a 32-bit signed number.
					return optErrorf("Priority must be < %d", int64(math.MaxInt32)+1)
				}
				p.opts.Priority = Some(uint32(n))
				return nil
			},
			reset: func(o *Options) { o.Priority = Maybe[uint32]{} },
		},
		{
			spec:    spec{long: "profile", arg: requiredArgument, id: "profile"},
			argName: "value", usage: "enable acct_gather_profile for detailed data",
			set: func(p *Parser, v string, _ bool) error {
				prof := parseProfile(v)
				if prof == nil {
					return optErrorf("invalid --profile=%s option", v)
				}
				p.opts.Profile = prof
				return nil
			},
			reset: func(o *Options) { o.Profile = nil },
		},
		{
			spec:    spec{long: "propagate", arg: optionalArgument, id: "propagate"},
			argName: "rlimits", usage: "propagate all [or specific list of] rlimits",
			set: func(p *Parser, v string, has bool) error {
				if !has {
					v = "ALL"
				}
				p.opts.Propagate = Some(v)
				return nil
			},
			reset: func(o *Options) { o.Propagate = Maybe[string]{} },
		},
		strOpt("qos", 'q', "qos", "quality of service", func(o *Options) *string { return &o.QOS }),
		{
			spec:  spec{long: "quiet", short: 'Q', arg: noArgument, id: "quiet"},
			usage: "quiet mode (suppress informational messages)", early: true,
			set: func(p *Parser, _ string, _ bool) error {
				p.opts.Quiet++
				return nil
			},
			reset: func(o *Options) { o.Quiet = 0 },
		},
		flagOpt("reboot", 0, "reboot compute nodes before starting job", func(o *Options) *bool { return &o.Reboot }),
		{
			spec:    spec{long: "requeue", arg: optionalArgument, id: "requeue"},
			argName: "expedite", usage: "if set, permit the job to be requeued",
			set: func(p *Parser, v string, has bool) error {
				p.opts.Requeue = Some(true)
				if has && strings.EqualFold(v, "expedite") {
					p.opts.Expedite = true
				}
				return nil
			},
			reset: func(o *Options) { o.Requeue, o.Expedite = Maybe[bool]{}, false },
		},
		strOpt("resources", 0, "list", "required resources (added to --licenses)", func(o *Options) *string { return &o.Resources }),
		strOpt("reservation", 0, "name", "allocate resources from named reservation", func(o *Options) *string { return &o.Reservation }),
		unsupported("resv-ports", 0, optionalArgument, "reserve communication ports"),
		{
			spec:    spec{long: "segment", arg: requiredArgument, id: "segment"},
			argName: "size", usage: "segment size for topology/block",
			set: func(p *Parser, v string, _ bool) error {
				n, ok := parseUint16(v)
				if !ok {
					return optErrorf("Invalid --segment specification")
				}
				p.opts.SegmentSize = Some(n)
				return nil
			},
			reset: func(o *Options) { o.SegmentSize = Maybe[int]{} },
		},
		{
			spec:    spec{long: "signal", arg: requiredArgument, id: "signal"},
			argName: "[[R][B]:]num[@time]", usage: "send signal when time limit within time seconds",
			set: func(p *Parser, v string, _ bool) error {
				sig, ok := parseSignal(v)
				if !ok {
					return optErrorf("Invalid --signal specification")
				}
				p.opts.Signal = Some(sig)
				return nil
			},
			reset: func(o *Options) { o.Signal = Maybe[Signal]{} },
		},
		intOpt("sockets-per-node", 0, "S", "number of sockets per node to allocate", true, func(o *Options) *Maybe[int] { return &o.SocketsPerNode }),
		flagOpt("spread-job", 0, "spread job across as many nodes as possible", func(o *Options) *bool { return &o.SpreadJob }),
		flagOpt("spread-segments", 0, "spread job segments across separate base blocks", func(o *Options) *bool { return &o.SpreadSegments }),
		flagOpt("stepmgr", 0, "enable step management by slurmstepd", func(o *Options) *bool { return &o.StepMgr }),
		{
			spec:    spec{long: "switches", arg: requiredArgument, id: "switches"},
			argName: "max-switches{@max-time-to-wait}", usage: "optimum switches and max time to wait for optimum",
			set: func(p *Parser, v string, _ bool) error {
				count, wait, hasWait := strings.Cut(v, "@")
				if hasWait {
					if secs, inf, err := timefmt.ParseSeconds(wait); err == nil && !inf && secs <= math.MaxInt32 {
						p.opts.SwitchWait = Some(int(secs))
					}
				}
				n, err := parseInt("--switches", count, true)
				if err != nil {
					return err
				}
				p.opts.Switches = Some(n)
				return nil
			},
			reset: func(o *Options) { o.Switches, o.SwitchWait = Maybe[int]{}, Maybe[int]{} },
		},
		// --tasks-per-node is the deprecated spelling of --ntasks-per-node.
		func() *optDef {
			d := intOpt("tasks-per-node", 0, "n", "deprecated spelling of --ntasks-per-node", true, func(o *Options) *Maybe[int] { return &o.NtasksPerNode })
			d.id = "ntasks-per-node"
			d.hidden = true
			return d
		}(),
		unsupported("test-only", 0, noArgument, "validate the job and estimate its start time"),
		{
			spec:    spec{long: "thread-spec", arg: requiredArgument, id: "thread-spec"},
			argName: "threads", usage: "count of reserved threads",
			set: func(p *Parser, v string, _ bool) error {
				n, err := parseInt("--thread-spec", v, true)
				if err != nil {
					return err
				}
				p.opts.ThreadSpec, p.opts.CoreSpec = Some(n), Maybe[int]{}
				return nil
			},
			reset: func(o *Options) { o.CoreSpec, o.ThreadSpec = Maybe[int]{}, Maybe[int]{} },
		},
		intOpt("threads-per-core", 0, "T", "number of threads per core to allocate", true, func(o *Options) *Maybe[int] { return &o.ThreadsPerCore }),
		timeOpt("time", 't', "time limit", func(o *Options) *Maybe[timefmt.Limit] { return &o.TimeLimit }),
		timeOpt("time-min", 0, "minimum time limit (if distinct)", func(o *Options) *Maybe[timefmt.Limit] { return &o.TimeMin }),
		mbOpt("tmp", "MB", "minimum amount of temporary disk", func(o *Options) *Maybe[uint64] { return &o.TmpDisk }),
		strOpt("tres-bind", 0, "...", "task to tres binding options", func(o *Options) *string { return &o.TRESBind }),
		strOpt("tres-per-task", 0, "list", "list of tres required per task", func(o *Options) *string { return &o.TRESPerTask }),
		{
			spec:    spec{long: "uid", arg: requiredArgument, id: "uid"},
			argName: "user_id", usage: "user ID to run job as (user root only)",
			set: func(p *Parser, v string, _ bool) error {
				if p.cfg.UID != 0 {
					return optErrorf("--uid only permitted by root user")
				}
				uid, err := p.lookupUser(v)
				if err != nil {
					return optErrorf("Invalid --uid specification")
				}
				if uid == nobody {
					return optErrorf("Rejecting --uid as nobody specification")
				}
				p.opts.UID = Some(uid)
				return nil
			},
			reset: func(o *Options) { o.UID = Maybe[uint32]{} },
		},
		flagOpt("use-min-nodes", 0, "if a range of node counts is given, prefer the smaller count", func(o *Options) *bool { return &o.UseMinNodes }),
		{
			spec:  spec{long: "verbose", short: 'v', arg: noArgument, id: "verbose"},
			usage: "verbose mode (multiple -v's increase verbosity)", early: true,
			set: func(p *Parser, v string, has bool) error {
				if !has {
					if p.opts.Sources["verbose"] == FromEnv {
						p.opts.Verbose = 0
					}
					p.opts.Verbose++
					return nil
				}
				// From SBATCH_DEBUG: a level, unless -v came first.
				if s, ok := p.opts.Sources["verbose"]; ok && s == FromCommandLine {
					return nil
				}
				n, err := parseInt("--verbose", v, false)
				if err != nil {
					return err
				}
				p.opts.Verbose = n
				return nil
			},
			reset: func(o *Options) { o.Verbose = 0 },
		},
		{
			spec:  spec{long: "version", short: 'V', arg: noArgument, id: "version"},
			usage: "output version information and exit", early: true,
			set: func(p *Parser, _ string, _ bool) error {
				return &Exit{Stdout: "slurm " + clienv.SlurmVersion + "\n"}
			},
		},
		{
			spec:  spec{long: "usage", arg: noArgument, id: "usage"},
			usage: "display brief usage message", early: true,
			set: func(p *Parser, _ string, _ bool) error {
				return &Exit{Stdout: p.Usage()}
			},
		},
		flagOpt("wait", 'W', "wait for completion of submitted job", func(o *Options) *bool { return &o.Wait }),
		{
			spec:    spec{long: "wait-all-nodes", arg: requiredArgument, id: "wait-all-nodes"},
			argName: "0|1", usage: "wait for all nodes to be booted before starting",
			set: func(p *Parser, v string, _ bool) error {
				n, err := parseInt("--wait-all-nodes", v, false)
				if err != nil {
					return err
				}
				if n > 1 {
					return optErrorf("Invalid --wait-all-nodes specification")
				}
				p.opts.WaitAllNodes = Some(n)
				return nil
			},
			reset: func(o *Options) { o.WaitAllNodes = Maybe[int]{} },
		},
		strOpt("wckey", 0, "wckey", "wckey to run job under", func(o *Options) *string { return &o.WCKey }),
		{
			spec:    spec{long: "wrap", arg: requiredArgument, id: "wrap"},
			argName: "command string", usage: "wrap command string in a sh script and submit", early: true,
			set: func(p *Parser, v string, _ bool) error {
				p.opts.Wrap = Some(v)
				return nil
			},
			reset: func(o *Options) { o.Wrap = Maybe[string]{} },
		},
		// Options only reachable through environment variables.
		{
			spec: spec{id: "switch-req", arg: requiredArgument},
			set: func(p *Parser, v string, _ bool) error {
				n, err := parseInt("--switches", v, true)
				if err != nil {
					return err
				}
				p.opts.Switches = Some(n)
				return nil
			},
		},
		{
			spec: spec{id: "switch-wait", arg: requiredArgument},
			set: func(p *Parser, v string, _ bool) error {
				if secs, inf, err := timefmt.ParseSeconds(v); err == nil && !inf && secs <= math.MaxInt32 {
					p.opts.SwitchWait = Some(int(secs))
				}
				return nil
			},
		},
	}
}

// sbatchEnv is sbatch's table of input environment variables, in its
// order (later variables override earlier ones for the same option).
func sbatchEnv() []envDef {
	return []envDef{
		{"SBATCH_IGNORE_PBS", "ignore-pbs"},
		{"SBATCH_DEBUG", "verbose"},
		{"SBATCH_ACCOUNT", "account"},
		{"SBATCH_ARRAY_INX", "array"},
		{"SBATCH_ACCTG_FREQ", "acctg-freq"},
		{"SBATCH_BATCH", "batch"},
		{"SBATCH_BURST_BUFFER", "bb"},
		{"SBATCH_CLUSTER_CONSTRAINT", "cluster-constraint"},
		{"SBATCH_CLUSTERS", "clusters"},
		{"SLURM_CLUSTERS", "clusters"},
		{"SBATCH_CONSOLIDATE_SEGMENTS", "consolidate-segments"},
		{"SBATCH_CONTAINER", "container"},
		{"SBATCH_CONTAINER_ID", "container-id"},
		{"SBATCH_CONSTRAINT", "constraint"},
		{"SBATCH_CORE_SPEC", "core-spec"},
		{"SBATCH_CPU_FREQ_REQ", "cpu-freq"},
		{"SBATCH_CPUS_PER_GPU", "cpus-per-gpu"},
		{"SBATCH_DELAY_BOOT", "delay-boot"},
		{"SBATCH_DISTRIBUTION", "distribution"},
		{"SBATCH_EXCLUSIVE", "exclusive"},
		{"SBATCH_EXPORT", "export"},
		{"SBATCH_GET_USER_ENV", "get-user-env"},
		{"SBATCH_GRES", "gres"},
		{"SBATCH_GRES_FLAGS", "gres-flags"},
		{"SBATCH_GPUS", "gpus"},
		{"SBATCH_GPU_BIND", "gpu-bind"},
		{"SBATCH_GPU_FREQ", "gpu-freq"},
		{"SBATCH_GPUS_PER_NODE", "gpus-per-node"},
		{"SBATCH_GPUS_PER_SOCKET", "gpus-per-socket"},
		{"SBATCH_GPUS_PER_TASK", "gpus-per-task"},
		{"SLURM_HINT", "hint"},
		{"SBATCH_HINT", "hint"},
		{"SBATCH_JOB_NAME", "job-name"},
		{"SBATCH_MEM_BIND", "mem-bind"},
		{"SBATCH_MEM_PER_CPU", "mem-per-cpu"},
		{"SBATCH_MEM_PER_GPU", "mem-per-gpu"},
		{"SBATCH_MEM_PER_NODE", "mem"},
		{"SBATCH_NETWORK", "network"},
		{"SBATCH_NO_KILL", "no-kill"},
		{"SBATCH_NO_REQUEUE", "no-requeue"},
		{"SBATCH_OPEN_MODE", "open-mode"},
		{"SBATCH_OVERCOMMIT", "overcommit"},
		{"SBATCH_PARTITION", "partition"},
		{"SBATCH_PROFILE", "profile"},
		{"SBATCH_QOS", "qos"},
		{"SBATCH_REQ_SWITCH", "switch-req"},
		{"SBATCH_REQUEUE", "requeue"},
		{"SBATCH_RESERVATION", "reservation"},
		{"SBATCH_SEGMENT_SIZE", "segment"},
		{"SBATCH_SIGNAL", "signal"},
		{"SBATCH_SPREAD_JOB", "spread-job"},
		{"SBATCH_SPREAD_SEGMENTS", "spread-segments"},
		{"SBATCH_THREAD_SPEC", "thread-spec"},
		{"SBATCH_THREADS_PER_CORE", "threads-per-core"},
		{"SBATCH_TIMELIMIT", "time"},
		{"SBATCH_TRES_BIND", "tres-bind"},
		{"SBATCH_TRES_PER_TASK", "tres-per-task"},
		{"SBATCH_USE_MIN_NODES", "use-min-nodes"},
		{"SBATCH_WAIT", "wait"},
		{"SBATCH_WAIT_ALL_NODES", "wait-all-nodes"},
		{"SBATCH_WAIT4SWITCH", "switch-wait"},
		{"SBATCH_WCKEY", "wckey"},
		{"SBATCH_ERROR", "error"},
		{"SBATCH_INPUT", "input"},
		{"SBATCH_OUTPUT", "output"},
	}
}
