package nodeagent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/acctgather"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/outpattern"
	"github.com/droverhq/drover/internal/proctrack"
	stepcred "github.com/droverhq/drover/internal/step/cred"
	stepenv "github.com/droverhq/drover/internal/step/env"
	stepio "github.com/droverhq/drover/internal/step/stream"
	"github.com/droverhq/drover/internal/tlsconf"
	"github.com/droverhq/drover/internal/usercred"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/spank"
)

// credPurpose is what a step credential is spent on in the replay cache:
// a node launches a step's tasks once per credential, as slurmd refuses a
// replayed REQUEST_LAUNCH_TASKS.
const credPurpose = "launch"

// msgUserNotFound is Slurm's ESLURMD_UID_NOT_FOUND text.
const msgUserNotFound = "User not found on host"

// stepDialTimeout bounds the connection back to srun.
const stepDialTimeout = 10 * time.Second

// stepShutdownWait bounds how long a stopping daemon waits for its steps
// to end after killing them.
const stepShutdownWait = 10 * time.Second

// stepStdinQueue is how many stdin chunks from srun may wait for a task
// that does not read yet; beyond that srun's connection is not read
// (back-pressure), as slurmstepd stops reading a client it cannot write.
const stepStdinQueue = 64

// stepKey names a step of a job.
type stepKey struct{ job, step uint32 }

// step is one job step's tasks on this node and their connection to srun:
// the part slurmstepd plays for srun's steps.
type step struct {
	agent *Agent
	key   stepKey
	l     *nodeproto.StepLaunch
	cred  stepcred.Cred
	// token is the signed credential; it goes back to srun in the
	// Hello, which shows srun that this daemon was sent the launch.
	token string
	// ident is the user the tasks run as when the daemon runs as root;
	// nil otherwise (they run as the daemon's user).
	ident *usercred.Identity
	bind  cpuBind
	// devs is the step's GRES set-up (nil: nothing to add).
	devs *gresSetup
	// gpuBind is --gpu-bind; gpuCores the CPUs near each node GPU.
	gpuBind  gres.GPUBind
	gpuCores map[int][]int
	// spank is the node's launch hooks, nil without any.
	spank *spank.Stack
	// bindList is SLURM_CPU_BIND_LIST, the same for every task here.
	bindList string
	// cwd is where tasks start; cwdErr says why the launch's Cwd could
	// not be used (slurmstepd then goes to /tmp and says so).
	cwd    string
	cwdErr error
	tasks  []*stepTask

	out     *stepio.Writer
	leaders sync.WaitGroup // tasks whose leader process has not ended
	exits   sync.WaitGroup // tasks whose Exit frame is not sent yet
	reader  sync.WaitGroup // the goroutine reading srun's frames
	lostOne sync.Once
	cwdOnce sync.Once
	done    chan struct{} // closed when the step is over

	mu        sync.Mutex
	conn      net.Conn
	ending    bool // asked to end: tasks starting late are ended too
	killed    bool // past KillWait: tasks starting late are killed
	finished  bool
	killTimer *time.Timer
	// exitsSent counts the Exit frames written: once every task's is,
	// srun may close its side first.
	exitsSent atomic.Int32
	// group holds every task's process tree (one cgroup per step, as
	// Slurm's); nil until the tasks start.
	group *proctrack.Group
	// gather samples the tasks once they started (nil before).
	gather *gatherer
	// pmi serves PMI to the tasks of an MPI step (nil: none).
	pmi *stepPMI
}

// stepTask is one task of a step on this node.
type stepTask struct {
	id, local int
	// gpus are the GPUs the task is bound to (see taskGPUs).
	gpus []int
	// cmd is the task's process once started; env its environment.
	cmd *exec.Cmd
	env []string
	// stdin carries srun's input for the task (nil: it reads /dev/null
	// or a file); stdinW is the pipe it is written to. stdinClosed is
	// only touched by the goroutine reading srun's frames.
	stdin       chan []byte
	stdinW      *os.File
	stdinClosed bool
	pumps       sync.WaitGroup
	// usage is what the task used (nil until it ended).
	usage *job.Usage
}

// launchError is a refused step launch: the HTTP status, the Slurm text
// srun prints, and the detail kept for the node's log.
type launchError struct {
	status int
	msg    string
	err    error
}

func (e *launchError) Error() string {
	if e.err == nil {
		return e.msg
	}
	return e.msg + ": " + e.err.Error()
}

func (e *launchError) Unwrap() error { return e.err }

// handleStepLaunch serves srun's REQUEST_LAUNCH_TASKS: it checks the
// credential, answers as soon as the step is set up (srun waits for every
// node's answer before it expects their connections) and then runs the
// step in the background, as slurmd answers once slurmstepd is forked.
func (a *Agent) handleStepLaunch(w http.ResponseWriter, r *http.Request) {
	var l nodeproto.StepLaunch
	if err := nodeproto.Decode(r, &l); err != nil {
		nodeproto.Fail(w, http.StatusBadRequest, err)
		return
	}
	s, err := a.newStep(&l, time.Now())
	if err != nil {
		a.logger.Warn("step launch refused", "job", l.JobID, "step", l.StepID, "from", r.RemoteAddr, "err", err)
		var le *launchError
		if !errors.As(err, &le) {
			le = &launchError{status: http.StatusInternalServerError, msg: err.Error()}
		}
		nodeproto.Fail(w, le.status, errors.New(le.msg))
		return
	}
	// srun is reached before the answer, so that a node that cannot
	// reach it fails the launch, as slurmstepd's failed I/O connection
	// fails srun's, instead of leaving srun waiting.
	conn, err := a.dialSrun(s.cred)
	if err != nil {
		a.logger.Warn("cannot connect to srun, tasks not started", "job", l.JobID, "step", l.StepID, "srun", s.cred.SrunAddr, "err", err)
		s.abandon()
		nodeproto.Fail(w, http.StatusInternalServerError, errors.New("Communication connection failure"))
		return
	}
	go s.run(conn)
	nodeproto.Reply(w, http.StatusOK, struct{}{})
}

// abandon forgets a step whose tasks were never started.
func (s *step) abandon() {
	a := s.agent
	s.finish()
	a.mu.Lock()
	if a.steps[s.key] == s {
		delete(a.steps, s.key)
	}
	a.mu.Unlock()
	a.stepWG.Done()
}

// newStep validates a launch and registers its step.
func (a *Agent) newStep(l *nodeproto.StepLaunch, now time.Time) (*step, error) {
	bad := func(format string, args ...any) error {
		return &launchError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case len(l.Argv) == 0 || l.Argv[0] == "":
		// slurmstepd's words when a task has no program.
		return nil, bad("No executable program specified for this task")
	case len(l.Tasks) == 0:
		return nil, bad("no tasks to launch on node %s", a.cfg.Name)
	case l.NodeIndex < 0:
		return nil, bad("invalid node index %d", l.NodeIndex)
	case l.StdinTask < -2:
		return nil, bad("invalid stdin task %d", l.StdinTask)
	}
	bind, err := parseCPUBind(l.CPUBind)
	if err != nil {
		return nil, bad("%v", err)
	}
	gpuBind, err := gres.ParseGPUBind(l.GPUBind)
	if err != nil {
		return nil, bad("Invalid --gpu-bind argument: %v", err)
	}
	// The credential is checked after the request itself, so that a
	// malformed request does not spend it.
	cred, err := a.verifyStepCred(l, now)
	if err != nil {
		return nil, err
	}
	if a.cfg.TLSClient != nil && cred.SrunCert == "" {
		// The step's I/O would cross the network in clear text.
		return nil, &launchError{status: http.StatusForbidden, msg: "Invalid job credential: the cluster speaks TLS and the credential names no certificate of srun's"}
	}
	s := &step{
		agent: a, key: stepKey{l.JobID, l.StepID}, l: l, cred: cred, token: l.Cred,
		bind: bind, bindList: bind.envList(l), done: make(chan struct{}),
		gpuBind: gpuBind, gpuCores: a.gpuCores(),
	}
	if os.Geteuid() == 0 {
		id, err := usercred.Lookup(cred.UID)
		if err == nil {
			err = id.CheckGID(cred.GID)
		}
		if err != nil {
			return nil, &launchError{status: http.StatusInternalServerError, msg: msgUserNotFound, err: err}
		}
		s.ident = id
	}
	if s.pmi, err = s.newStepPMI(); err != nil {
		return nil, bad("%v", err)
	}
	s.cwd = l.Cwd
	if st, err := os.Stat(s.cwd); err != nil || !st.IsDir() {
		// slurmstepd falls back to /tmp when the working folder is
		// unusable, and tells the user.
		if err == nil {
			err = syscall.ENOTDIR
		}
		s.cwd, s.cwdErr = os.TempDir(), err
	}
	for i, id := range l.Tasks {
		t := &stepTask{id: id, local: i}
		if s.stdinFromSrun(t) {
			t.stdin = make(chan []byte, stepStdinQueue)
		}
		s.tasks = append(s.tasks, t)
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.closing:
		return nil, &launchError{status: http.StatusServiceUnavailable, msg: "node daemon is shutting down"}
	case a.steps[s.key] != nil:
		return nil, &launchError{status: http.StatusConflict, msg: fmt.Sprintf("step %d.%d already runs on node %s", l.JobID, l.StepID, a.cfg.Name)}
	}
	a.steps[s.key] = s
	a.stepWG.Add(1)
	return s, nil
}

// verifyStepCred checks a launch's credential as slurmd does: signed with
// the cluster key, not expired, for this job, step and user, naming this
// node, and not used here before.
func (a *Agent) verifyStepCred(l *nodeproto.StepLaunch, now time.Time) (stepcred.Cred, error) {
	refuse := func(err error) error {
		msg := stepcred.ErrBadCred.Error()
		switch {
		case errors.Is(err, stepcred.ErrExpired):
			msg = stepcred.ErrExpired.Error()
		case errors.Is(err, stepcred.ErrReplayed):
			msg = stepcred.ErrReplayed.Error()
		}
		return &launchError{status: http.StatusForbidden, msg: msg, err: err}
	}
	ring := a.cfg.Keys.Ring()
	if ring == nil {
		// Say why plainly: every launch fails until slurm.key is there.
		return stepcred.Cred{}, &launchError{
			status: http.StatusForbidden,
			msg:    fmt.Sprintf("%s: node %s has no usable credential key (slurm.key)", stepcred.ErrBadCred, a.cfg.Name),
		}
	}
	var c stepcred.Cred
	var err error
	for _, key := range ring.Secrets() {
		// During a key rotation a credential may be signed with
		// either key.
		if c, err = stepcred.Verify(key, l.Cred, now); !errors.Is(err, stepcred.ErrBadCred) {
			break
		}
	}
	if err != nil {
		a.logger.Warn("step launch refused", "job", l.JobID, "step", l.StepID, "uid", l.UID, "err", err)
		return c, refuse(err)
	}
	switch {
	case c.JobID != l.JobID || c.StepID != l.StepID:
		return c, refuse(fmt.Errorf("credential is for step %d.%d, launch asks for %d.%d: %w", c.JobID, c.StepID, l.JobID, l.StepID, stepcred.ErrBadCred))
	case c.UID != l.UID:
		return c, refuse(fmt.Errorf("credential is for uid %d, launch asks for uid %d: %w", c.UID, l.UID, stepcred.ErrBadCred))
	case !slices.Contains(c.Nodes, a.cfg.Name):
		return c, refuse(fmt.Errorf("credential does not list node %s: %w", a.cfg.Name, stepcred.ErrBadCred))
	}
	if err := a.replay.Use(c, credPurpose, now); err != nil {
		return c, refuse(err)
	}
	return c, nil
}

// stepsOf lists the steps of job here: all of them, or the one asked.
func (a *Agent) stepsOf(job uint32, id *uint32) []*step {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []*step
	for k, s := range a.steps {
		if k.job == job && (id == nil || k.step == *id) {
			out = append(out, s)
		}
	}
	return out
}

// signalSteps delivers a controller's signal or terminate request to the
// job's steps on this node.
func (a *Agent) signalSteps(req *nodeproto.Signal) {
	for _, s := range a.stepsOf(req.JobID, req.StepID) {
		if req.Terminate {
			s.terminate(req.KillWait)
		} else {
			s.signal(syscall.Signal(req.Signal))
		}
	}
}

// endSteps ends every step when the daemon stops. A step's I/O runs
// through this daemon, so unlike slurmstepd's steps they cannot outlive
// it: their tasks are killed, and srun is given a moment to read their
// ends.
func (a *Agent) endSteps() {
	a.mu.Lock()
	a.closing = true
	steps := make([]*step, 0, len(a.steps))
	for _, s := range a.steps {
		steps = append(steps, s)
	}
	a.mu.Unlock()
	a.stepCancel()
	for _, s := range steps {
		s.terminate(0)
		s.kill() // at once, even if an earlier request gave a KillWait
		s.mu.Lock()
		if s.conn != nil {
			_ = s.conn.SetDeadline(time.Now().Add(2 * time.Second))
		}
		s.mu.Unlock()
	}
	done := make(chan struct{})
	go func() { a.stepWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stepShutdownWait):
		a.logger.Warn("job steps did not end in time", "wait", stepShutdownWait)
	}
}

// dialSrun connects to the step's srun: under TLS, to the certificate
// the credential names (srun makes its own; the controller signed its
// fingerprint).
func (a *Agent) dialSrun(c stepcred.Cred) (net.Conn, error) {
	d := &net.Dialer{Timeout: stepDialTimeout}
	if c.SrunCert == "" {
		return d.DialContext(a.stepCtx, "tcp", c.SrunAddr)
	}
	cfg, err := tlsconf.Pinned(c.SrunCert)
	if err != nil {
		return nil, err
	}
	td := &tls.Dialer{NetDialer: d, Config: cfg}
	return td.DialContext(a.stepCtx, "tcp", c.SrunAddr)
}

// run starts the tasks and reports to srun, on conn, until they end.
func (s *step) run(conn net.Conn) {
	a := s.agent
	defer a.stepWG.Done()
	defer func() {
		a.mu.Lock()
		if a.steps[s.key] == s {
			delete(a.steps, s.key)
		}
		a.mu.Unlock()
	}()
	log := a.logger.With("job", s.key.job, "step", s.key.step)

	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	s.out = stepio.NewWriter(conn)
	s.send(stepio.Frame{Kind: stepio.Hello, Node: uint32(s.l.NodeIndex), Data: []byte(s.token)})

	if err := s.spankStepStart(); err != nil {
		log.Warn("step refused by a launch hook", "err", err)
		for _, t := range s.tasks {
			s.spankFail(t, err)
		}
		if err := s.out.Flush(); err != nil {
			log.Debug("flush step output", "err", err)
		}
		s.finish()
		return
	}
	began := time.Now()
	s.startTasks()
	log.Info("step tasks started", "tasks", len(s.tasks), "user", s.cred.User, "took", time.Since(began))

	s.reader.Add(1)
	go s.readSrun(conn)

	s.leaders.Wait()
	if g := s.gatherer(); g != nil {
		g.close()
	}
	// Every task's own process has ended: whatever they left behind
	// dies with the step, as proctrack ends a step's container, which
	// also closes the output pipes they held.
	s.destroy()
	s.exits.Wait()
	s.reportUsage()
	s.spankStepExit()
	if err := s.out.Flush(); err != nil {
		log.Debug("flush step output", "err", err)
	}
	s.finish()
	s.reader.Wait()
	log.Info("step ended")
}

// finish marks the step over and releases its connection and pipes.
func (s *step) finish() {
	s.mu.Lock()
	s.finished = true
	if s.killTimer != nil {
		s.killTimer.Stop()
	}
	conn := s.conn
	s.mu.Unlock()
	for _, t := range s.tasks {
		if t.stdinW != nil {
			// Unblocks a feeder stuck on a task that never read.
			_ = t.stdinW.Close()
		}
	}
	close(s.done)
	if conn == nil {
		return
	}
	// srun may still be sending (the end of its stdin, a signal): a
	// socket closed with bytes unread is reset, and a reset can discard
	// the exits srun has not read yet. So the daemon closes its side
	// first and lets the reader drain until srun, which has every exit
	// by then, closes its own.
	// (Over TLS, CloseWrite sends close_notify.)
	if tc, ok := conn.(interface{ CloseWrite() error }); ok && tc.CloseWrite() == nil {
		drained := make(chan struct{})
		go func() { s.reader.Wait(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(stepDrainWait):
		}
	}
	_ = conn.Close()
}

// stepDrainWait bounds how long a finished step waits for srun to close
// its end of the connection.
const stepDrainWait = 5 * time.Second

// destroy kills what is left of the tasks' process trees and waits for
// it to go.
func (s *step) destroy() {
	g := s.processes()
	if g == nil {
		return
	}
	if err := g.Destroy(context.Background()); err != nil {
		s.agent.logger.Warn("clean up step processes", "job", s.key.job, "step", s.key.step, "err", err)
	}
}

// gatherer is the step's sampler, nil before its tasks start.
func (s *step) gatherer() *gatherer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gather
}

// liveTasks lists the tasks that run now, for a sample.
func (s *step) liveTasks() ([]acctgather.Task, *proctrack.Group) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []acctgather.Task
	for _, t := range s.tasks {
		if t.cmd != nil && t.cmd.Process != nil && t.usage == nil {
			out = append(out, acctgather.Task{ID: t.id, Pid: t.cmd.Process.Pid})
		}
	}
	return out, s.group
}

// processes is the step's process group, nil before it is made.
func (s *step) processes() *proctrack.Group {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.group
}

// send writes a frame to srun; a failure means srun is gone.
func (s *step) send(f stepio.Frame) {
	if f.Kind == stepio.Exit {
		s.exitsSent.Add(1)
	}
	if err := s.out.Write(f); err != nil {
		s.lost(err)
	}
}

// lost ends a step whose srun went away. slurmstepd does the same: with
// srun gone nobody reads the tasks' output or learns how they end.
func (s *step) lost(err error) {
	s.lostOne.Do(func() {
		s.mu.Lock()
		over := s.finished || int(s.exitsSent.Load()) >= len(s.tasks)
		s.mu.Unlock()
		if over {
			return
		}
		s.agent.logger.Warn("lost srun, ending the step", "job", s.key.job, "step", s.key.step, "err", err)
		s.terminate(s.l.KillWait)
	})
}

// terminate ends the step's tasks: SIGCONT and SIGTERM, then SIGKILL
// after killWait, as slurmstepd does for a cancelled step. Tasks still
// starting get the same once started.
func (s *step) terminate(killWait time.Duration) {
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return
	}
	s.ending = true
	g := s.group
	if s.killTimer == nil {
		s.killTimer = time.AfterFunc(killWait, s.kill)
	}
	s.mu.Unlock()
	if g != nil {
		_ = g.Signal(syscall.SIGCONT)
		_ = g.Signal(syscall.SIGTERM)
	}
}

// kill sends SIGKILL to every process of every task.
func (s *step) kill() {
	s.mu.Lock()
	if s.finished {
		s.mu.Unlock()
		return
	}
	s.killed = true
	g := s.group
	s.mu.Unlock()
	if g != nil {
		_ = g.Kill()
	}
}

// signal delivers sig to every process of every task (srun's Signal
// frame, scancel -s on a step).
func (s *step) signal(sig syscall.Signal) {
	if g := s.processes(); g != nil {
		if err := g.Signal(sig); err != nil {
			s.agent.logger.Debug("signal step tasks", "job", s.key.job, "step", s.key.step, "signal", sig, "err", err)
		}
	}
}

// readSrun serves srun's frames: stdin, its end, and signals.
func (s *step) readSrun(conn net.Conn) {
	defer s.reader.Done()
	r := stepio.NewReader(conn)
	for {
		f, err := r.Next()
		if err != nil {
			s.lost(err)
			return
		}
		switch f.Kind {
		case stepio.Stdin:
			for _, t := range s.stdinTargets(f.Task) {
				if t.stdin == nil || t.stdinClosed {
					continue
				}
				select {
				case t.stdin <- f.Data:
				case <-s.done:
				}
			}
		case stepio.StdinEOF:
			for _, t := range s.stdinTargets(f.Task) {
				if t.stdin != nil && !t.stdinClosed {
					t.stdinClosed = true
					close(t.stdin)
				}
			}
		case stepio.Signal:
			if f.Code > 0 && f.Code < 65 {
				s.signal(syscall.Signal(f.Code))
			}
		case stepio.KVSData, stepio.KVSFence:
			if s.pmi != nil {
				s.pmi.fromSrun(f)
			}
		default:
			s.agent.logger.Debug("unexpected frame from srun", "job", s.key.job, "step", s.key.step, "kind", f.Kind)
		}
	}
}

// stdinTargets finds the tasks a Stdin or StdinEOF frame addresses.
func (s *step) stdinTargets(task uint32) []*stepTask {
	if task == stepio.AllTasks {
		return s.tasks
	}
	for _, t := range s.tasks {
		if uint32(t.id) == task {
			return []*stepTask{t}
		}
	}
	return nil
}

// stdinFromSrun says whether t reads srun's stdin (srun --input: one task,
// all, or none), rather than /dev/null or a file.
func (s *step) stdinFromSrun(t *stepTask) bool {
	switch {
	case s.l.StdIn != "":
		return false
	case s.l.StdinTask == -2:
		return true
	default:
		return s.l.StdinTask >= 0 && t.id == s.l.StdinTask
	}
}

// startTasks starts the step's tasks in one process group (one cgroup)
// and the goroutines that serve them. Tasks are prepared in parallel
// (environments, pipes), then forked together, which on cgroup v1 moves
// the forking thread into the step's cgroup once rather than once per
// task. A task that cannot start is reported with a Failed frame and the
// exit status slurmstepd's forked child would have had.
func (s *step) startTasks() {
	l := s.l
	for _, t := range s.tasks {
		t.gpus = s.taskGPUs(t)
	}
	gs, err := s.prepareGres(s.agent.stepCtx)
	if err != nil {
		s.agent.logger.Warn("step GRES set-up failed", "job", l.JobID, "step", l.StepID, "err", err)
		for _, t := range s.tasks {
			s.failTask(t, l.Argv[0], err)
		}
		return
	}
	s.devs = gs
	if s.pmi != nil && s.pmi.plugin != nil {
		if err := s.pmixStart(s.agent.stepCtx); err != nil {
			s.agent.logger.Warn("step MPI set-up failed", "job", l.JobID, "step", l.StepID, "err", err)
			for _, t := range s.tasks {
				s.failTask(t, l.Argv[0], err)
			}
			return
		}
	}
	limits := proctrack.Limits{MemoryBytes: int64(l.MemLimitMB) << 20, AccountCPU: s.agent.cfg.AcctGather == GatherCgroup}
	if gs != nil {
		limits.DenyDevices = gs.deny
	}
	g, err := s.agent.tracker.NewGroup(fmt.Sprintf("job_%d_step_%d", l.JobID, l.StepID), limits)
	if err != nil {
		s.agent.logger.Warn("step tasks cannot start", "job", l.JobID, "step", l.StepID, "err", err)
		for _, t := range s.tasks {
			s.failTask(t, l.Argv[0], err)
		}
		return
	}
	s.mu.Lock()
	s.group = g
	ending := s.ending
	s.mu.Unlock()
	if ending {
		return
	}

	prep := make([]*taskStart, len(s.tasks))
	var wg sync.WaitGroup
	for i, t := range s.tasks {
		wg.Add(1)
		go func() { defer wg.Done(); prep[i] = s.prepareTask(t) }()
	}
	wg.Wait()
	var cmds []*exec.Cmd
	var cpus [][]int
	var ready []*taskStart
	for _, p := range prep {
		if p != nil {
			ready = append(ready, p)
			cmds = append(cmds, p.cmd(s.cwd))
			cpus = append(cpus, p.cpus)
		}
	}
	errs := g.Start(cmds, cpus)
	for i, p := range ready {
		err := errs[i]
		if err != nil && s.cwd != os.TempDir() {
			// As the user, the working folder may be out of reach;
			// the fork only says "fork/exec" for both a failed chdir
			// and a failed execve. If /tmp works, it was the chdir,
			// and slurmstepd would have gone to /tmp too.
			retry := p.cmd(os.TempDir())
			if err2 := g.Start([]*exec.Cmd{retry}, [][]int{p.cpus})[0]; err2 == nil {
				s.noteCwd(p.task, err)
				cmds[i], err = retry, nil
			} else {
				err = err2
			}
		} else if err == nil && s.cwdErr != nil {
			s.noteCwd(p.task, s.cwdErr)
		}
		s.started(p, cmds[i], err)
	}
	gather := s.agent.newGatherer(s.liveTasks, s.l.GPUs, len(s.tasks) == 1)
	s.mu.Lock()
	s.gather = gather
	s.mu.Unlock()

	s.mu.Lock()
	ending, killed := s.ending, s.killed
	s.mu.Unlock()
	if killed {
		_ = g.Kill()
	} else if ending {
		_ = g.Signal(syscall.SIGCONT)
		_ = g.Signal(syscall.SIGTERM)
	}
}

// taskStart is a task ready to be forked: its command (built for a
// working folder) and the pipes it gets.
type taskStart struct {
	task       *stepTask
	path       string
	cpus       []int
	cmd        func(dir string) *exec.Cmd
	pipes      taskPipes
	outR, errR *os.File
	// pmiConn and pmiChild are the daemon's and the task's ends of its
	// PMI socket (MPI steps only).
	pmiConn  net.Conn
	pmiChild *os.File
}

// prepareTask builds a task's environment, command and pipes; nil when
// the task already failed (reported).
func (s *step) prepareTask(t *stepTask) *taskStart {
	l := s.l
	cpus := s.bind.taskCPUs(l, t.local)
	env := stepenv.TaskVars(l.Env, stepenv.Task{
		ID: t.id, Local: t.local, NodeIndex: l.NodeIndex, NodeName: s.agent.cfg.Name,
		NodeTasks: l.Tasks, GPUs: t.gpus, StepGPUs: l.GPUs,
		CPUBindList: s.bindList, CPUsOnNode: len(l.CPUs),
		ConstrainDevices: s.agent.cfg.ConstrainDevices,
	})
	env = s.devs.forTask(env, t.local)
	env, execArgv, err := s.spankTaskInit(t, env)
	if err != nil {
		s.spankFail(t, err)
		return nil
	}
	t.env = env
	argv := l.Argv
	if execArgv != nil {
		// A plugin starts the task (a container runtime): its command
		// runs as root and finds the task's program itself.
		argv = execArgv
	}
	path := searchPath(argv[0], lookupEnv(env, "PATH"), s.cwd)
	if _, err := os.Stat(resolveIn(s.cwd, path)); errors.Is(err, fs.ErrNotExist) {
		s.failTask(t, path, syscall.ENOENT)
		return nil
	}

	vals := outpattern.Values{
		JobID: l.JobID, ArrayTaskID: outpattern.NoArrayTask, StepID: l.StepID,
		NodeName: s.agent.cfg.Name, NodeID: uint32(l.NodeIndex), TaskID: uint32(t.id),
		User: s.cred.User, JobName: l.JobName,
	}
	outFile := outpattern.Path(s.cwd, l.StdOut, vals)
	errFile := outpattern.Path(s.cwd, l.StdErr, vals)
	inFile := outpattern.Path(s.cwd, l.StdIn, vals)

	// The pipes are made here, close-on-exec: only this task's child
	// gets them as its 0, 1 and 2, never a task forked at the same time.
	// Output pipes are made even when files are named: the shell that
	// opens the files as the user says through them if it cannot.
	ts := &taskStart{task: t, path: path, cpus: cpus}
	if s.pmi != nil && s.pmi.plugin != nil {
		env = s.pmi.taskEnv(env, t.id, l.PMIMapping)
		t.env = env
	}
	if s.pmi != nil && s.pmi.srv != nil {
		ts.pmiConn, ts.pmiChild, env, err = s.pmi.taskSocket(env, t.id)
		if err != nil {
			s.failTask(t, path, err)
			return nil
		}
		t.env = env
	}
	p := &ts.pipes
	var stdout, stderr, stdin *os.File
	ts.outR, stdout, err = p.add(false)
	if err == nil {
		ts.errR, stderr, err = p.add(false)
	}
	if err == nil && t.stdin != nil {
		t.stdinW, stdin, err = p.add(true)
	}
	if err != nil {
		p.close(true)
		p.close(false)
		t.stdin, t.stdinW = nil, nil
		if ts.pmiChild != nil {
			ts.pmiChild.Close()
			ts.pmiConn.Close()
		}
		s.failTask(t, path, err)
		return nil
	}

	ts.cmd = func(dir string) *exec.Cmd {
		cmd := &exec.Cmd{Path: path, Args: append([]string{path}, argv[1:]...), Env: env, Dir: dir}
		if outFile != "" || errFile != "" || inFile != "" {
			cmd.Path = "/bin/sh"
			cmd.Args = append([]string{"sh", "-c", stdioScript(outFile, errFile, inFile), "slurmstepd", outFile, errFile, inFile, path}, argv[1:]...)
		}
		// Go hands *os.File standard streams to the child as they are,
		// with no copying goroutine.
		cmd.Stdout, cmd.Stderr = stdout, stderr
		if stdin != nil {
			cmd.Stdin = stdin
		}
		if ts.pmiChild != nil {
			cmd.ExtraFiles = []*os.File{ts.pmiChild}
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		if s.ident != nil && execArgv == nil {
			cmd.SysProcAttr.Credential = s.ident.Credential()
			cmd.SysProcAttr.Credential.Gid = s.cred.GID
		}
		return cmd
	}
	return ts
}

// started finishes a task's start: the goroutines that serve a running
// task, or the report of one that failed to start.
func (s *step) started(p *taskStart, cmd *exec.Cmd, err error) {
	t := p.task
	p.pipes.close(false)
	if p.pmiChild != nil {
		p.pmiChild.Close()
		if err != nil {
			p.pmiConn.Close()
		} else {
			go s.pmi.serve(s, p.pmiConn, t.id)
		}
	}
	if err != nil {
		p.pipes.close(true)
		t.stdin, t.stdinW = nil, nil
		s.agent.logger.Info("step task failed to start", "job", s.l.JobID, "step", s.l.StepID, "task", t.id, "err", err)
		s.failTask(t, p.path, err)
		return
	}
	t.cmd = cmd
	s.leaders.Add(1)
	s.exits.Add(1)
	t.pumps.Add(2)
	go s.pump(t, p.outR, stepio.Stdout)
	go s.pump(t, p.errR, stepio.Stderr)
	if t.stdinW != nil {
		go s.feed(t)
	}
	go s.waitTask(t)
}

// taskPipes are the pipes of a task being started: the parent's ends
// (kept) and the child's (closed in the daemon once the child has them).
type taskPipes struct{ parent, child []*os.File }

// add makes a pipe; toChild says which way the data flows. It returns
// the daemon's end, then the task's.
func (p *taskPipes) add(toChild bool) (mine, its *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("create pipe: %w", err)
	}
	mine, its = r, w
	if toChild {
		mine, its = w, r
	}
	p.parent, p.child = append(p.parent, mine), append(p.child, its)
	return mine, its, nil
}

// close closes the daemon's ends (parent) or the task's.
func (p *taskPipes) close(parent bool) {
	fs := p.child
	if parent {
		fs = p.parent
	}
	for _, f := range fs {
		_ = f.Close()
	}
}

// noteCwd tells the user, once per step, that the tasks run in /tmp.
func (s *step) noteCwd(t *stepTask, err error) {
	s.cwdOnce.Do(func() {
		msg := fmt.Sprintf("slurmstepd: error: couldn't chdir to `%s': %s: going to /tmp instead\n", s.l.Cwd, strerror(err))
		s.send(stepio.Frame{Kind: stepio.Stderr, Node: uint32(s.l.NodeIndex), Task: uint32(t.id), Data: []byte(msg)})
	})
}

// failTask reports a task that could not be started: srun prints the
// Failed text, and the task ends with the status slurmstepd's child
// exits with after a failed execve (the errno: 2 for a missing command).
func (s *step) failTask(t *stepTask, path string, err error) {
	msg, code := execFailure(path, err)
	node := uint32(s.l.NodeIndex)
	s.send(stepio.Frame{Kind: stepio.Failed, Node: node, Task: uint32(t.id), Data: []byte(msg)})
	s.send(stepio.Frame{Kind: stepio.Exit, Node: node, Task: uint32(t.id), Code: code})
}

// pump streams one output pipe of a task to srun as it is produced. After
// srun is gone it keeps draining the pipe, so that the task never blocks
// on a full pipe before it is ended.
func (s *step) pump(t *stepTask, r *os.File, kind stepio.Kind) {
	defer t.pumps.Done()
	defer r.Close()
	buf := make([]byte, 32<<10)
	f := stepio.Frame{Kind: kind, Node: uint32(s.l.NodeIndex), Task: uint32(t.id)}
	for {
		n, err := r.Read(buf)
		if n > 0 {
			f.Data = buf[:n]
			s.send(f)
		}
		if err != nil {
			return
		}
	}
}

// feed writes srun's input to a task's stdin until its end, the task's
// end or the step's.
func (s *step) feed(t *stepTask) {
	w := t.stdinW
	defer w.Close()
	broken := false
	for {
		select {
		case data, ok := <-t.stdin:
			if !ok {
				return
			}
			if broken {
				continue
			}
			if _, err := w.Write(data); err != nil {
				// The task closed its stdin or ended: srun's input
				// is dropped, as slurmstepd drops it.
				broken = true
			}
		case <-s.done:
			return
		}
	}
}

// waitTask reports a task's end once its output is all sent.
func (s *step) waitTask(t *stepTask) {
	s.spankTaskStage(protocol.StageTaskPostFork, t, t.cmd.Process.Pid, 0)
	st, err := s.group.WaitFor(t.cmd)
	if st != nil {
		s.spankTaskStage(protocol.StageTaskExit, t, t.cmd.Process.Pid, st.Sys().(syscall.WaitStatus))
		u := usageOf(st)
		if g := s.gatherer(); g != nil {
			g.final(t.id, u, len(s.tasks) == 1, s.processes())
		}
		s.mu.Lock()
		t.usage = u
		s.mu.Unlock()
	}
	s.leaders.Done()
	t.pumps.Wait()
	f := stepio.Frame{Kind: stepio.Exit, Node: uint32(s.l.NodeIndex), Task: uint32(t.id)}
	switch {
	case st != nil:
		ws := st.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			f.Code, f.Signaled = int32(ws.Signal()), true
		} else {
			f.Code = int32(ws.ExitStatus())
		}
	case err != nil:
		s.agent.logger.Warn("wait for step task", "job", s.key.job, "step", s.key.step, "task", t.id, "err", err)
		f.Code = 1
	}
	s.send(f)
	s.exits.Done()
}

// stdioScript is the shell prologue that opens a task's output and input
// files as the task's user (the daemon may run as root: opening them
// itself would let a user write or read any file), then becomes the task.
// Output files are truncated and opened for appending, as slurmstepd
// opens them (O_TRUNC|O_APPEND), so that tasks sharing one file do not
// overwrite each other. The names come as $1 (stdout), $2 (stderr), $3
// (stdin); the program and its arguments follow.
func stdioScript(out, err, in string) string {
	var b strings.Builder
	if out != "" {
		b.WriteString(`: >"$1" && exec >>"$1" || exit 1; `)
	}
	switch {
	case err != "" && err == out:
		b.WriteString(`exec 2>&1; `)
	case err != "":
		b.WriteString(`: >"$2" && exec 2>>"$2" || exit 1; `)
	case out != "":
		// Without --error, error output goes where --output goes.
		b.WriteString(`exec 2>&1; `)
	}
	if in != "" {
		b.WriteString(`exec <"$3" || exit 1; `)
	}
	b.WriteString(`shift 3; exec "$@"`)
	return b.String()
}

// searchPath finds a task's program as slurmstepd's _build_path does: a
// name starting with '/' is used as is, one starting with '.' is taken
// relative to the working folder, and any other is looked up in the
// task's PATH (the first entry that exists and is not a folder). A name
// not found stays as given, and the execve of it fails.
func searchPath(name, pathEnv, cwd string) string {
	switch {
	case strings.HasPrefix(name, "/"):
		return name
	case strings.HasPrefix(name, "."):
		return strings.TrimSuffix(cwd, "/") + "/" + name
	}
	for _, dir := range strings.Split(pathEnv, ":") {
		if dir == "" {
			continue // strtok skips empty entries
		}
		p := strings.TrimSuffix(dir, "/") + "/" + name
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return name
}

// resolveIn is where execve looks for path when started in dir.
func resolveIn(dir, path string) string {
	if strings.HasPrefix(path, "/") {
		return path
	}
	return strings.TrimSuffix(dir, "/") + "/" + path
}

// lookupEnv returns the last value of key in env, as execve's callee sees
// it.
func lookupEnv(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

// execFailure is what slurmstepd's task says when its execve fails, and
// the status it exits with (the errno). A script whose interpreter is
// missing is named as such, as task.c does.
func execFailure(path string, err error) (string, int32) {
	errno := errnoOf(err)
	if errno == 0 {
		// Not the execve: the set-up before it failed.
		return err.Error(), 1
	}
	if errno == syscall.ENOENT {
		if line, ok := shebang(path); ok {
			return fmt.Sprintf("execve(): bad interpreter(%s): %s", line, strerror(errno)), int32(errno)
		}
	}
	return fmt.Sprintf("execve(): %s: %s", path, strerror(errno)), int32(errno)
}

// shebang returns the interpreter line of a script, without "#!".
func shebang(path string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	if n < 3 || string(buf[:2]) != "#!" {
		return "", false
	}
	line, _, _ := strings.Cut(string(buf[2:n]), "\n")
	return line, true
}

// errnoOf digs the errno out of an error; 0 if there is none.
func errnoOf(err error) syscall.Errno {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	return 0
}

// strerror words an error as glibc's strerror does ("No such file or
// directory"), which is what Slurm's %m prints.
func strerror(err error) string {
	msg := err.Error()
	if errno := errnoOf(err); errno != 0 {
		msg = errno.Error()
	}
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:]
}

// cpuBind is a step's --cpu-bind as the node applies it (task/affinity's
// part): blocks of the step's CPUs (cores, threads), or an explicit map or
// mask per local task. Other units (sockets, ldoms) are not applied.
type cpuBind struct {
	// blocks binds each local task to its own CPUsPerTask of the step's
	// CPUs, in order, cycling when tasks outnumber them.
	blocks bool
	// lists are map_cpu's or mask_cpu's entries, one per local task,
	// cycling.
	lists [][]int
	// list is the map or mask list as srun sent it, for
	// SLURM_CPU_BIND_LIST.
	list string
}

// parseCPUBind reads --cpu-bind as srun does.
func parseCPUBind(arg string) (cpuBind, error) {
	if arg == "" {
		return cpuBind{}, nil
	}
	b, err := stepenv.ParseCPUBind(arg)
	if err != nil {
		return cpuBind{}, err
	}
	switch {
	case b.Mode == stepenv.ModeMapCPU || b.Mode == stepenv.ModeMaskCPU:
		out := cpuBind{list: b.List}
		for item := range strings.SplitSeq(b.List, ",") {
			var set []int
			if b.Mode == stepenv.ModeMapCPU {
				id, err := strconv.ParseUint(item, 10, 16)
				if err != nil {
					return cpuBind{}, fmt.Errorf("%w: map_cpu: CPU id %q", stepenv.ErrCPUBind, item)
				}
				set = []int{int(id)}
			} else {
				var m big.Int
				if _, ok := m.SetString(item, 16); !ok || m.BitLen() > 1<<16 {
					return cpuBind{}, fmt.Errorf("%w: mask_cpu: mask %q", stepenv.ErrCPUBind, item)
				}
				for c := range m.BitLen() {
					if m.Bit(c) == 1 {
						set = append(set, c)
					}
				}
			}
			out.lists = append(out.lists, set)
		}
		return out, nil
	case b.Mode == stepenv.ModeUnset && (b.Unit == stepenv.UnitCores || b.Unit == stepenv.UnitThreads):
		return cpuBind{blocks: true}, nil
	}
	return cpuBind{}, nil
}

// taskCPUs lists the CPUs a local task is bound to; none when it is not
// bound.
func (b cpuBind) taskCPUs(l *nodeproto.StepLaunch, local int) []int {
	switch {
	case b.blocks && len(l.CPUs) > 0:
		per := max(1, l.CPUsPerTask)
		n := min(per, len(l.CPUs))
		out := make([]int, 0, n)
		for k := range n {
			out = append(out, l.CPUs[(local*per+k)%len(l.CPUs)])
		}
		slices.Sort(out)
		return slices.Compact(out)
	case len(b.lists) > 0:
		return b.lists[local%len(b.lists)]
	}
	return nil
}

// envList is SLURM_CPU_BIND_LIST for the node: the map or mask list as
// given, or the mask of every local task in SLURM_LOCALID order, as
// task/affinity writes the masks it generated; "" without binding.
func (b cpuBind) envList(l *nodeproto.StepLaunch) string {
	switch {
	case len(b.lists) > 0:
		return b.list
	case b.blocks && len(l.CPUs) > 0:
		masks := make([]string, len(l.Tasks))
		for local := range l.Tasks {
			masks[local] = cpuMask(b.taskCPUs(l, local))
		}
		return strings.Join(masks, ",")
	}
	return ""
}

// cpuMask writes cpus as Slurm writes a CPU mask ("0x5"); "" for none.
func cpuMask(cpus []int) string {
	if len(cpus) == 0 {
		return ""
	}
	var m big.Int
	for _, c := range cpus {
		m.SetBit(&m, c, 1)
	}
	return "0x" + m.Text(16)
}

// taskGPUs lists the GPUs a task is bound to (--gpu-bind, or
// per_task:N, which --gpus-per-task=N implies), nil for all the step's
// GPUs on the node. The messages slurmstepd prints about the binding go
// to the task's stderr, as they come from its forked child there.
func (s *step) taskGPUs(t *stepTask) []int {
	l := s.l
	b := s.gpuBind
	if b.Mode == gres.BindDefault && l.GPUsPerTask > 0 {
		b = gres.GPUBind{Mode: gres.BindPerTask, N: l.GPUsPerTask, Text: "per_task:" + strconv.Itoa(l.GPUsPerTask)}
	}
	if len(l.GPUs) == 0 || b.Mode == gres.BindDefault {
		return nil
	}
	node := gres.BindNode{
		Alloc: l.GPUs, Size: len(s.agent.cfg.GPUs),
		TaskCPUs: func(local int) []int {
			if cpus := s.bind.taskCPUs(l, local); len(cpus) > 0 {
				return cpus
			}
			return l.CPUs
		},
		GPUCores: func(gpu int) []int { return s.gpuCores[gpu] },
	}
	ids, warn := b.Task(node, t.local)
	say := func(msg string) {
		s.send(stepio.Frame{Kind: stepio.Stderr, Node: uint32(l.NodeIndex), Task: uint32(t.id), Data: []byte(msg)})
	}
	if warn != "" {
		say("slurmstepd: error: " + warn + "\n")
	}
	if b.Verbose {
		list := make([]string, len(ids))
		for i, id := range ids {
			list[i] = strconv.Itoa(id)
		}
		csv := strings.Join(list, ",")
		say(fmt.Sprintf("gpu-bind: usable_gres=%s; bit_alloc=%s; local_inx=0; global_list=%s; local_list=%s\n",
			gres.HexMask(ids), gres.HexMask(l.GPUs), csv, csv))
	}
	return ids
}

// gpuCores reads the CPUs near each of the node's GPUs, by GPU index.
func (a *Agent) gpuCores() map[int][]int {
	out := map[int][]int{}
	for _, g := range a.cfg.GPUs {
		if cores, err := gres.ParseIDList(g.Cores); err == nil && len(cores) > 0 {
			out[g.Index] = cores
		}
	}
	return out
}

// reportUsage sends the controller what this node's tasks of the step
// used, for the step's accounting record, as slurmstepd sends its
// jobacct data with the step's completion. A lost report costs only the
// record's usage.
func (s *step) reportUsage() {
	a := s.agent
	d := nodeproto.StepDone{Node: a.cfg.Name, JobID: s.key.job, StepID: s.key.step}
	gpus := s.gatherer().measuresGPUs()
	s.mu.Lock()
	var rssSum uint64
	for _, t := range s.tasks {
		if t.usage == nil {
			continue
		}
		u := t.usage
		d.Stats.AddTask(*u, a.cfg.Name, uint32(t.id))
		d.Stats.GPUs = d.Stats.GPUs || gpus
		d.Tasks++
		d.Usage.UserCPU += u.UserCPU
		d.Usage.SystemCPU += u.SystemCPU
		if u.MaxRSS >= d.Usage.MaxRSS {
			d.Usage.MaxRSS, d.MaxRSSTask = u.MaxRSS, uint32(t.id)
		}
		rssSum += u.MaxRSS
		d.Usage.MaxDiskRead = max(d.Usage.MaxDiskRead, u.MaxDiskRead)
		d.Usage.MaxDiskWrite = max(d.Usage.MaxDiskWrite, u.MaxDiskWrite)
		d.Usage.MaxVMSize = max(d.Usage.MaxVMSize, u.MaxVMSize)
		d.Usage.MaxPages = max(d.Usage.MaxPages, u.MaxPages)
	}
	s.mu.Unlock()
	if d.Tasks == 0 {
		return
	}
	d.AveRSS = rssSum / uint64(d.Tasks)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := a.client.Post(ctx, msgauth.Controller, a.ctl+nodeproto.PathStepDone, d, nil); err != nil {
			a.logger.Warn("report step usage", "job", d.JobID, "step", d.StepID, "err", err)
		}
	}()
}
