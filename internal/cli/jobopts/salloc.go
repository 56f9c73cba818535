package jobopts

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/hostlist"
)

// NewSalloc returns a parser with salloc's option table (Slurm 25.11's),
// filling a fresh Options. salloc reads its SALLOC_* variables first
// (ParseEnv), then its command line (ParseArgs, which returns the command
// to run in the allocation), then checks the whole (Finish).
func NewSalloc(cfg Config) *Parser {
	return newParser(cfg, cmdSalloc, sallocOptions(), sallocEnv())
}

// sallocOptionNames are salloc's options in slurm_opt.c's table order.
var sallocOptionNames = []string{
	"account", "acctg-freq", "autocomplete", "begin", "bell", "bb", "bbf",
	"cluster-constraint", "chdir", "cluster", "clusters", "comment",
	"consolidate-segments", "container", "container-id", "context",
	"contiguous", "constraint", "core-spec", "cores-per-socket", "cpu-freq",
	"cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot", "dependency",
	"distribution", "exclude", "exclusive", "extra", "extra-node-info",
	"gpu-bind", "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket",
	"gpus-per-task", "gres", "gres-flags", "help", "hint", "hold",
	"immediate", "job-name", "kill-command", "licenses", "mail-type",
	"mail-user", "mcs-label", "mem", "mem-bind", "mem-per-cpu", "mem-per-gpu",
	"mincpus", "network", "nice", "no-bell", "no-kill", "no-shell",
	"nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core",
	"ntasks-per-gpu", "ntasks-per-node", "ntasks-per-socket",
	"ntasks-per-tres", "oom-kill-step", "overcommit", "oversubscribe",
	"partition", "prefer", "priority", "profile", "qos", "quiet", "reboot",
	"resources", "reservation", "resv-ports", "segment", "signal",
	"sockets-per-node", "spread-job", "spread-segments", "stepmgr",
	"switch-req", "switch-wait", "switches", "tasks-per-node", "thread-spec",
	"threads-per-core", "time", "time-min", "tmp", "tres-bind",
	"tres-per-task", "use-min-nodes", "verbose", "version", "usage",
	"wait-all-nodes", "wckey", "x11",
}

func sallocOptions() []*optDef {
	return pickOptions(sallocOptionNames, sbatchOptions(), allocOptions(), sallocOnlyOptions())
}

// sallocOnlyOptions are the options only salloc has.
func sallocOnlyOptions() []*optDef {
	return []*optDef{
		{
			spec:  spec{long: "bell", arg: noArgument, id: "bell"},
			usage: "ring the terminal bell when the job is allocated",
			set: func(p *Parser, _ string, _ bool) error {
				p.opts.Bell = Some(true)
				return nil
			},
			reset: func(o *Options) { o.Bell = Maybe[bool]{} },
		},
		{
			spec:    spec{long: "kill-command", short: 'K', arg: optionalArgument, id: "kill-command"},
			argName: "signal", usage: "signal to send terminating job",
			set: func(p *Parser, v string, has bool) error {
				if !has {
					p.opts.KillCommand = Some(15) // SIGTERM
					return nil
				}
				n := sigNameToNum(v)
				if n == 0 {
					return optErrorf("Invalid --kill-command specification")
				}
				p.opts.KillCommand = Some(n)
				return nil
			},
			reset: func(o *Options) { o.KillCommand = Maybe[int]{} },
		},
		{
			spec:  spec{long: "no-bell", arg: noArgument, id: "no-bell"},
			usage: "do NOT ring the terminal bell",
			set: func(p *Parser, _ string, _ bool) error {
				p.opts.Bell = Some(false)
				return nil
			},
			reset: func(o *Options) { o.Bell = Maybe[bool]{} },
		},
		flagOpt("no-shell", 0, "immediately exit after allocating resources, without running a command", func(o *Options) *bool { return &o.NoShell }),
	}
}

// sallocEnv is salloc's table of input environment variables, in its
// order. SALLOC_POWER, whose option Slurm 25.11 no longer has, is left
// out.
func sallocEnv() []envDef {
	return []envDef{
		{"SALLOC_ACCOUNT", "account"},
		{"SALLOC_ACCTG_FREQ", "acctg-freq"},
		{"SALLOC_BELL", "bell"},
		{"SALLOC_BURST_BUFFER", "bb"},
		{"SALLOC_CLUSTER_CONSTRAINT", "cluster-constraint"},
		{"SALLOC_CLUSTERS", "clusters"},
		{"SLURM_CLUSTERS", "clusters"},
		{"SALLOC_CONSOLIDATE_SEGMENTS", "consolidate-segments"},
		{"SALLOC_CONTAINER", "container"},
		{"SALLOC_CONTAINER_ID", "container-id"},
		{"SALLOC_CONSTRAINT", "constraint"},
		{"SALLOC_CORE_SPEC", "core-spec"},
		{"SALLOC_CPU_FREQ_REQ", "cpu-freq"},
		{"SALLOC_CPUS_PER_GPU", "cpus-per-gpu"},
		{"SALLOC_DEBUG", "verbose"},
		{"SALLOC_DELAY_BOOT", "delay-boot"},
		{"SALLOC_EXCLUSIVE", "exclusive"},
		{"SALLOC_GPUS", "gpus"},
		{"SALLOC_GPU_BIND", "gpu-bind"},
		{"SALLOC_GPU_FREQ", "gpu-freq"},
		{"SALLOC_GPUS_PER_NODE", "gpus-per-node"},
		{"SALLOC_GPUS_PER_SOCKET", "gpus-per-socket"},
		{"SALLOC_GPUS_PER_TASK", "gpus-per-task"},
		{"SALLOC_GRES", "gres"},
		{"SALLOC_GRES_FLAGS", "gres-flags"},
		{"SALLOC_IMMEDIATE", "immediate"},
		{"SALLOC_HINT", "hint"},
		{"SLURM_HINT", "hint"},
		{"SALLOC_KILL_CMD", "kill-command"},
		{"SALLOC_MEM_BIND", "mem-bind"},
		{"SALLOC_MEM_PER_CPU", "mem-per-cpu"},
		{"SALLOC_MEM_PER_GPU", "mem-per-gpu"},
		{"SALLOC_MEM_PER_NODE", "mem"},
		{"SALLOC_NETWORK", "network"},
		{"SALLOC_NO_BELL", "no-bell"},
		{"SALLOC_NO_KILL", "no-kill"},
		{"SALLOC_OVERCOMMIT", "overcommit"},
		{"SALLOC_PARTITION", "partition"},
		{"SALLOC_PROFILE", "profile"},
		{"SALLOC_QOS", "qos"},
		{"SALLOC_REQ_SWITCH", "switch-req"},
		{"SALLOC_RESERVATION", "reservation"},
		{"SALLOC_SEGMENT_SIZE", "segment"},
		{"SALLOC_SIGNAL", "signal"},
		{"SALLOC_SPREAD_JOB", "spread-job"},
		{"SALLOC_SPREAD_SEGMENTS", "spread-segments"},
		{"SALLOC_THREAD_SPEC", "thread-spec"},
		{"SALLOC_THREADS_PER_CORE", "threads-per-core"},
		{"SALLOC_TIMELIMIT", "time"},
		{"SALLOC_TRES_BIND", "tres-bind"},
		{"SALLOC_TRES_PER_TASK", "tres-per-task"},
		{"SALLOC_USE_MIN_NODES", "use-min-nodes"},
		{"SALLOC_WAIT_ALL_NODES", "wait-all-nodes"},
		{"SALLOC_WAIT4SWITCH", "switch-wait"},
		{"SALLOC_WCKEY", "wckey"},
	}
}

// finishSalloc is salloc's _opt_verify: the checks the three commands
// share, --hint (passed on in SLURM_HINT), the node and task counts salloc
// infers, the plane distribution's sanity check, and the variables salloc
// sets in its own environment for the command it runs (SLURM_MEM_BIND,
// SLURM_NTASKS_PER_NODE...; a value inherited from an enclosing job wins).
// Problems that do not stop salloc at once are reported together. Running
// the user's shell when no command is given (and not --no-shell) is the
// command's business.
func (p *Parser) finishSalloc() error {
	o := p.opts
	if err := p.sharedChecks(); err != nil {
		return err
	}
	var c checks
	if o.Quiet > 0 && o.Verbose > 0 {
		c.errorf("don't specify both --verbose (-v) and --quiet (-Q)")
	}
	if o.Container != "" {
		p.setenvOnce("SLURM_CONTAINER", o.Container)
	}
	if o.ContainerID != "" {
		p.setenvOnce("SLURM_CONTAINER_ID", o.ContainerID)
	}
	if err := p.finishHint(); err != nil {
		return c.stop(err)
	}
	if o.NodeList != "" && !o.Nodes.Set && !strings.Contains(o.NodeList, "{") {
		names, err := hostlist.Expand(o.NodeList)
		if err != nil {
			return c.stop(fatalf("Invalid node list specified"))
		}
		o.Nodes = Some(NodeCount{Min: len(uniqueHosts(names))})
	}
	if o.CPUsPerTask.Set && (!o.MinCPUs.Set || o.MinCPUs.Val < o.CPUsPerTask.Val) {
		o.MinCPUs = Some(o.CPUsPerTask.Val)
	}
	if o.OOMKillStep.Set {
		p.setenvOnce("SLURM_OOM_KILL_STEP", strconv.Itoa(o.OOMKillStep.Val))
	}
	minNodes, maxNodes := 1, 0
	if o.Nodes.Set {
		minNodes, maxNodes = o.Nodes.Val.Min, o.Nodes.Val.Max
	}
	if o.Distribution == "plane" && o.PlaneSize.Val > 0 {
		tasks := 1
		if o.Ntasks.Set {
			tasks = o.Ntasks.Val
		}
		if tasks/o.PlaneSize.Val < minNodes && (minNodes-1)*o.PlaneSize.Val >= tasks {
			return c.stop(verifyErrorf("Too few processes for the requested {plane,node} distribution"))
		}
	}
	switch {
	case (o.Nodes.Set || o.IsSet("extra-node-info")) && (minNodes == maxNodes || maxNodes == 0) &&
		!o.NtasksPerNode.Set && !o.Ntasks.Set:
		// One task per node, times any of sockets, cores and
		// threads given.
		n, set := minNodes, false
		for _, m := range []Maybe[int]{o.SocketsPerNode, o.CoresPerSocket, o.ThreadsPerCore} {
			if m.Set {
				n *= m.Val
				set = true
			}
		}
		if set {
			o.Ntasks = Some(n)
		} else {
			o.impliedTasks = n
		}
	case o.Nodes.Set && o.Ntasks.Set:
		nc := o.Nodes.Val
		if o.Ntasks.Val < nc.Max {
			nc.Max = o.Ntasks.Val
		}
		if o.Ntasks.Val < nc.Min {
			o.Warnings = append(o.Warnings, fmt.Sprintf("can't run %d processes on %d nodes, setting nnodes to %d",
				o.Ntasks.Val, nc.Min, o.Ntasks.Val))
			nc.Min, nc.Max = o.Ntasks.Val, o.Ntasks.Val
		}
		o.Nodes.Val = nc
	}
	if err := p.arbitraryCounts(); err != nil {
		return c.stop(err)
	}
	if o.Begin.Set && o.Deadline.Set && o.Deadline.Val.Before(o.Begin.Val) {
		return c.stop(verifyErrorf("Incompatible begin and deadline time specification"))
	}
	if o.MemBind != "" {
		types, list, _ := parseMemBind(o.MemBind)
		if len(types) > 0 {
			mb := memBindEnv(types)
			if list != "" {
				mb += ":" + list
			}
			p.setenvOnce("SLURM_MEM_BIND", mb)
			verbose := "quiet"
			for _, t := range types {
				if t == "VERBOSE" {
					verbose = "verbose"
				}
			}
			p.setenvOnce("SLURM_MEM_BIND_VERBOSE", verbose)
		}
	}
	itoa := strconv.Itoa
	if o.NtasksPerCore.Set && o.NtasksPerCore.Val > 0 {
		p.setenvOnce("SLURM_NTASKS_PER_CORE", itoa(o.NtasksPerCore.Val))
		if o.ThreadsPerCore.Set && o.ThreadsPerCore.Val < o.NtasksPerCore.Val {
			c.errorf("--ntasks-per-core (%d) can not be bigger than --threads-per-core (%d)",
				o.NtasksPerCore.Val, o.ThreadsPerCore.Val)
		}
	}
	for _, e := range []struct {
		name string
		m    Maybe[int]
	}{
		{"SLURM_NTASKS_PER_GPU", o.NtasksPerGPU},
		{"SLURM_NTASKS_PER_NODE", o.NtasksPerNode},
		{"SLURM_NTASKS_PER_SOCKET", o.NtasksPerSocket},
		{"SLURM_NTASKS_PER_TRES", o.NtasksPerTRES},
	} {
		if e.m.Set && e.m.Val > 0 {
			p.setenvOnce(e.name, itoa(e.m.Val))
		}
	}
	if len(o.Profile) > 0 {
		names := make([]string, len(o.Profile))
		for i, n := range o.Profile {
			names[i] = n[:1] + strings.ToLower(n[1:])
		}
		o.EnvVars = append(o.EnvVars, EnvVar{Name: "SLURM_PROFILE", Value: strings.Join(names, ",")})
	}
	if o.CPUFreq != "" {
		o.EnvVars = append(o.EnvVars, EnvVar{Name: "SLURM_CPU_FREQ_REQ", Value: o.CPUFreq})
	}
	if !o.JobName.Set {
		if o.NoShell {
			o.JobName = Some("no-shell")
		} else {
			o.JobName = Some("interactive")
		}
	}
	if err := c.result(); err != nil {
		return err
	}
	return p.checkGRES()
}
