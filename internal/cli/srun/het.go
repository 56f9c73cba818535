package srun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/alloc"
	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/jobopts"
	"github.com/droverhq/drover/internal/cli/plugopts"
	v0044 "github.com/droverhq/drover/openapi/v0044"
	"github.com/droverhq/drover/plugins/protocol"
)

// segment is one part of srun's command line between ":" separators:
// its options and its command.
type segment struct {
	options []string
	argv    []string
	// groups are its --het-group components (nil: not given).
	groups []int
}

// splitSegments reads srun's command line as srun reads a heterogeneous
// step: components separated by ":" words, each with its own options and
// command. parse reads one part's options and returns its operands. A
// component without a command takes the next one's, as srun does.
func splitSegments(args []string, parse func([]string) (*jobopts.Options, []string, error)) ([]segment, error) {
	var segs []segment
	rest := args
	for {
		o, operands, err := parse(rest)
		if err != nil {
			return nil, err
		}
		seg := segment{options: rest[:len(rest)-len(operands)]}
		if o.HetGroup != "" {
			if seg.groups, err = parseHetGroup(o.HetGroup); err != nil {
				return nil, err
			}
		}
		i := slices.Index(operands, ":")
		if i < 0 {
			seg.argv = operands
			segs = append(segs, seg)
			break
		}
		seg.argv = operands[:i]
		segs = append(segs, seg)
		rest = operands[i+1:]
	}
	for i := len(segs) - 2; i >= 0; i-- {
		if len(segs[i].argv) == 0 {
			segs[i].argv = segs[i+1].argv
		}
	}
	return segs, nil
}

// parseHetGroup reads --het-group: component indices and ranges ("0",
// "0,2", "1,3-5").
func parseHetGroup(v string) ([]int, error) {
	var out []int
	for part := range strings.SplitSeq(v, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a || b > 127 {
			return nil, fmt.Errorf("Invalid --het-group value: %s", v)
		}
		for n := a; n <= b; n++ {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// errDuplicateGroups is srun's fatal error for a component named twice.
var errDuplicateGroups = errors.New("Duplicate het groups in single srun not supported")

// hetComponents pairs the segments with the components of the job they
// run in: each segment its --het-group, else its place; a single segment
// every component --het-group names. size is the job's component count.
func hetComponents(segs []segment, size int) ([]int, []segment, error) {
	var groups []int
	var per []segment
	for i, seg := range segs {
		gs := seg.groups
		if gs == nil {
			gs = []int{i}
		}
		for _, g := range gs {
			groups = append(groups, g)
			per = append(per, seg)
		}
	}
	top := slices.Max(groups)
	if top >= size {
		return nil, nil, fmt.Errorf("Attempt to run a job step with het group value of %d, but the job allocation has maximum value of %d", top, size-1)
	}
	seen := map[int]bool{}
	for _, g := range groups {
		if seen[g] {
			return nil, nil, errDuplicateGroups
		}
		seen[g] = true
	}
	return groups, per, nil
}

// componentEnv is srun's environment as component k of a heterogeneous
// job sees it: every SLURM_<NAME>_HET_GROUP_k read as SLURM_<NAME>, and
// the job's own SLURM_<NAME> dropped where another component has one and
// k has none, so that a step in component k takes k's size and memory.
func componentEnv(own *jobopts.Environ, k int) *jobopts.Environ {
	out := jobopts.NewEnviron(own.List())
	suffix := "_HET_GROUP_" + strconv.Itoa(k)
	mine := map[string]string{}
	others := map[string]bool{}
	for _, kv := range own.List() {
		name, v, _ := strings.Cut(kv, "=")
		i := strings.Index(name, "_HET_GROUP_")
		if !strings.HasPrefix(name, "SLURM_") || i < 0 {
			continue
		}
		if strings.HasSuffix(name, suffix) && len(name) == i+len(suffix) {
			mine[name[:i]] = v
		} else {
			others[name[:i]] = true
		}
	}
	for base := range others {
		if _, ok := mine[base]; !ok {
			out.Unset(base)
		}
	}
	for base, v := range mine {
		out.Set(base, v)
	}
	// srun reads the job's size and nodes under their short names too.
	for short, long := range map[string]string{
		"SLURM_JOBID": "SLURM_JOB_ID", "SLURM_NNODES": "SLURM_JOB_NUM_NODES", "SLURM_NODELIST": "SLURM_JOB_NODELIST",
	} {
		if v, ok := mine[long]; ok {
			out.Set(short, v)
		}
	}
	if v, ok := mine["SLURM_NTASKS"]; ok {
		out.Set("SLURM_NPROCS", v)
	} else if _, other := others["SLURM_NTASKS"]; other {
		out.Unset("SLURM_NPROCS")
	}
	return out
}

// runHet runs a step over components of a heterogeneous job: the ":"
// parts of the command line, or --het-group's components, each parsed
// against its component's view of the job's environment. It must run
// inside such a job (an allocation of its own is not made for one).
func runHet(ctx context.Context, env *clienv.Env, own *jobopts.Environ, segs []segment, plugins *plugopts.Plugins,
	parseIn func(*jobopts.Parser, *jobopts.Environ, []string) (*jobopts.Parser, []string, error)) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(env.Stderr, "srun: error: "+format+"\n", args...)
		return 1
	}
	_, inJob := own.Lookup("SLURM_JOB_ID")
	sizeVar, isHet := own.Lookup("SLURM_HET_SIZE")
	size, _ := strconv.Atoi(sizeVar)
	switch {
	case !inJob:
		return runHetAllocation(ctx, env, own, segs, plugins, parseIn)
	case !isHet || size < 1:
		size = 1
	}
	groups, per, err := hetComponents(segs, size)
	if errors.Is(err, errDuplicateGroups) {
		fmt.Fprintf(env.Stderr, "srun: fatal: %v\n", err)
		return 1
	}
	if err != nil {
		return fail("%v", err)
	}
	if !isHet {
		if len(segs) > 1 {
			return fail("heterogeneous steps in a job that is not heterogeneous are not supported by Drover")
		}
		// --het-group=0 in a plain job is the job itself.
		segs[0].groups = nil
		p, operands, err := parseIn(nil, own, append(slices.Clone(segs[0].options), segs[0].argv...))
		if err != nil {
			return exit(env, err)
		}
		return runOne(ctx, env, own, p.Options(), operands, plugins)
	}
	t, err := connect.Resolve()
	if err != nil {
		return fail("%v", err)
	}
	leaderVar, _ := own.Lookup("SLURM_JOB_ID_HET_GROUP_0")
	leader, _ := strconv.ParseUint(leaderVar, 10, 32)
	var comps []*stepOptions
	var local *plugopts.Local
	var stepEnv []string
	var prev *jobopts.Parser
	for i, g := range groups {
		e := componentEnv(own, g)
		p, operands, err := parseIn(prev, e, append(slices.Clone(per[i].options), per[i].argv...))
		if err != nil {
			return exit(env, err)
		}
		prev = p
		o := p.Options()
		id, ok := e.Lookup("SLURM_JOB_ID")
		jobID, perr := strconv.ParseUint(id, 10, 32)
		if !ok || perr != nil {
			return fail("the environment names no job for het group %d (SLURM_JOB_ID_HET_GROUP_%d)", g, g)
		}
		if i == 0 {
			// The plugins' local stages run once, for the step.
			local, stepEnv, err = plugins.Start(ctx, protocol.ContextLocal, operands, append(o.StepEnvironment(own).List(), plugopts.Env(o.PluginValues)...))
			if err != nil {
				return fail("%v", err)
			}
		}
		so, err := stepOptionsOf(o, operands, stepEnv)
		if err != nil {
			local.Exit(ctx, 0, stepEnv)
			return fail("%v", err)
		}
		so.jobID = uint32(jobID)
		so.local = local
		comps = append(comps, so)
	}
	defer func() { local.Exit(ctx, uint32(leader), comps[0].env) }()
	return runSteps(ctx, env, t, comps, uint32(leader))
}

// runHetAllocation is srun A : B outside a job: a heterogeneous
// allocation of srun's own, one component per part of the command line,
// for the length of one step over all of them.
func runHetAllocation(ctx context.Context, env *clienv.Env, own *jobopts.Environ, segs []segment, plugins *plugopts.Plugins,
	parseIn func(*jobopts.Parser, *jobopts.Environ, []string) (*jobopts.Parser, []string, error)) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(env.Stderr, "srun: error: "+format+"\n", args...)
		return 1
	}
	var opts []*jobopts.Options
	var argvs [][]string
	var descs []v0044.V0044JobDescMsg
	var prev *jobopts.Parser
	for i, seg := range segs {
		if seg.groups != nil && (len(seg.groups) != 1 || seg.groups[0] != i) {
			return fail("--het-group expected to be used within an HetJob allocation")
		}
		p, operands, err := parseIn(prev, own, append(slices.Clone(seg.options), seg.argv...))
		if err != nil {
			return exit(env, err)
		}
		prev = p
		o := p.Options()
		d := o.JobDesc()
		if !d.Name.Set {
			d.Name = v0044.NewOptString(o.CmdName)
		}
		d.CurrentWorkingDirectory = v0044.NewOptString(env.Cwd)
		opts, argvs, descs = append(opts, o), append(argvs, operands), append(descs, d)
	}
	t, err := connect.Resolve()
	if err != nil {
		return fail("%v", err)
	}
	leader, code := alloc.SubmitHet(ctx, env, "srun", descs)
	if code != 0 {
		return code
	}
	if _, err := alloc.Wait(ctx, env, "srun", leader, nil); err != nil {
		if ctx.Err() != nil {
			err = &alloc.RevokedError{JobID: leader}
			alloc.Release(env, leader, 1)
		}
		return fail("%v", err)
	}
	local, stepEnv, err := plugins.Start(ctx, protocol.ContextLocal, argvs[0], append(opts[0].StepEnvironment(own).List(), plugopts.Env(opts[0].PluginValues)...))
	if err != nil {
		alloc.Release(env, leader, 1)
		return fail("%v", err)
	}
	var comps []*stepOptions
	for i, o := range opts {
		so, err := stepOptionsOf(o, argvs[i], stepEnv)
		if err != nil {
			local.Exit(ctx, leader, stepEnv)
			alloc.Release(env, leader, 1)
			return fail("%v", err)
		}
		so.jobID, so.ownAllocation, so.local = leader+uint32(i), true, local
		comps = append(comps, so)
	}
	code = runSteps(ctx, env, t, comps, leader)
	local.Exit(ctx, leader, comps[0].env)
	if err := alloc.Release(env, leader, code); err != nil {
		fmt.Fprintf(env.Stderr, "srun: error: Unable to release job allocation %d: %v\n", leader, err)
	}
	return code
}
