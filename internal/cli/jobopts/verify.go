package jobopts

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/hostlist"
)

// Finish checks the options as a whole and derives what the command
// derives from them, in its order (sbatch's, srun's or salloc's
// _opt_verify). For sbatch: conflicts between options (with the command
// line beating the environment), the --tres-per-task siblings, node lists
// read from files, --hint, default and absolute I/O paths, the node and
// task counts sbatch infers, and GRES syntax. srun's and salloc's are
// described at finishSrun and finishSalloc. Errors come back as *Exit.
func (p *Parser) Finish() error {
	var err error
	switch p.cmd {
	case cmdSrun:
		err = p.finishSrun()
	case cmdSalloc:
		err = p.finishSalloc()
	default:
		err = p.finishSbatch()
	}
	if err != nil {
		return p.exit(err)
	}
	return nil
}

func (p *Parser) finishSbatch() error {
	for _, step := range []func() error{
		p.checkNtasksPerGPU,
		p.checkSpecCores,
		p.checkMemory,
		p.checkShare,
		p.finishTRESPerTask,
		p.checkCPUsPerTRES,
		p.finishNodeList,
		p.checkArbitrary,
		p.checkVerboseQuiet,
		p.finishHint,
		p.finishPaths,
		p.finishCounts,
		p.checkBeginDeadline,
		p.finishEnvVars,
		p.checkGRES,
		p.checkPropagate,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// sharedChecks is validate_options_salloc_sbatch_srun, the checks the
// three commands have in common, in order.
func (p *Parser) sharedChecks() error {
	for _, step := range []func() error{
		p.checkNtasksPerGPU,
		p.checkSpecCores,
		p.finishThreadsPerCore,
		p.checkMemory,
		p.checkShare,
		p.finishTRESPerTask,
		p.checkCPUsPerTRES,
		p.finishNodeList,
		p.checkArbitrary,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

func (p *Parser) checkNtasksPerGPU() error {
	o := p.opts
	gpu, tres := o.setByCLI("ntasks-per-gpu"), o.setByCLI("ntasks-per-tres")
	gpuEnv, tresEnv := o.Sources["ntasks-per-gpu"] == FromEnv, o.Sources["ntasks-per-tres"] == FromEnv
	if !gpu && !tres && !gpuEnv && !tresEnv {
		return nil
	}
	switch {
	case gpu && tres:
		if o.NtasksPerGPU.Val != o.NtasksPerTRES.Val {
			return fatalf("Inconsistent values set to --ntasks-per-gpu=%d and --ntasks-per-tres=%d ", o.NtasksPerGPU.Val, o.NtasksPerTRES.Val)
		}
	case gpu && tresEnv:
		p.reset("ntasks-per-tres")
	case tres && gpuEnv:
		p.reset("ntasks-per-gpu")
	case gpuEnv && tresEnv:
		if o.NtasksPerGPU.Val != o.NtasksPerTRES.Val {
			return fatalf("Inconsistent values set by environment variables SLURM_NTASKS_PER_GPU=%d and SLURM_NTASKS_PER_TRES=%d ", o.NtasksPerGPU.Val, o.NtasksPerTRES.Val)
		}
	}
	for _, c := range []struct{ name, msg string }{
		{"tres-per-task", "--tres-per-task is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU"},
		{"gpus-per-task", "--gpus-per-task is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU"},
		{"gpus-per-socket", "--gpus-per-socket is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU"},
		{"ntasks-per-node", "--ntasks-per-node is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU"},
	} {
		if o.setByCLI(c.name) {
			return fatalf("%s", c.msg)
		}
	}
	for _, c := range []struct{ name, msg string }{
		{"gpus-per-task", "SLURM_GPUS_PER_TASK is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU"},
		{"gpus-per-socket", "SLURM_GPUS_PER_SOCKET is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU"},
		{"ntasks-per-node", "SLURM_NTASKS_PER_NODE is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU"},
	} {
		if o.Sources[c.name] == FromEnv {
			return fatalf("%s", c.msg)
		}
	}
	if o.Sources["tres-per-task"] == FromEnv && strings.Contains(o.TRESPerTask, "gres/gpu") {
		return fatalf("SLURM_TRES_PER_TASK is mutually exclusive with --ntasks-per-gpu and SLURM_NTASKS_PER_GPU")
	}
	return nil
}

func (p *Parser) checkSpecCores() error {
	o := p.opts
	if o.setByCLI("core-spec") && o.setByCLI("thread-spec") {
		return fatalf("-S/--core-spec and --thred-spec options are mutually exclusive")
	}
	if o.Sources["core-spec"] == FromEnv && o.Sources["thread-spec"] == FromEnv {
		return fatalf("Both --core-spec and --thread-spec set using environment variables. Those options are mutually exclusive.")
	}
	return nil
}

// checkMemory is _validate_memory_options: at most one of --mem,
// --mem-per-cpu and --mem-per-gpu on the command line (directives count as
// command line); one given there clears the others set by the environment.
func (p *Parser) checkMemory() error {
	o := p.opts
	names := []string{"mem", "mem-per-cpu", "mem-per-gpu"}
	cli, env := 0, 0
	for _, n := range names {
		if o.setByCLI(n) {
			cli++
		}
		if o.Sources[n] == FromEnv {
			env++
		}
	}
	switch {
	case cli > 1:
		return fatalf("--mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.")
	case cli == 1:
		for _, n := range names {
			if !o.setByCLI(n) {
				p.reset(n)
			}
		}
	case env > 1:
		return fatalf("SLURM_MEM_PER_CPU, SLURM_MEM_PER_GPU, and SLURM_MEM_PER_NODE are mutually exclusive.")
	}
	return nil
}

func (p *Parser) checkShare() error {
	if p.opts.setByCLI("exclusive") && p.opts.setByCLI("oversubscribe") {
		return fatalf("--exclusive and --oversubscribe options are mutually exclusive")
	}
	return nil
}

// tptEntry is one entry of a --tres-per-task list: key ("cpu",
// "gres/gpu:a100") and count.
type tptEntry struct {
	key   string
	count int
}

// parseTPT splits a tres_per_task string into entries; the count follows
// '=' or the last ':'.
func parseTPT(s string) []tptEntry {
	var out []tptEntry
	for tok := range strings.SplitSeq(s, ",") {
		if tok == "" {
			continue
		}
		key, cnt := tok, 1
		if i := strings.LastIndexAny(tok, "=:"); i >= 0 {
			if n, err := strconv.Atoi(tok[i+1:]); err == nil {
				key, cnt = tok[:i], n
			}
		}
		out = append(out, tptEntry{key: key, count: cnt})
	}
	return out
}

func formatTPT(es []tptEntry) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%s=%d", e.key, e.count)
	}
	return strings.Join(parts, ",")
}

func findTPT(es []tptEntry, key string) int {
	for i, e := range es {
		if strings.EqualFold(e.key, key) {
			return i
		}
	}
	return -1
}

// finishTRESPerTask is _validate_tres_per_task: it refuses TRES that make
// no sense per task, writes --cpus-per-task and --gpus-per-task into
// tres_per_task (new entries first, as Slurm does), reads --cpus-per-task
// back from it, and binds per-task GRES implicitly (tres_bind).
func (p *Parser) finishTRESPerTask() error {
	o := p.opts
	for _, bad := range []string{"mem", "energy", "node", "billing", "fs", "vmem", "pages", "bb"} {
		l := strings.ToLower(o.TRESPerTask)
		if strings.HasPrefix(l, bad) || strings.Contains(l, ","+bad) {
			return fatalf("Invalid TRES for --tres-per-task: %s", bad)
		}
	}
	es := parseTPT(o.TRESPerTask)
	tptCLI, tptEnv := o.setByCLI("tres-per-task"), o.Sources["tres-per-task"] == FromEnv

	sync := func(key, option string, cnt int, optCLI, optEnv bool) error {
		i := findTPT(es, key)
		switch {
		case i < 0:
			es = append([]tptEntry{{key: key, count: cnt}}, es...)
		case optCLI && tptCLI:
			return fatalf("You can not have --tres-per-task=%s= and --%s please use one or the other", key, option)
		case optCLI && tptEnv:
			es[i].count = cnt
		case optEnv && tptEnv && key == "cpu" && es[i].count != cnt:
			return fatalf("%s set by two different environment variables %s=%d != SLURM_TRES_PER_TASK=cpu=%d",
				option, "SLURM_CPUS_PER_TASK", cnt, es[i].count)
		}
		return nil
	}
	if o.GPUsPerTask != "" {
		for tok := range strings.SplitSeq(o.GPUsPerTask, ",") {
			key, cnt := "gres/gpu", 0
			if i := strings.IndexAny(tok, ":="); i >= 0 {
				key += ":" + tok[:i]
				cnt, _ = strconv.Atoi(tok[i+1:])
			} else {
				cnt, _ = strconv.Atoi(tok)
			}
			if err := sync(key, "gpus-per-task", cnt, o.setByCLI("gpus-per-task"), o.Sources["gpus-per-task"] == FromEnv); err != nil {
				return err
			}
		}
	}
	if o.CPUsPerTask.Set {
		if err := sync("cpu", "cpus-per-task", o.CPUsPerTask.Val, o.setByCLI("cpus-per-task"), o.Sources["cpus-per-task"] == FromEnv); err != nil {
			return err
		}
	}
	if i := findTPT(es, "cpu"); i >= 0 {
		if es[i].count <= 0 {
			return fatalf("Invalid --tres-per-task=cpu=%d", es[i].count)
		}
		o.CPUsPerTask = Some(es[i].count)
	}
	if len(es) > 0 {
		o.TRESPerTask = formatTPT(es)
	}
	// Implicit binding of per-task GRES, GPUs of all types summed.
	gpus := 0
	var binds []string
	for _, e := range es {
		name, ok := strings.CutPrefix(e.key, "gres/")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, ":")
		if o.TRESBind != "" && strings.Contains(o.TRESBind, name) {
			continue
		}
		if name == "gpu" {
			gpus += e.count
			continue
		}
		binds = append(binds, fmt.Sprintf("gres/%s:per_task:%d", name, e.count))
	}
	if gpus > 0 {
		binds = append(binds, fmt.Sprintf("gres/gpu:per_task:%d", gpus))
	}
	if len(binds) > 0 {
		if o.TRESBind != "" {
			binds = append([]string{o.TRESBind}, binds...)
		}
		o.TRESBind = strings.Join(binds, "+")
	}
	return nil
}

// checkCPUsPerTRES is _validate_cpus_per_tres: --cpus-per-task (or
// --tres-per-task=cpu) and --cpus-per-gpu exclude each other.
func (p *Parser) checkCPUsPerTRES() error {
	o := p.opts
	cptCLI, cptEnv := o.setByCLI("cpus-per-task"), o.Sources["cpus-per-task"] == FromEnv
	if findTPT(parseTPT(o.TRESPerTask), "cpu") >= 0 {
		cptCLI = cptCLI || o.setByCLI("tres-per-task")
		cptEnv = cptEnv || o.Sources["tres-per-task"] == FromEnv
	}
	cpgCLI, cpgEnv := o.setByCLI("cpus-per-gpu"), o.Sources["cpus-per-gpu"] == FromEnv
	switch {
	case (cptCLI && cpgCLI) || (cptEnv && cpgEnv):
		return fatalf("--cpus-per-task, --tres-per-task=cpu:#, and --cpus-per-gpu are mutually exclusive")
	case cptCLI && cpgEnv:
		p.reset("cpus-per-gpu")
	case cpgCLI && cptEnv:
		p.reset("cpus-per-task")
		es := parseTPT(o.TRESPerTask)
		if i := findTPT(es, "cpu"); i >= 0 {
			es = append(es[:i], es[i+1:]...)
			o.TRESPerTask = formatTPT(es)
		}
	}
	return nil
}

// readHostFile reads a node list file the way slurm_read_hostfile does:
// host names or host lists separated by blanks, commas or new lines, with
// '#' comments.
func (p *Parser) readHostFile(name string) (string, error) {
	data, err := p.readFile(name)
	if err != nil {
		return "", err
	}
	var hosts []string
	for line := range strings.SplitSeq(string(data), "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\r' }) {
			names, err := hostlist.Expand(f)
			if err != nil {
				return "", err
			}
			hosts = append(hosts, names...)
		}
	}
	if len(hosts) == 0 {
		return "", errors.New("no host names")
	}
	return strings.Join(hosts, ","), nil
}

// finishNodeList is _validate_nodelist: --nodefile and node lists given as
// file names (anything with a '/') are read.
func (p *Parser) finishNodeList() error {
	o := p.opts
	if o.NodeFile != "" {
		l, err := p.readHostFile(o.NodeFile)
		if err != nil {
			return optErrorf("Invalid --nodefile node file")
		}
		o.NodeList = l
	}
	for _, f := range []*string{&o.NodeList, &o.Exclude} {
		if !strings.Contains(*f, "/") {
			continue
		}
		l, err := p.readHostFile(*f)
		if err != nil {
			return verifyErrorf("Unable to read node list file %s", *f)
		}
		*f = l
	}
	return nil
}

func (p *Parser) checkArbitrary() error {
	if p.opts.Distribution == "arbitrary" && p.opts.setByCLI("nodes") {
		return verifyErrorf("--nodes is incompatible with --distribution=arbitrary")
	}
	return nil
}

func (p *Parser) checkVerboseQuiet() error {
	if p.opts.Quiet > 0 && p.opts.Verbose > 0 {
		return verifyErrorf("don't specify both --verbose (-v) and --quiet (-Q)")
	}
	return nil
}

// finishHint is validate_hint_option and verify_hint: --hint loses to the
// options it stands for when both come from the command line (or both
// from the environment), and is otherwise turned into them. For srun,
// --cpu-bind with a binding type counts among those options, and the hint
// adds its binding level to --cpu-bind; sbatch and salloc pass the hint on
// in SLURM_HINT instead.
func (p *Parser) finishHint() error {
	o := p.opts
	siblings := []string{"ntasks-per-core", "threads-per-core", "sockets-per-node", "extra-node-info"}
	bind := p.cmd == cmdSrun && cpuBindTyped(o.CPUBind)
	anyCLI := bind && o.setByCLI("cpu-bind")
	for _, s := range siblings {
		anyCLI = anyCLI || o.setByCLI(s)
	}
	anyEnv := bind && o.Sources["cpu-bind"] == FromEnv
	for _, s := range []string{"ntasks-per-core", "threads-per-core", "extra-node-info"} {
		anyEnv = anyEnv || o.Sources[s] == FromEnv
	}
	switch {
	case o.setByCLI("hint") && anyCLI:
		p.reset("hint")
	case o.setByCLI("hint"):
		for _, s := range siblings {
			p.reset(s)
		}
		if bind {
			verbose := cpuBindVerbose(o.CPUBind)
			p.reset("cpu-bind")
			if verbose {
				o.CPUBind = "verbose"
			}
		}
	case anyCLI:
		p.reset("hint")
	case o.Sources["hint"] == FromEnv && anyEnv:
		p.reset("hint")
	}
	if o.Hint == "" {
		return nil
	}
	// A comma not followed by a digit separates hints.
	var toks []string
	start := 0
	for i := 0; i < len(o.Hint); i++ {
		if o.Hint[i] == ',' && (i+1 >= len(o.Hint) || o.Hint[i+1] < '0' || o.Hint[i+1] > '9') {
			toks = append(toks, o.Hint[start:i])
			start = i + 1
		}
	}
	toks = append(toks, o.Hint[start:])
	for _, tok := range toks {
		switch strings.ToLower(tok) {
		case "help":
			return &failure{stdout: hintHelp, errorExit: true}
		case "compute_bound":
			o.SocketsPerNode, o.CoresPerSocket, o.ThreadsPerCore = Maybe[int]{}, Maybe[int]{}, Some(1)
			p.addCPUBind("cores")
		case "memory_bound":
			// Slurm also asks for one core per socket, which the
			// v0.0.44 job description cannot carry.
			o.ThreadsPerCore = Some(1)
			p.addCPUBind("cores")
		case "multithread":
			o.ThreadsPerCore = Maybe[int]{}
			o.NtasksPerCore = Some(0xffff)
			p.addCPUBind("threads")
			p.dropCPUBind("one_thread")
		case "nomultithread":
			o.ThreadsPerCore = Some(1)
			p.addCPUBind("threads", "one_thread")
		default:
			return verifyErrorf("unrecognized --hint argument \"%s\", see --hint=help", tok)
		}
	}
	if p.cmd != cmdSrun {
		o.EnvVars = append(o.EnvVars, EnvVar{Name: "SLURM_HINT", Value: o.Hint})
	}
	return nil
}

const hintHelp = `Application hint options:
    --hint=             Bind tasks according to application hints
        compute_bound   use all cores in each socket
        memory_bound    use only one core in each socket
        [no]multithread [don't] use extra threads with in-core multi-threading
        help            show this help message
`

// finishPaths gives stdin its default (/dev/null) and makes the I/O paths
// absolute against the working directory, as sbatch does before submitting.
func (p *Parser) finishPaths() error {
	o := p.opts
	if o.Chdir == "" {
		o.Chdir = p.cfg.Cwd
	}
	if o.Input == "" {
		o.Input = "/dev/null"
	}
	o.Error = resolvePath(o.Chdir, o.Error)
	o.Input = resolvePath(o.Chdir, o.Input)
	o.Output = resolvePath(o.Chdir, o.Output)
	return nil
}

// finishCounts derives node and task counts the way sbatch does: a node
// list without --nodes asks for that many nodes, --cpus-per-task raises
// --mincpus, and a fixed node count without a task count implies one task
// per node (or per socket/core/thread when those are given).
func (p *Parser) finishCounts() error {
	o := p.opts
	if o.NodeList != "" && !o.Nodes.Set && !strings.Contains(o.NodeList, "{") {
		names, err := hostlist.Expand(o.NodeList)
		if err != nil {
			return fatalf("Invalid node list specified")
		}
		o.Nodes = Some(NodeCount{Min: len(uniqueHosts(names))})
	}
	if o.CPUsPerTask.Set && (!o.MinCPUs.Set || o.MinCPUs.Val < o.CPUsPerTask.Val) {
		o.MinCPUs = Some(o.CPUsPerTask.Val)
	}
	extra := o.SocketsPerNode.Set || o.CoresPerSocket.Set || o.ThreadsPerCore.Set
	nodes := o.Nodes.Val
	switch {
	case (o.Nodes.Set || o.IsSet("extra-node-info")) && (nodes.Min == nodes.Max || nodes.Max == 0) &&
		!o.NtasksPerNode.Set && !o.Ntasks.Set:
		n := max(nodes.Min, 1)
		if extra {
			for _, m := range []Maybe[int]{o.SocketsPerNode, o.CoresPerSocket, o.ThreadsPerCore} {
				if m.Set {
					n *= m.Val
				}
			}
			o.Ntasks = Some(n)
		} else {
			o.impliedTasks = n
		}
	case o.Nodes.Set && o.Ntasks.Set:
		if o.Ntasks.Val < nodes.Max {
			nodes.Max = o.Ntasks.Val
		}
		if o.Ntasks.Val < nodes.Min {
			o.Warnings = append(o.Warnings, fmt.Sprintf("can't run %d processes on %d nodes, setting nnodes to %d",
				o.Ntasks.Val, nodes.Min, o.Ntasks.Val))
			nodes.Min, nodes.Max = o.Ntasks.Val, o.Ntasks.Val
		}
		o.Nodes.Val = nodes
	}
	// --ntasks-per-node without --ntasks fixes the task count when the
	// node count is fixed, as sbatch's _opt_verify does: the job then
	// carries SLURM_NTASKS=nodes*ntasks-per-node.
	if o.NtasksPerNode.Set && o.NtasksPerNode.Val > 0 && !o.Ntasks.Set &&
		(nodes.Max == 0 || nodes.Min == nodes.Max) {
		o.Ntasks = Some(max(nodes.Min, 1) * o.NtasksPerNode.Val)
	}
	if o.Distribution == "arbitrary" && (!o.Nodes.Set || !o.Ntasks.Set) && !strings.Contains(o.NodeList, "{") {
		if o.NodeList == "" {
			return verifyErrorf("With Arbitrary distribution you need to specify a nodelist or hostfile with the -w option")
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
	}
	return nil
}

func uniqueHosts(names []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func (p *Parser) checkBeginDeadline() error {
	o := p.opts
	if o.Begin.Set && o.Deadline.Set && o.Deadline.Val.Before(o.Begin.Val) {
		return verifyErrorf("Incompatible begin and deadline time specification")
	}
	return nil
}

// finishEnvVars records the variables sbatch sets in its own environment
// from the options.
func (p *Parser) finishEnvVars() error {
	o := p.opts
	if o.Dependency != "" {
		o.EnvVars = append(o.EnvVars, EnvVar{Name: "SLURM_JOB_DEPENDENCY", Value: o.Dependency})
	}
	if o.Export.Set && !strings.EqualFold(o.Export.Val, "ALL") {
		// setenv without overwrite: a value inherited from an
		// enclosing job wins.
		if _, ok := p.lookupEnv("SLURM_EXPORT_ENV"); !ok {
			o.EnvVars = append(o.EnvVars, EnvVar{Name: "SLURM_EXPORT_ENV", Value: o.Export.Val})
		}
	}
	return nil
}

// invalidGRES is Slurm's ESLURM_INVALID_GRES text, printed by sbatch when
// a GRES request does not parse.
const invalidGRES = "Invalid generic resource (gres) specification"

// checkGRES validates the GPU and GRES requests the way the client side of
// Slurm's gres_job_state_validate does before submitting: syntax, and
// per-GPU amounts without any GPU requested.
func (p *Parser) checkGRES() error {
	o := p.opts
	gresErr := func(err error) error {
		if errors.Is(err, gres.ErrInvalidGRESType) {
			return verifyErrorf("%s", gres.ErrInvalidGRESType.Error())
		}
		return verifyErrorf("%s", invalidGRES)
	}
	gpus := false
	if o.GRES != "" && !strings.EqualFold(o.GRES, "none") {
		reqs, err := gres.ParseRequest(o.GRES)
		if err != nil {
			return gresErr(err)
		}
		for _, r := range reqs {
			gpus = gpus || r.Name == "gpu"
		}
	}
	for _, s := range []string{o.GPUs, o.GPUsPerNode, o.GPUsPerSocket, o.GPUsPerTask} {
		if s == "" {
			continue
		}
		reqs, err := gres.ParseGPUList(s)
		if err != nil {
			return gresErr(err)
		}
		gpus = gpus || len(reqs) > 0
	}
	for _, e := range parseTPT(o.TRESPerTask) {
		gpus = gpus || strings.HasPrefix(e.key, "gres/gpu")
	}
	if o.NtasksPerGPU.Set || o.NtasksPerTRES.Set {
		gpus = true
	}
	if o.MemPerGPU.Set && !gpus {
		f := verifyErrorf("Requested mem_per_tres=gres/gpu:%d but did not request any GPU.", o.MemPerGPU.Val)
		f.lines = append(f.lines, "error: "+invalidGRES)
		return f
	}
	if o.CPUsPerGPU.Set && !gpus {
		f := verifyErrorf("Requested cpus_per_tres=gres/gpu:%d but did not request any GPU.", o.CPUsPerGPU.Val)
		f.lines = append(f.lines, "error: "+invalidGRES)
		return f
	}
	return nil
}

// checkPropagate validates --propagate's list of limits.
func (p *Parser) checkPropagate() error {
	if !p.opts.Propagate.Set {
		return nil
	}
	if _, err := parseRlimits(p.opts.Propagate.Val); err != nil {
		var f *failure
		if errors.As(err, &f) {
			f.lines = append(f.lines, fmt.Sprintf("error: --propagate=%s is not valid.", p.opts.Propagate.Val))
		}
		return err
	}
	return nil
}

// reset clears an option as if it had never been given.
func (p *Parser) reset(id string) {
	for _, d := range p.defs {
		if d.id == id && d.reset != nil {
			d.reset(p.opts)
			break
		}
	}
	delete(p.opts.Sources, id)
}
