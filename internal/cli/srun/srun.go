// Package srun is the drop-in srun command: inside a job (SLURM_JOB_ID)
// it runs a job step on the job's nodes; outside one it first obtains an
// allocation, runs the step in it and releases it. The step's tasks are
// started by the node daemons, which stream their output back to srun
// (see internal/step/stream).
package srun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/alloc"
	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clusters"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/jobopts"
	"github.com/droverhq/drover/internal/cli/plugopts"
	"github.com/droverhq/drover/internal/hostlist"
	v0044 "github.com/droverhq/drover/openapi/v0044"
	"github.com/droverhq/drover/plugins/protocol"
)

// Run is the srun command (a clienv.Command).
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	own := jobopts.NewEnviron(nil)
	if env.Environ != nil {
		own = jobopts.NewEnviron(env.Environ())
	}
	clock := time.Now
	if env.Now != nil {
		clock = env.Now
	}
	plugins, err := plugopts.Load(ctx, own.Lookup)
	if err != nil {
		fmt.Fprintf(env.Stderr, "srun: error: %v\n", err)
		return 1
	}
	cfg := jobopts.Config{Prog: "srun", Now: clock(), Cwd: env.Cwd, UID: env.User.UID, LookupEnv: own.Lookup, ErrorExit: 1, PluginOptions: plugins.Options()}
	// parseIn reads one component's options against its environment,
	// after what the component before it (prev, nil for the first)
	// carries over.
	parseIn := func(prev *jobopts.Parser, e *jobopts.Environ, args []string) (*jobopts.Parser, []string, error) {
		var p *jobopts.Parser
		if prev == nil {
			c := cfg
			c.LookupEnv = e.Lookup
			p = jobopts.NewSrun(c)
		} else {
			var err error
			if p, err = prev.NextComponentIn(e.Lookup); err != nil {
				return nil, nil, err
			}
		}
		operands, err := p.Parse(args)
		o := p.Options()
		for _, m := range o.Messages {
			fmt.Fprintf(env.Stderr, "srun: %s\n", m)
		}
		if err == nil {
			for _, w := range o.Warnings {
				fmt.Fprintf(env.Stderr, "srun: Warning: %s\n", w)
			}
		}
		return p, operands, err
	}
	var o *jobopts.Options
	segs, err := splitSegments(args, func(a []string) (*jobopts.Options, []string, error) {
		p, operands, err := parseIn(nil, own, a)
		if err != nil {
			return nil, nil, err
		}
		if o == nil {
			o = p.Options()
		}
		return p.Options(), operands, nil
	})
	if err != nil {
		return exit(env, err)
	}
	operands := segs[0].argv
	for _, refused := range []struct {
		set  bool
		what string
	}{
		{o.NoAllocate, "--no-allocate"}, {o.TestOnly, "--test-only"}, {o.MultiProg, "--multi-prog"}, {o.Pty, "--pty"},
	} {
		if refused.set {
			fmt.Fprintf(env.Stderr, "srun: error: %s is not supported by Drover\n", refused.what)
			return 1
		}
	}
	if len(segs) > 1 || segs[0].groups != nil {
		return runHet(ctx, env, own, segs, plugins, parseIn)
	}
	return runOne(ctx, env, own, o, operands, plugins)
}

// runOne runs one step: in the job srun runs in, or in an allocation of
// its own for the length of the step.
func runOne(ctx context.Context, env *clienv.Env, own *jobopts.Environ, o *jobopts.Options, operands []string, plugins *plugopts.Plugins) int {
	t, err := connect.Resolve()
	if err != nil {
		fmt.Fprintf(env.Stderr, "srun: error: %v\n", err)
		return 1
	}
	if o.Clusters != "" {
		_, msgs, ok := clusters.Select(ctx, env.Client, o.Clusters)
		for _, m := range msgs {
			fmt.Fprintf(env.Stderr, "srun: error: %s\n", m)
		}
		if !ok {
			return 1
		}
	}
	// The plugins' local stages (init, init_post_opt) see srun's
	// environment, and what they set reaches the tasks.
	local, stepEnv, err := plugins.Start(ctx, protocol.ContextLocal, operands, append(o.StepEnvironment(own).List(), plugopts.Env(o.PluginValues)...))
	if err != nil {
		fmt.Fprintf(env.Stderr, "srun: error: %v\n", err)
		return 1
	}
	so, err := stepOptionsOf(o, operands, stepEnv)
	if err != nil {
		local.Exit(ctx, 0, stepEnv)
		fmt.Fprintf(env.Stderr, "srun: error: %v\n", err)
		return 1
	}
	so.local = local
	defer func() { local.Exit(ctx, so.jobID, so.env) }()
	if o.JobID.Set {
		so.jobID = o.JobID.Val
		return runStep(ctx, env, t, so)
	}
	// Outside a job: an allocation of our own, for the length of the step.
	desc := o.JobDesc()
	if !desc.Name.Set {
		desc.Name = v0044.NewOptString(o.CmdName)
	}
	desc.CurrentWorkingDirectory = v0044.NewOptString(env.Cwd)
	id, code := alloc.Submit(ctx, env, "srun", desc)
	if code != 0 {
		return code
	}
	so.jobID = id
	so.ownAllocation = true
	// The allocation request returns after the scheduling cycle that
	// could start the job, so srun asks for its step at once; only a
	// job still pending is waited for (Slurm's "queued and waiting").
	gone := false
	so.awaitAllocation = func() int {
		if _, err := alloc.Wait(ctx, env, "srun", id, nil); err != nil {
			if ctx.Err() != nil {
				err = &alloc.RevokedError{JobID: id}
				alloc.Release(env, id, 1)
			}
			fmt.Fprintf(env.Stderr, "srun: error: %v\n", err)
			gone = true
			return 1
		}
		return 0
	}
	code = runStep(ctx, env, t, so)
	if gone {
		return code
	}
	if err := alloc.Release(env, id, code); err != nil {
		fmt.Fprintf(env.Stderr, "srun: error: Unable to release job allocation %d: %v\n", id, err)
	}
	return code
}

// exit prints a *jobopts.Exit and returns its status.
func exit(env *clienv.Env, err error) int {
	var e *jobopts.Exit
	if !errors.As(err, &e) {
		fmt.Fprintf(env.Stderr, "srun: error: %v\n", err)
		return 1
	}
	io.WriteString(env.Stdout, e.Stdout)
	io.WriteString(env.Stderr, e.Stderr)
	return e.Code
}

// stepOptionsOf turns srun's options into the step to ask for.
func stepOptionsOf(o *jobopts.Options, operands, environ []string) (*stepOptions, error) {
	so := &stepOptions{
		name: o.StepName(), argv: operands, env: environ, relative: -1,
		overcommit: o.Overcommit, overlap: o.Overlap, exact: o.Exact,
		cpuBind: o.CPUBind, gpuBind: o.GPUBind, label: o.Label,
		killBadExit: o.KillOnBadExit.Set && o.KillOnBadExit.Val != 0,
		quitOnIntr:  o.QuitOnInterrupt, noStatus: o.DisableStatus, mpi: o.MPI, unbuffered: o.Unbuffered,
	}
	// -o and -e name files, or choose whose output srun shows: all
	// tasks', none, or one task's. Without -e, stderr goes where -o
	// sends stdout, as srun's launch does.
	errArg := o.Error
	if errArg == "" {
		errArg = o.Output
	}
	so.outTask, so.output = outputOf(o.Output, o.Tasks())
	so.errTask, so.errorPat = outputOf(errArg, o.Tasks())
	// srun's stdin goes to task 0 unless -i says otherwise.
	switch in := jobopts.SrunStdio(o.Input, o.Tasks()); {
	case o.Input == "":
	case in.Kind == jobopts.StdioAll:
		so.stdinTask = -2
	case in.Kind == jobopts.StdioNone:
		so.stdinTask = -1
	case in.Kind == jobopts.StdioTask:
		so.stdinTask = in.Task
	default:
		so.stdinTask, so.inputFile = -1, in.Pattern
	}
	if o.Nodes.Set {
		so.minNodes, so.maxNodes = o.Nodes.Val.Min, o.Nodes.Val.Max
		so.nodesFromEnv = o.Sources["nodes"] == jobopts.FromEnv
	}
	if o.Ntasks.Set {
		so.tasks = o.Ntasks.Val
		so.tasksFromEnv = o.Sources["ntasks"] == jobopts.FromEnv
	}
	if o.NtasksPerNode.Set {
		so.tasksPerNode = o.NtasksPerNode.Val
	}
	if o.CPUsPerTask.Set {
		so.cpusPerTask = o.CPUsPerTask.Val
	}
	if o.Mem.Set {
		so.memPerNode = o.Mem.Val
	}
	if o.MemPerCPU.Set {
		so.memPerCPU = o.MemPerCPU.Val
	}
	if o.Relative.Set {
		so.relative = o.Relative.Val
	}
	if o.WaitSec.Set {
		so.waitSec = o.WaitSec.Val
	}
	if o.TimeLimit.Set && !o.TimeLimit.Val.Infinite {
		so.timeLimit = o.TimeLimit.Val.Minutes
	}
	so.dist = o.Distribution
	if strings.HasPrefix(so.dist, "plane") && o.PlaneSize.Set && !strings.Contains(so.dist, "=") {
		so.dist = "plane=" + strconv.Itoa(o.PlaneSize.Val) + strings.TrimPrefix(so.dist, "plane")
	}
	if o.DistPack != "" {
		so.dist += "," + o.DistPack
	}
	var err error
	if so.nodeList, err = expand(o.NodeList); err != nil {
		return nil, err
	}
	if so.exclude, err = expand(o.Exclude); err != nil {
		return nil, err
	}
	so.gpusPerNode = gpuCount(o.GPUsPerNode)
	if so.gpusPerNode == 0 && strings.HasPrefix(o.GRES, "gres/gpu") {
		so.gpusPerNode = gpuCount(o.GRES)
	}
	so.gpusPerTask = gpuCount(o.GPUsPerTask)
	return so, nil
}

// outputOf reads -o or -e: which task's stream srun shows (-1: every
// task's, -2: none) or the file pattern the node daemons write instead.
func outputOf(v string, ntasks int) (task int, pattern string) {
	switch out := jobopts.SrunStdio(v, ntasks); out.Kind {
	case jobopts.StdioAll:
		return -1, ""
	case jobopts.StdioNone:
		return -2, ""
	case jobopts.StdioTask:
		return out.Task, ""
	default:
		return -1, out.Pattern
	}
}

// expand reads a node list option ("n[1-2],n4").
func expand(list string) ([]string, error) {
	if list == "" {
		return nil, nil
	}
	names, err := hostlist.Expand(list)
	if err != nil {
		return nil, fmt.Errorf("invalid node list %q: %v", list, err)
	}
	return names, nil
}

// gpuCount reads the count of a GPU request ("2", "a100:2", "gres/gpu:2").
func gpuCount(s string) int {
	if s == "" {
		return 0
	}
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		s = s[i+1:]
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0
	}
	return n
}
