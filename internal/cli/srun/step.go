package srun

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/plugopts"
	"github.com/droverhq/drover/internal/failover"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/pmi"
	"github.com/droverhq/drover/internal/slurmerr"
	stepenv "github.com/droverhq/drover/internal/step/env"
	stepproto "github.com/droverhq/drover/internal/step/proto"
	"github.com/droverhq/drover/internal/tlsconf"
)

// stepOptions are what srun needs to run one step in a job.
type stepOptions struct {
	jobID        uint32
	name         string
	minNodes     int
	maxNodes     int
	tasks        int
	tasksPerNode int
	cpusPerTask  int
	dist         string
	nodeList     []string
	exclude      []string
	relative     int
	overcommit   bool
	overlap      bool
	exact        bool
	gpusPerNode  int
	gpusPerTask  int
	// memPerNode and memPerCPU are --mem and --mem-per-cpu (MB).
	memPerNode, memPerCPU uint64
	gpuBind               string
	cpuBind               string
	label                 bool
	killBadExit           bool
	waitSec               int
	quitOnIntr            bool
	noStatus              bool
	// stdinTask gets srun's stdin (-1: none, -2: all), or the node
	// daemons read inputFile (-i with a file pattern); output and errorPat
	// are -o and -e file patterns.
	stdinTask                   int
	inputFile, output, errorPat string
	// outTask and errTask choose whose stdout and stderr srun shows
	// (-1: every task's, -2: none's).
	outTask, errTask int
	timeLimit        uint32
	argv             []string
	// nodesFromEnv and tasksFromEnv: -N and -n were inherited from the
	// job; ownAllocation: srun obtained the job itself.
	nodesFromEnv, tasksFromEnv, ownAllocation bool
	// awaitAllocation waits for srun's own allocation to run when the
	// step finds it pending; non-zero when it never will (reported).
	awaitAllocation func() int
	// local runs the plugins' local stages (nil: none).
	local *plugopts.Local
	// env is the environment the tasks start from (srun's own).
	env []string
	// mpi is --mpi (or SLURM_MPI_TYPE); "" takes MpiDefault.
	mpi string
	// unbuffered is -u: task output is relayed as it comes.
	unbuffered bool
}

// stepRun is one running step.
type stepRun struct {
	cmd  *clienv.Env
	opts *stepOptions
	// grant is the step as a whole: for a heterogeneous step, every
	// component's nodes in turn with their tasks numbered on from the
	// component before (one rank space), under the leader's job id.
	grant stepproto.Grant
	// comps are the step's parts, one for each job it runs in; het says
	// they are components of a heterogeneous job.
	comps []stepComp
	het   bool
	// mpi is the MPI type the node daemons serve ("" none, "pmi2",
	// "pmix").
	mpi string
	// target is how the controller was reached: its TLS is the nodes'.
	target connect.Target
	hub    *hub
	// cancelled is set once srun decided to end the step (a signal,
	// --kill-on-bad-exit, --wait): task deaths are then not errors.
	cancelled bool
	mu        sync.Mutex
}

// stepComp is the part of a step in one job: a heterogeneous job's
// component, or the whole step of any other job.
type stepComp struct {
	opts  *stepOptions
	grant stepproto.Grant
	// firstNode and firstTask place its nodes and tasks in the step.
	firstNode, firstTask int
}

// runStep creates a step in the job, launches it on its nodes, relays its
// I/O and signals until every task has ended, and reports the end. It
// returns srun's exit status.
func runStep(ctx context.Context, env *clienv.Env, t connect.Target, o *stepOptions) int {
	return runSteps(ctx, env, t, []*stepOptions{o}, 0)
}

// runSteps runs one step over several jobs: the components of a
// heterogeneous job (srun A : B, --het-group), each with its options, as
// one step with one id and one rank space, leader naming the job
// (SLURM_JOB_ID). With one component it is runStep.
func runSteps(ctx context.Context, env *clienv.Env, t connect.Target, comps []*stepOptions, leader uint32) int {
	o := comps[0]
	ln, host, err := listen(t)
	if err != nil {
		fmt.Fprintf(env.Stderr, "srun: error: %v\n", err)
		return 1
	}
	defer ln.Close()
	var pin string
	if t.TLSCA != "" {
		// The cluster speaks TLS: so does the step's I/O, to a
		// certificate of srun's own whose fingerprint the credential
		// carries to the nodes.
		cfg, fp, err := tlsconf.Ephemeral("srun")
		if err != nil {
			fmt.Fprintf(env.Stderr, "srun: error: %v\n", err)
			return 1
		}
		ln, pin = tls.NewListener(ln, cfg), fp
	}
	mpi := o.mpi
	if mpi == "" {
		mpi = t.MpiDefault
	}
	switch mpi {
	case "none", "openmpi":
		mpi = ""
	case "", "pmi2", "pmix":
	default:
		fmt.Fprintf(env.Stderr, "srun: error: MPI: Cannot create context for mpi/%s\n", mpi)
		return 1
	}
	s := &stepRun{cmd: env, opts: o, target: t, het: leader != 0, mpi: mpi}
	for i, co := range comps {
		req := stepproto.CreateRequest{
			Name: co.name, MinNodes: co.minNodes, MaxNodes: co.maxNodes, Tasks: co.tasks, TasksPerNode: co.tasksPerNode,
			CPUsPerTask: co.cpusPerTask, Distribution: co.dist, NodeList: co.nodeList, Exclude: co.exclude,
			Relative: co.relative, Overcommit: co.overcommit, Overlap: co.overlap, Exact: co.exact,
			GPUsPerNode: co.gpusPerNode, GPUsPerTask: co.gpusPerTask, TimeLimit: co.timeLimit,
			MemPerNode: co.memPerNode, MemPerCPU: co.memPerCPU,
			NodesFromEnv: co.nodesFromEnv, TasksFromEnv: co.tasksFromEnv,
			SrunAddr: ln.Addr().String(), SrunCert: pin, SrunHost: env.Hostname, SrunPID: uint32(os.Getpid()), Argv: co.argv,
		}
		if i > 0 {
			// The step has one id in every component.
			id := s.comps[0].grant.StepID
			req.HetStepID = &id
		}
		grant, code := createStep(ctx, env, co.jobID, req, co.awaitAllocation)
		if code != 0 {
			s.end()
			return code
		}
		for _, w := range grant.Warnings {
			fmt.Fprintf(env.Stderr, "srun: Warning: %s\n", w)
		}
		c := stepComp{opts: co, grant: grant}
		if i > 0 {
			prev := s.comps[i-1]
			c.firstNode = prev.firstNode + len(prev.grant.Nodes)
			c.firstTask = prev.firstTask + taskCount(prev.grant)
		}
		s.comps = append(s.comps, c)
	}
	s.grant = s.wholeGrant(leader)
	grant := s.grant
	// local_user_init: the step exists, its tasks are not launched yet.
	if o.env, err = o.local.UserInit(ctx, grant.JobID, grant.StepID, o.env); err != nil {
		fmt.Fprintf(env.Stderr, "srun: error: %v\n", err)
		s.end()
		return 1
	}
	stdinTask := o.stdinTask
	var creds []string
	for _, c := range s.comps {
		for range c.grant.Nodes {
			creds = append(creds, c.grant.Cred)
		}
	}
	s.hub = newHub(ln, creds, grant.Nodes, grant.Tasks, o.label, env.Stdout, env.Stderr, stdinTask)
	s.hub.outTask, s.hub.errTask = o.outTask, o.errTask
	s.hub.unbuffered = o.unbuffered
	s.hub.onAbort = s.pmiAbort
	go s.hub.serve()
	defer s.hub.close()

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGCONT)
	defer signal.Stop(sigs)

	if err := s.launch(ctx, host); err != nil {
		fmt.Fprintf(env.Stderr, "srun: error: %v\n", err)
		s.hub.signal(syscall.SIGKILL)
		s.end()
		return 1
	}
	if stdinTask != -1 && env.Stdin != nil {
		go s.hub.forwardStdin(env.Stdin)
	}
	s.wait(sigs)
	s.report()
	// Even with an allocation of its own, which is released next: the
	// step's accounting record says how it ended.
	s.end()
	return s.exitCode()
}

// taskCount is how many tasks a grant's layout has.
func taskCount(g stepproto.Grant) int {
	n := 0
	for _, t := range g.Tasks {
		n += len(t)
	}
	return n
}

// wholeGrant joins the components' grants into the step srun runs:
// their nodes in turn, tasks numbered on, the job's side joined the same
// way (srun's env for a heterogeneous step: SLURM_JOB_NODELIST of every
// component, SLURM_NTASKS of all), under leader's id when there is one.
func (s *stepRun) wholeGrant(leader uint32) stepproto.Grant {
	if len(s.comps) == 1 {
		g := s.comps[0].grant
		if leader != 0 {
			g.JobID = leader
		}
		return g
	}
	g := s.comps[0].grant
	g.Nodes, g.NodeAddrs, g.Tasks, g.CPUs, g.GPUs, g.MemMB = nil, nil, nil, nil, nil, nil
	g.JobNodes, g.JobCPUsPerNode, g.JobTasks, g.JobNumTasks = nil, nil, nil, 0
	for _, c := range s.comps {
		cg := c.grant
		g.Nodes = append(g.Nodes, cg.Nodes...)
		g.NodeAddrs = append(g.NodeAddrs, cg.NodeAddrs...)
		for _, ts := range cg.Tasks {
			shifted := make([]int, len(ts))
			for k, t := range ts {
				shifted[k] = t + c.firstTask
			}
			g.Tasks = append(g.Tasks, shifted)
		}
		g.CPUs = append(g.CPUs, cg.CPUs...)
		g.GPUs = append(g.GPUs, padGPUs(cg.GPUs, len(cg.Nodes))...)
		g.MemMB = append(g.MemMB, padMem(cg.MemMB, len(cg.Nodes))...)
		g.JobNodes = append(g.JobNodes, cg.JobNodes...)
		g.JobCPUsPerNode = append(g.JobCPUsPerNode, cg.JobCPUsPerNode...)
		g.JobTasks = append(g.JobTasks, cg.JobTasks...)
		g.JobNumTasks += cg.JobNumTasks
		// srun names the step's job after its last component.
		g.JobName = cg.JobName
	}
	if leader != 0 {
		g.JobID = leader
	}
	return g
}

func padGPUs(v [][]int, n int) [][]int {
	for len(v) < n {
		v = append(v, nil)
	}
	return v[:n]
}

func padMem(v []uint64, n int) []uint64 {
	for len(v) < n {
		v = append(v, 0)
	}
	return v[:n]
}

// listen opens srun's port for the node daemons, on the address this
// host reaches the controller from (SLURM_SRUN_COMM_HOST): the nodes
// reach the controller's network too, whether srun runs on a login host,
// inside a job, or on the controller's host itself. The port is within
// SrunPortRange when slurm.conf sets one, as srun's is.
func listen(t connect.Target) (net.Listener, string, error) {
	host := "127.0.0.1"
	if u, err := url.Parse(t.URL); err == nil {
		// A UDP "connection" sends nothing: it asks the kernel for the
		// route, and so for the source address.
		if c, err := net.Dial("udp", u.Host); err == nil {
			host = c.LocalAddr().(*net.UDPAddr).IP.String()
			c.Close()
		}
	}
	lo, hi := t.SrunPorts[0], t.SrunPorts[1]
	if lo == 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, "", fmt.Errorf("listen for the node daemons: %w", err)
		}
		return ln, host, nil
	}
	// From a random place in the range, so that sruns starting together
	// do not all try the same ports first.
	n := hi - lo + 1
	start := rand.IntN(n)
	var last error
	for i := range n {
		port := lo + (start+i)%n
		ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			return ln, host, nil
		}
		last = err
	}
	return nil, "", fmt.Errorf("listen for the node daemons: no free port in SrunPortRange %d-%d: %w", lo, hi, last)
}

// createStep asks for the step, retrying while other steps hold the CPUs
// it needs, as srun does. A job still pending is waited for with
// awaitAllocation when there is one (srun's own allocation).
func createStep(ctx context.Context, env *clienv.Env, jobID uint32, req stepproto.CreateRequest, awaitAllocation func() int) (stepproto.Grant, int) {
	path := strings.Replace(stepproto.PathCreate, "{job_id}", strconv.FormatUint(uint64(jobID), 10), 1)
	// One request id for every try: a try whose answer was lost (a
	// controller failing over) may have made the step, and the next,
	// even one answered "busy" in between, must get that step rather
	// than wait for the CPUs it holds.
	id, err := failover.NewRequestID()
	if err != nil {
		fmt.Fprintf(env.Stderr, "srun: error: Unable to create step for job %d: %v\n", jobID, err)
		return stepproto.Grant{}, 1
	}
	ctx = failover.WithRequestID(ctx, id)
	for try := 0; ; try++ {
		var g stepproto.Grant
		err := env.Call(ctx, "POST", path, req, &g)
		if err == nil {
			if try > 0 {
				fmt.Fprintf(env.Stderr, "srun: Step created for StepId=%d.%d\n", g.JobID, g.StepID)
			}
			return g, 0
		}
		var re *connect.RequestError
		if awaitAllocation != nil && errors.As(err, &re) && slurmerr.Code(re.Code) == slurmerr.JobPending {
			if code := awaitAllocation(); code != 0 {
				return g, code
			}
			awaitAllocation = nil
			try--
			continue
		}
		if !errors.As(err, &re) || slurmerr.Code(re.Code) != slurmerr.NodesBusy {
			msg := err.Error()
			if re != nil {
				msg = re.Message
			}
			fmt.Fprintf(env.Stderr, "srun: error: Unable to create step for job %d: %s\n", jobID, msg)
			return g, 1
		}
		word := "temporarily"
		if try > 0 {
			word = "still"
		}
		if try == 0 || try%60 == 0 {
			fmt.Fprintf(env.Stderr, "srun: Job %d step creation %s disabled, retrying (%s)\n", jobID, word, re.Message)
		}
		select {
		case <-ctx.Done():
			fmt.Fprintf(env.Stderr, "srun: Cancelled pending step for job %d\n", jobID)
			return g, 1
		case <-time.After(time.Second):
		}
	}
}

// launch sends every node its part of the step, at once: each
// component's nodes with their component's credential and options, all
// with the whole step's layout and environment.
func (s *stepRun) launch(ctx context.Context, host string) error {
	g := s.grant
	o := s.opts
	_, port, _ := net.SplitHostPort(s.hub.ln.Addr().String())
	portN, _ := strconv.Atoi(port)
	counts := make([]int, len(g.Tasks))
	for i, t := range g.Tasks {
		counts[i] = len(t)
	}
	// The tasks see the step's memory request when srun has one
	// (SLURM_MEM_PER_NODE or _CPU), else the job's.
	memPerNode, memPerCPU := g.MemPerNode, g.MemPerCPU
	if o.memPerNode > 0 || o.memPerCPU > 0 {
		memPerNode, memPerCPU = o.memPerNode, o.memPerCPU
	}
	jobTasks := make([]int, len(g.JobTasks))
	for i, n := range g.JobTasks {
		jobTasks[i] = int(n)
	}
	base := stepenv.StepVars(o.env, stepenv.Step{
		JobID: g.JobID, StepID: g.StepID, JobName: g.JobName, Cluster: g.Cluster,
		Partition: g.Partition, Account: g.Account, QOS: g.QOS,
		JobNodes: g.JobNodes, JobCPUsPerNode: g.JobCPUsPerNode, JobNumTasks: int(g.JobNumTasks), JobTasksPerNode: jobTasks,
		Nodes: g.Nodes, TasksPerNode: counts, CPUsPerTask: o.cpusPerTask, Distribution: g.Distribution,
		CPUBind: o.cpuBind, SrunHost: host, SrunPort: portN, Umask: umask(),
		GPUsPerNode: o.gpusPerNode, GPUsPerTask: o.gpusPerTask, SubmitDir: s.cmd.Cwd, SubmitHost: s.cmd.Hostname,
		TimeLimitMin: g.TimeLimit, MemPerCPU: memPerCPU, MemPerNode: memPerNode, StepMem: o.memPerNode > 0 || o.memPerCPU > 0,
		UID: g.UID, GID: g.GID, User: g.User, OwnAllocation: o.ownAllocation, HetStep: s.het,
	})
	hosts := make([]string, len(g.NodeAddrs))
	for i, a := range g.NodeAddrs {
		hosts[i] = a
		if h, _, err := net.SplitHostPort(a); err == nil {
			hosts[i] = h
		}
	}
	errs := make([]error, len(g.Nodes))
	var wg sync.WaitGroup
	tlsClient, err := s.target.TLS()
	if err != nil {
		return err
	}
	client := nodeproto.NewClient(nil, tlsClient)
	var mapping string
	if s.mpi != "" {
		nodeOf := make([]int, taskCount(g))
		for i, ts := range g.Tasks {
			for _, t := range ts {
				nodeOf[t] = i
			}
		}
		mapping = pmi.ProcessMapping(nodeOf)
	}
	for _, c := range s.comps {
		cg, co := c.grant, c.opts
		for j := range cg.Nodes {
			i := c.firstNode + j
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := nodeproto.StepLaunch{
					Cred: cg.Cred, JobID: cg.JobID, StepID: cg.StepID, NodeIndex: i, Tasks: g.Tasks[i],
					Nodes: g.Nodes, TasksPerNode: counts, Argv: co.argv, Env: base, Cwd: s.cmd.Cwd,
					UID: cg.UID, GID: cg.GID, User: cg.User, CPUsPerTask: max(co.cpusPerTask, 1), CPUBind: co.cpuBind,
					GPUsPerTask: co.gpusPerTask, GPUBind: co.gpuBind, StdOut: o.output, StdErr: o.errorPat, StdIn: o.inputFile,
					StdinTask: o.stdinTask, JobName: g.JobName, MemPerCPU: cg.MemPerCPU, KillWait: time.Duration(cg.KillWait) * time.Second,
				}
				if s.mpi != "" {
					l.MPI, l.PMIJobID, l.PMIMapping = s.mpi, fmt.Sprintf("%d.%d", g.JobID, g.StepID), mapping
					if s.mpi == "pmix" {
						l.PMIRanks = g.Tasks
					}
				}
				if j < len(cg.GPUs) {
					l.GPUs = cg.GPUs[j]
				}
				if j < len(cg.MemMB) {
					l.MemLimitMB = cg.MemMB[j]
				}
				l.CPUs = stepCPUs(cg, j)
				l.NodeAddrs = hosts
				if cg.NodeAddrs[j] == "" {
					errs[i] = fmt.Errorf("Task launch for StepId=%d.%d failed on node %s: Communication connection failure", cg.JobID, cg.StepID, cg.Nodes[j])
					return
				}
				if err := client.Post(ctx, "", client.URL(cg.NodeAddrs[j], nodeproto.PathStepLaunch), l, nil); err != nil {
					errs[i] = fmt.Errorf("Task launch for StepId=%d.%d failed on node %s: %v", cg.JobID, cg.StepID, cg.Nodes[j], err)
				}
			}()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// wait relays srun's signals until every task has ended.
func (s *stepRun) wait(sigs <-chan os.Signal) {
	var lastIntr time.Time
	var waitTimer <-chan time.Time
	badExit := false
	firstExit := false
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.hub.doneCh:
			return
		case sig := <-sigs:
			s.onSignal(sig.(syscall.Signal), &lastIntr)
		case <-tick.C:
			// --kill-on-bad-exit and --wait watch the tasks' ends.
			if s.opts.killBadExit && !badExit && s.anyBadExit() {
				badExit = true
				s.terminate()
			}
			if s.opts.waitSec > 0 && !firstExit && s.anyExit() {
				firstExit = true
				waitTimer = time.After(time.Duration(s.opts.waitSec) * time.Second)
			}
		case <-waitTimer:
			fmt.Fprintf(s.cmd.Stderr, "srun: First task exited %ds ago\n", s.opts.waitSec)
			s.printStatus()
			s.terminate()
		}
	}
}

func (s *stepRun) onSignal(sig syscall.Signal, lastIntr *time.Time) {
	id := fmt.Sprintf("StepId=%d.%d", s.grant.JobID, s.grant.StepID)
	switch sig {
	case syscall.SIGINT:
		if s.opts.quitOnIntr || time.Since(*lastIntr) < time.Second {
			fmt.Fprintf(s.cmd.Stderr, "srun: sending Ctrl-C to %s\n", id)
			s.hub.signal(syscall.SIGINT)
			s.terminate()
			return
		}
		if s.opts.noStatus {
			fmt.Fprintf(s.cmd.Stderr, "srun: sending Ctrl-C to %s\n", id)
			s.hub.signal(syscall.SIGINT)
		} else {
			fmt.Fprintln(s.cmd.Stderr, "srun: interrupt (one more within 1 sec to abort)")
			s.printStatus()
		}
		*lastIntr = time.Now()
	case syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP:
		if sig == syscall.SIGQUIT {
			fmt.Fprintln(s.cmd.Stderr, "srun: Quit")
		}
		fmt.Fprintln(s.cmd.Stderr, "srun: forcing job termination")
		s.setCancelled()
		s.hub.signal(syscall.SIGKILL)
	case syscall.SIGCONT:
		fmt.Fprintln(s.cmd.Stderr, "srun: got SIGCONT")
	default:
		s.hub.signal(sig)
	}
}

// pmiAbort ends the step when a task aborts it through PMI
// (MPI_Abort), as Slurm's mpi/pmi2 has srun do.
func (s *stepRun) pmiAbort(task uint32, code int32, msg string) {
	fmt.Fprintf(s.cmd.Stderr, "srun: error: StepId=%d.%d: task %d: %s\n", s.grant.JobID, s.grant.StepID, task, msg)
	s.setCancelled()
	s.hub.signal(syscall.SIGKILL)
}

func (s *stepRun) setCancelled() {
	s.mu.Lock()
	s.cancelled = true
	s.mu.Unlock()
}

// terminate ends the step: SIGCONT, SIGTERM, then SIGKILL after KillWait,
// as slurmstepd does for a step that is cancelled.
func (s *stepRun) terminate() {
	s.setCancelled()
	s.hub.signal(syscall.SIGCONT)
	s.hub.signal(syscall.SIGTERM)
	wait := time.Duration(s.grant.KillWait) * time.Second
	go func() {
		select {
		case <-s.hub.doneCh:
		case <-time.After(wait):
			s.hub.signal(syscall.SIGKILL)
		}
	}()
}

func (s *stepRun) anyBadExit() bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	for _, st := range s.hub.status {
		if st.Signaled || st.Code != 0 {
			return true
		}
	}
	return false
}

func (s *stepRun) anyExit() bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return len(s.hub.status) > 0
}

// printStatus is the first Ctrl-C's report: which tasks still run.
func (s *stepRun) printStatus() {
	run := s.hub.running()
	if len(run) == 0 {
		return
	}
	word := "task"
	if len(run) > 1 {
		word = "tasks"
	}
	fmt.Fprintf(s.cmd.Stderr, "srun: StepId=%d.%d %s %s: running\n", s.grant.JobID, s.grant.StepID, word, gres.FormatIDList(run))
}

// report prints srun's lines for tasks that failed, grouped by node and
// status as srun's task exit messages group them.
func (s *stepRun) report() {
	s.hub.mu.Lock()
	status := s.hub.status
	s.hub.mu.Unlock()
	s.mu.Lock()
	cancelled := s.cancelled
	s.mu.Unlock()
	for i, node := range s.grant.Nodes {
		groups := map[taskStatus][]int{}
		var order []taskStatus
		for _, t := range s.grant.Tasks[i] {
			st := status[t]
			if (!st.Signaled && st.Code == 0) || (st.Signaled && cancelled) {
				continue
			}
			key := taskStatus{Code: st.Code, Signaled: st.Signaled}
			if _, ok := groups[key]; !ok {
				order = append(order, key)
			}
			groups[key] = append(groups[key], t)
		}
		for _, st := range order {
			ids := groups[st]
			word := "task"
			if len(ids) > 1 {
				word = "tasks"
			}
			what := fmt.Sprintf("Exited with exit code %d", st.Code)
			if st.Signaled {
				what = signalText(syscall.Signal(st.Code))
			}
			fmt.Fprintf(s.cmd.Stderr, "srun: error: %s: %s %s: %s\n", node, word, gres.FormatIDList(ids), what)
		}
	}
}

// exitCode is srun's status: the highest exit code, or 128 plus the
// highest signal when a task was killed (a signal outranks exit codes).
func (s *stepRun) exitCode() int {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	code, sig := 0, 0
	for _, st := range s.hub.status {
		if st.Signaled {
			sig = max(sig, int(st.Code))
		} else {
			code = max(code, int(st.Code))
		}
	}
	if sig > 0 {
		return 128 + sig
	}
	return code
}

// end tells the controller the step is over, in every job it ran in.
// Ending a step twice ends it once, so the report is sent again when its
// answer was lost (a controller failing over); a step the controller no
// longer has (the first try's, or its job's end, removed it) is over.
func (s *stepRun) end() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctx = failover.Idempotent(ctx)
	report := s.endReport()
	for _, c := range s.comps {
		path := strings.NewReplacer("{job_id}", strconv.FormatUint(uint64(c.grant.JobID), 10),
			"{step_id}", strconv.FormatUint(uint64(c.grant.StepID), 10)).Replace(stepproto.PathEnd)
		err := s.cmd.Call(ctx, "POST", path, report, nil)
		var re *connect.RequestError
		if errors.As(err, &re) && slurmerr.Code(re.Code) == slurmerr.InvalidJobID {
			continue
		}
		if err != nil {
			fmt.Fprintf(s.cmd.Stderr, "srun: error: step complete for StepId=%d.%d: %v\n", c.grant.JobID, c.grant.StepID, err)
		}
	}
}

// endReport is how the step ended, for its accounting record: the
// highest exit code of its tasks, or the highest signal that ended one.
func (s *stepRun) endReport() stepproto.EndRequest {
	var out stepproto.EndRequest
	if s.hub != nil {
		s.hub.mu.Lock()
		for _, st := range s.hub.status {
			if st.Signaled {
				out.Signal = max(out.Signal, st.Code)
			} else {
				out.ExitCode = max(out.ExitCode, st.Code)
			}
		}
		s.hub.mu.Unlock()
	}
	s.mu.Lock()
	out.Cancelled = s.cancelled
	s.mu.Unlock()
	return out
}

// signalText is strsignal's wording ("Killed", "Segmentation fault").
func signalText(sig syscall.Signal) string {
	t := sig.String()
	if t == "" || strings.HasPrefix(t, "signal ") {
		return "Unknown signal " + strconv.Itoa(int(sig))
	}
	return strings.ToUpper(t[:1]) + t[1:]
}

// umask reads the process's umask (SLURM_UMASK) without changing it for
// more than an instant.
func umask() string {
	old := syscall.Umask(0o022)
	syscall.Umask(old)
	return fmt.Sprintf("%04o", old)
}

// stepCPUs are the CPU ids the step may use on node i (SLURM_CPUS_ON_NODE,
// and what --cpu-bind divides between the tasks): as many as the step
// holds there, or as the job holds for an --overlap step. Allocations count
// CPUs without naming them, so they are numbered from 0, which is right
// for a job alone on its nodes.
func stepCPUs(g stepproto.Grant, i int) []int {
	n := 0
	if i < len(g.CPUs) {
		n = int(g.CPUs[i])
	}
	if n == 0 {
		if j := slices.Index(g.JobNodes, g.Nodes[i]); j >= 0 && j < len(g.JobCPUsPerNode) {
			n = int(g.JobCPUsPerNode[j])
		}
	}
	cpus := make([]int, n)
	for k := range cpus {
		cpus[k] = k
	}
	return cpus
}
