package jobopts

import (
	"fmt"
	"math"
	"strings"

	"github.com/droverhq/drover/internal/hostlist"
	stepenv "github.com/droverhq/drover/internal/step/env"
)

// checks collects the problems a command reports together before giving
// up (Slurm's "verified = false"), and prepends them to the error that
// stops it early when one does (a fatal(), or an exit(error_exit) in the
// middle of the checks).
type checks struct {
	lines  []string
	stdout string
}

func (c *checks) errorf(format string, args ...any) {
	c.lines = append(c.lines, "error: "+fmt.Sprintf(format, args...))
}

// stop returns err with the problems found so far printed first.
func (c *checks) stop(err error) error {
	f, ok := err.(*failure)
	if !ok || (len(c.lines) == 0 && c.stdout == "") {
		return err
	}
	return &failure{
		lines:     append(append([]string(nil), c.lines...), f.lines...),
		code:      f.code,
		errorExit: f.errorExit,
		stdout:    c.stdout + f.stdout,
	}
}

// result is the command's exit(error_exit) when problems were found.
func (c *checks) result() error {
	if len(c.lines) == 0 && c.stdout == "" {
		return nil
	}
	return &failure{lines: c.lines, errorExit: true, stdout: c.stdout}
}

// finishSrun is srun's _opt_args tail and _opt_verify, in their order:
// --mpi=list and the missing command first, then the checks the three
// commands share, srun's own conflicts (collected and reported together),
// --cpu-bind's validation, --hint, the node and task counts (with the
// rules for counts inherited from the job's SLURM_NTASKS and
// SLURM_JOB_NUM_NODES), --pty, and last the MPI type, as srun checks it
// when loading the plugin.
func (p *Parser) finishSrun() error {
	o := p.opts
	if o.MPI == MPIList {
		return &Exit{Stdout: MPIListText()}
	}
	if len(p.operands) == 0 && !o.TestOnly {
		return fatalf("No command given to execute.")
	}
	o.CmdName = cmdName(p.operands)

	// An arbitrary distribution takes its counts from the node list,
	// not from the ones inherited from the job.
	if o.Distribution == "arbitrary" {
		for _, id := range []string{"ntasks", "nodes"} {
			if o.Sources[id] == FromEnv {
				p.reset(id)
			}
		}
	}
	// --gpus replaces the job's SLURM_GPUS_PER_NODE for a step.
	if o.Sources["gpus-per-node"] == FromEnv && o.setByCLI("gpus") && p.isStep() {
		p.reset("gpus-per-node")
	}
	if err := p.sharedChecks(); err != nil {
		return err
	}

	// -m pack with an inherited node count asks for one node at least.
	mpackReset := false
	if o.DistPack == "pack" && o.Sources["nodes"] == FromEnv {
		o.Nodes.Val.Min = 1
		mpackReset = true
	}
	if o.SlurmdDebug.Set {
		switch l := o.SlurmdDebug.Val; {
		case l > logLevelDebug2:
			o.SlurmdDebug.Val = logLevelDebug2
			o.Messages = append(o.Messages, fmt.Sprintf("Using max slurmd-debug value of '%s'", logLevelName(logLevelDebug2)))
		case l < logLevelError:
			o.SlurmdDebug.Val = logLevelError
			o.Messages = append(o.Messages, "Using min slurmd-debug level of "+logLevelName(logLevelError))
		}
	}

	var c checks
	if o.Quiet > 0 && o.Verbose > 0 {
		c.errorf("don't specify both --verbose (-v) and --quiet (-Q)")
	}
	if o.Exact && o.Whole {
		c.errorf("--exact and --whole are mutually exclusive.")
	}
	if o.NoAllocate && o.NodeList == "" {
		c.errorf("must specify a node list with -Z, --no-allocate.")
	}
	if o.NoAllocate && o.Exclude != "" {
		c.errorf("can not specify --exclude list with -Z, --no-allocate.")
	}
	if o.NoAllocate && o.Relative.Set {
		c.errorf("do not specify -r,--relative with -Z,--no-allocate.")
	}
	if o.Relative.Set && (o.Exclude != "" || o.NodeList != "") {
		c.errorf("-r,--relative not allowed with -w,--nodelist or -x,--exclude.")
	}
	if o.CPUBind != "" || o.IsSet("cpu-bind") {
		b, err := verifyCPUBind(o.CPUBind)
		if err != nil {
			return c.stop(err)
		}
		o.Messages = append(o.Messages, b.info...)
		if b.help {
			c.stdout += cpuBindHelp
		}
	}
	if err := p.finishHint(); err != nil {
		return c.stop(err)
	}
	if o.CPUsPerTask.Set && (!o.MinCPUs.Set || o.MinCPUs.Val < o.CPUsPerTask.Val) {
		o.MinCPUs = Some(o.CPUsPerTask.Val)
	}
	if o.setByCLI("exclusive") && o.setByCLI("overlap") {
		c.errorf("--exclusive and --overlap are mutually exclusive")
	}
	if err := p.arbitraryCounts(); err != nil {
		return c.stop(err)
	}
	if o.NtasksPerCore.Set && o.NtasksPerCore.Val > 0 {
		if o.NtasksPerCore.Val == 1 {
			p.autoCPUBind("cores")
		} else {
			p.autoCPUBind("threads")
		}
		if o.ThreadsPerCore.Set && o.ThreadsPerCore.Val < o.NtasksPerCore.Val {
			c.errorf("--ntasks-per-core (%d) can not be bigger than --threads-per-core (%d)",
				o.NtasksPerCore.Val, o.ThreadsPerCore.Val)
		}
	}
	if o.NtasksPerSocket.Set && o.NtasksPerSocket.Val > 0 {
		p.autoCPUBind("sockets")
	}
	if err := p.srunCounts(mpackReset); err != nil {
		return c.stop(err)
	}
	if o.Begin.Set && o.Deadline.Set && o.Deadline.Val.Before(o.Begin.Val) {
		return c.stop(verifyErrorf("Incompatible begin and deadline time specification"))
	}
	if !o.JobName.Set && o.CmdName != "" {
		o.JobName = Some(o.CmdName)
	}
	if o.Pty {
		o.Unbuffered = true
		if o.Error != "" || o.Input != "" || o.Output != "" {
			return c.stop(verifyErrorf("--error/--input/--output are incompatible with --pty"))
		}
	}
	if err := c.result(); err != nil {
		return err
	}

	if o.Chdir == "" {
		o.Chdir = p.cfg.Cwd
	}
	for _, step := range []func() error{p.checkGRES, p.checkPropagate} {
		if err := step(); err != nil {
			return err
		}
	}
	// srun's _opt_args: variables the step and the job inherit.
	if o.Container != "" {
		p.setenvOnce("SLURM_CONTAINER", o.Container)
	}
	if o.ContainerID != "" {
		p.setenvOnce("SLURM_CONTAINER_ID", o.ContainerID)
	}
	if o.Network != "" {
		o.EnvVars = append(o.EnvVars, EnvVar{Name: "SLURM_NETWORK", Value: o.Network})
	}
	if o.Dependency != "" {
		o.EnvVars = append(o.EnvVars, EnvVar{Name: "SLURM_JOB_DEPENDENCY", Value: o.Dependency})
	}
	if o.MPI != "" && !validMPI(o.MPI) {
		return verifyErrorf("MPI: Cannot create context for mpi/%s", o.MPI).
			with("error: MPI: Unable to load any plugin").
			with(fmt.Sprintf("error: Invalid MPI type '%s', --mpi=list for acceptable types", o.MPI))
	}
	return nil
}

// with adds a line to f.
func (f *failure) with(line string) *failure {
	f.lines = append(f.lines, line)
	return f
}

// isStep reports whether srun runs inside a job (SLURM_JOB_ID is set), as
// srun's is_step.
func (p *Parser) isStep() bool {
	_, ok := p.lookupEnv("SLURM_JOB_ID")
	return ok
}

// setenvOnce records NAME=value for the command's environment unless the
// caller's environment already has NAME (setenv without overwrite).
func (p *Parser) setenvOnce(name, value string) {
	if _, ok := p.lookupEnv(name); !ok {
		p.opts.EnvVars = append(p.opts.EnvVars, EnvVar{Name: name, Value: value})
	}
}

// finishThreadsPerCore is _validate_threads_per_core_option: for srun,
// --threads-per-core binds tasks to threads unless --cpu-bind says
// otherwise (a bare "verbose" keeps its verbosity).
func (p *Parser) finishThreadsPerCore() error {
	o := p.opts
	if p.cmd != cmdSrun || !o.ThreadsPerCore.Set {
		return nil
	}
	switch {
	case !o.IsSet("cpu-bind"):
		o.CPUBind = "threads"
	case strings.EqualFold(o.CPUBind, "verbose") || strings.EqualFold(o.CPUBind, "v"):
		o.CPUBind = "threads,verbose"
	}
	return nil
}

// cpuBindLevels are the binding levels of --cpu-bind (CPU_BIND_TO_*).
var cpuBindLevels = []string{"socket", "sockets", "core", "cores", "thread", "threads", "ldom", "ldoms"}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

// cpuBindTyped reports whether a --cpu-bind value sets a binding type
// beyond verbosity (cpu_bind_type & ~CPU_BIND_VERBOSE), which is what
// makes it conflict with --hint.
func cpuBindTyped(arg string) bool {
	if arg == "" {
		return false
	}
	for _, tok := range stepenv.SplitCPUBind(arg) {
		switch t := strings.ToLower(tok); t {
		case "q", "quiet", "v", "verbose", "rank", "help":
		default:
			return true
		}
	}
	return false
}

// cpuBindVerbose reports whether a --cpu-bind value ends up verbose.
func cpuBindVerbose(arg string) bool {
	verbose := false
	for _, tok := range stepenv.SplitCPUBind(arg) {
		switch strings.ToLower(tok) {
		case "q", "quiet":
			verbose = false
		case "v", "verbose":
			verbose = true
		}
	}
	return verbose
}

// addCPUBind adds binding tokens an option implies to --cpu-bind (srun
// only; the others have no task binding of their own).
func (p *Parser) addCPUBind(toks ...string) {
	if p.cmd != cmdSrun {
		return
	}
	have := map[string]bool{}
	cur := stepenv.SplitCPUBind(p.opts.CPUBind)
	if p.opts.CPUBind == "" {
		cur = nil
	}
	for _, t := range cur {
		have[strings.ToLower(t)] = true
	}
	for _, t := range toks {
		if !have[t] {
			cur = append(cur, t)
			have[t] = true
		}
	}
	p.opts.CPUBind = strings.Join(cur, ",")
}

// dropCPUBind removes a token from --cpu-bind.
func (p *Parser) dropCPUBind(tok string) {
	if p.opts.CPUBind == "" {
		return
	}
	var keep []string
	for _, t := range stepenv.SplitCPUBind(p.opts.CPUBind) {
		if !strings.EqualFold(t, tok) {
			keep = append(keep, t)
		}
	}
	p.opts.CPUBind = strings.Join(keep, ",")
}

// autoCPUBind adds a binding level unless --cpu-bind already has one, as
// srun does for --ntasks-per-core and --ntasks-per-socket.
func (p *Parser) autoCPUBind(level string) {
	if p.opts.CPUBind != "" {
		for _, t := range stepenv.SplitCPUBind(p.opts.CPUBind) {
			for _, l := range cpuBindLevels {
				if strings.EqualFold(t, l) {
					return
				}
			}
		}
	}
	p.addCPUBind(level)
}

// cpuBind is what verifyCPUBind found.
type cpuBind struct {
	// help is set by "help": srun prints the options and fails.
	help bool
	// info are srun's info() messages ("rank" is obsolete).
	info []string
}

// verifyCPUBind is slurm_verify_cpu_bind: each token must be a known
// binding type, and map/mask lists must hold numbers (decimal for maps,
// hexadecimal for masks) with optional "*count" multipliers. The first
// problem is reported, then srun gives up with a fatal error.
func verifyCPUBind(arg string) (cpuBind, error) {
	var b cpuBind
	fail := func(msgs ...string) (cpuBind, error) {
		f := &failure{code: ExitFatal}
		for _, m := range msgs {
			f.lines = append(f.lines, "error: "+m)
		}
		f.lines = append(f.lines, "fatal: Failed to parse --cpu-bind= values.")
		return b, f
	}
	hasPrefix := func(s, prefix string) bool {
		return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
	}
	for _, tok := range stepenv.SplitCPUBind(arg) {
		lt := strings.ToLower(tok)
		if lt == "help" {
			b.help = true
			return b, nil
		}
		var typ string
		switch {
		case lt == "q" || lt == "quiet" || lt == "v" || lt == "verbose" || lt == "one_thread" ||
			lt == "no" || lt == "none" || lt == "rank_ldom":
		case lt == "rank":
			b.info = append(b.info, "Ignoring --cpu-bind=rank. Rank binding is obsolete.")
		case hasPrefix(tok, "map_cpu") || hasPrefix(tok, "mapcpu"):
			typ = "map_cpu"
		case hasPrefix(tok, "mask_cpu") || hasPrefix(tok, "maskcpu"):
			typ = "mask_cpu"
		case hasPrefix(tok, "map_ldom") || hasPrefix(tok, "mapldom"):
			typ = "map_ldom"
		case hasPrefix(tok, "mask_ldom") || hasPrefix(tok, "maskldom"):
			typ = "mask_ldom"
		default:
			known := false
			for _, l := range cpuBindLevels {
				known = known || lt == l
			}
			if !known {
				return fail(fmt.Sprintf("unrecognized --cpu-bind argument \"%s\"", tok))
			}
		}
		if typ == "" {
			continue
		}
		// The list is between the first ':' or '=' and the next one.
		list := ""
		if i := strings.IndexAny(tok, ":="); i >= 0 {
			list = tok[i+1:]
			if j := strings.IndexAny(list, ":="); j >= 0 {
				list = list[:j]
			}
		}
		if list == "" {
			return fail(fmt.Sprintf("missing list for \"--cpu-bind=%s:<list>\"", typ))
		}
		if msgs := checkMultList(list, typ); msgs != nil {
			return fail(msgs...)
		}
	}
	return b, nil
}

// checkMultList validates a map or mask list the way _expand_mult reads
// it ("0,1*4", "0x3,f*2"), without expanding it. It returns the error
// messages, nil when the list is good.
func checkMultList(list, typ string) []string {
	mask := strings.HasPrefix(typ, "mask")
	valid := func(c byte) bool {
		if mask {
			return isHex(c)
		}
		return c >= '0' && c <= '9'
	}
	found := false
	for tok := range strings.SplitSeq(list, ",") {
		if tok == "" {
			continue
		}
		if mask && strings.HasPrefix(tok, "0x") {
			tok = tok[2:]
		}
		if i := strings.IndexByte(tok, '*'); i >= 0 {
			ast := tok[i:]
			for j := 1; j < len(ast); j++ {
				if ast[j] < '0' || ast[j] > '9' {
					return []string{fmt.Sprintf("Failed to validate number: %s, the offending character is %c", ast, ast[j])}
				}
			}
			count, _, _ := cStrtol(ast[1:])
			if count <= 0 || count == math.MaxInt64 {
				return []string{
					fmt.Sprintf("Invalid %s multiplier: %s", typ, ast[1:]),
					fmt.Sprintf("Failed to expand list: '%s'", list),
				}
			}
			tok = tok[:i]
		}
		for j := 0; j < len(tok); j++ {
			if !valid(tok[j]) {
				return []string{fmt.Sprintf("Failed to validate number: %s, the offending character is %c", tok, tok[j])}
			}
		}
		found = true
	}
	if !found {
		return []string{fmt.Sprintf("Failed to expand list: '%s'", list)}
	}
	return nil
}

const cpuBindHelp = `CPU bind options:
    --cpu-bind=         Bind tasks to CPUs
        q[uiet]         quietly bind before task runs (default)
        v[erbose]       verbosely report binding before task runs
        no[ne]          don't bind tasks to CPUs (default)
        map_cpu:<list>  specify a CPU ID binding for each task
                        where <list> is <cpuid1>,<cpuid2>,...<cpuidN>
        mask_cpu:<list> specify a CPU ID binding mask for each task
                        where <list> is <mask1>,<mask2>,...<maskN>
        rank_ldom       bind task by rank to CPUs in a NUMA locality domain
        map_ldom:<list> specify a NUMA locality domain ID for each task
                        where <list> is <ldom1>,<ldom2>,...<ldomN>
        mask_ldom:<list>specify a NUMA locality domain ID mask for each task
                        where <list> is <mask1>,<mask2>,...<maskN>
        sockets         auto-generated masks bind to sockets
        cores           auto-generated masks bind to cores
        threads         auto-generated masks bind to threads
        ldoms           auto-generated masks bind to NUMA locality domains
        help            show this help message
`

// arbitraryCounts sets the task and node counts from the node list for an
// arbitrary distribution (one task per listed name, one node per distinct
// name), for what neither the command line nor the job gave.
func (p *Parser) arbitraryCounts() error {
	o := p.opts
	if o.Distribution != "arbitrary" || (o.Nodes.Set && o.Ntasks.Set) || strings.Contains(o.NodeList, "{") {
		return nil
	}
	names, err := hostlist.Expand(o.NodeList)
	if err != nil {
		return fatalf("Invalid node list specified")
	}
	if !o.Ntasks.Set {
		o.Ntasks = Some(len(names))
	}
	if !o.Nodes.Set {
		n := len(uniqueHosts(names))
		o.Nodes = Some(NodeCount{Min: n, Max: n})
	}
	return nil
}

// srunCounts is srun's "massage the numbers": the node count a node list
// implies; one task per node by default; fewer tasks than nodes shrinks the
// node count (and the node list); and the rules for counts inherited from
// the job:
//
//   - SLURM_NTASKS and SLURM_JOB_NUM_NODES are read as -n and -N, so that
//     "srun cmd" in "sbatch -N4 -n8" runs 8 tasks on 4 nodes, and
//     "srun -N2 cmd" there still runs 8 tasks, on 2 nodes;
//   - with --ntasks-per-node (or the job's SLURM_NTASKS_PER_NODE), an
//     inherited task count gives way when -N comes from the command line:
//     the step then runs nodes*ntasks-per-node tasks;
//   - in a job, --ntasks-per-node that cannot fit the tasks on the
//     maximum node count is ignored, with a warning.
func (p *Parser) srunCounts(mpackReset bool) error {
	o := p.opts
	hlCount := 0
	if o.NodeList != "" && !o.Nodes.Set && !strings.Contains(o.NodeList, "{") {
		names, err := hostlist.Expand(o.NodeList)
		if err != nil {
			return fatalf("Invalid node list specified")
		}
		hlCount = len(uniqueHosts(names))
		o.Nodes = Some(NodeCount{Min: hlCount})
	}
	minNodes, maxNodes := 1, 0
	if o.Nodes.Set {
		minNodes, maxNodes = o.Nodes.Val.Min, o.Nodes.Val.Max
	}
	switch {
	case (o.Nodes.Set || o.IsSet("extra-node-info")) && (minNodes == maxNodes || maxNodes == 0) &&
		!o.NtasksPerNode.Set && !o.Ntasks.Set:
		// One task per node, or per socket*core*thread when all
		// three are given.
		o.impliedTasks = minNodes
		if o.SocketsPerNode.Set && o.CoresPerSocket.Set && o.ThreadsPerCore.Set {
			o.Ntasks = Some(minNodes * o.SocketsPerNode.Val * o.CoresPerSocket.Val * o.ThreadsPerCore.Val)
		}
	case o.Nodes.Set && o.Ntasks.Set:
		n := o.Ntasks.Val
		nc := o.Nodes.Val
		if n < nc.Max {
			nc.Max = n
		}
		if n < nc.Min && n > 0 {
			o.Warnings = append(o.Warnings, fmt.Sprintf("can't run %d processes on %d nodes, setting nnodes to %d",
				n, nc.Min, n))
			// As if -N had been given: the count no longer comes
			// from the environment.
			nc = NodeCount{Min: n, Max: n}
			o.Sources["nodes"] = FromCommandLine
			if hlCount > n {
				names, _ := hostlist.Expand(o.NodeList)
				names = uniqueHosts(names)
				hostlist.Sort(names)
				o.NodeList = hostlist.CompressSorted(names[:n])
			}
		}
		o.Nodes.Val = nc
		switch {
		case o.NtasksPerNode.Set && o.Sources["ntasks"] == FromEnv && o.Sources["nodes"] != FromEnv:
			p.reset("ntasks")
		case o.NtasksPerNode.Set:
			per := o.NtasksPerNode.Val
			switch {
			case nc.Max > 0 && n > nc.Max*per && !mpackReset && p.isStep():
				o.Warnings = append(o.Warnings, fmt.Sprintf("can't honor --ntasks-per-node set to %d which doesn't match the requested tasks %d with the maximum number of requested nodes %d. Ignoring --ntasks-per-node.",
					per, n, nc.Max))
				p.reset("ntasks-per-node")
			case nc.Min > 0 && n != nc.Min*per && n > per && mpackReset:
				o.Warnings = append(o.Warnings, fmt.Sprintf("can't honor --ntasks-per-node set to %d which doesn't match the requested tasks %d and -mpack, which forces min number of nodes to 1",
					per, n))
				p.reset("ntasks-per-node")
			}
		}
	}
	if o.NtasksPerNode.Set && !o.Ntasks.Set {
		nodes := 1
		if o.Nodes.Set {
			nodes = o.Nodes.Val.Min
		}
		o.Ntasks = Some(nodes * o.NtasksPerNode.Val)
	}
	return nil
}
