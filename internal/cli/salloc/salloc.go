// Package salloc is the drop-in salloc command: it obtains a job
// allocation, runs a command (by default the user's shell) on this host
// with the allocation's environment, so that the srun commands it starts
// run in the allocation, and releases the allocation when the command
// ends, with Slurm's messages and exit statuses (src/salloc/salloc.c).
package salloc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/cli/alloc"
	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clusters"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/jobopts"
	"github.com/droverhq/drover/internal/cli/plugopts"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/slurmerr"
	v0044 "github.com/droverhq/drover/openapi/v0044"
	"github.com/droverhq/drover/plugins/protocol"
)

// bellDelay is DEFAULT_BELL_DELAY: without --bell or --no-bell, salloc
// rings the terminal bell when the allocation took longer than this.
const bellDelay = 10 * time.Second

// pollInterval is how often salloc checks that its allocation still
// runs while the command does; slurmctld would tell it at once
// (SRUN_JOB_COMPLETE).
var pollInterval = time.Second

// terminating are the signals that end salloc's request while it waits
// for the allocation (salloc.c's sig_array); once the command runs, all
// but SIGHUP end the allocation, and SIGHUP is passed to the command.
var terminating = []os.Signal{
	syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGPIPE,
	syscall.SIGTERM, syscall.SIGUSR1, syscall.SIGUSR2,
}

// Run is the salloc command (a clienv.Command).
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, terminating...)
	defer signal.Stop(sigs)
	return run(ctx, env, args, sigs)
}

// session is one salloc run.
type session struct {
	env *clienv.Env
	// stdout and stderr are salloc's, shared with the command.
	stdout, stderr io.Writer
	opts           *jobopts.Options
	sigs           <-chan os.Signal
	errorExit      int
	immediateExit  int
	term           *terminal
	id             uint32
}

func (s *session) printf(format string, args ...any) {
	fmt.Fprintf(s.stderr, "salloc: "+format+"\n", args...)
}

func run(ctx context.Context, env *clienv.Env, args []string, sigs <-chan os.Signal) int {
	s := &session{env: env, sigs: sigs, errorExit: 1, immediateExit: 1}
	s.stdout, s.stderr = shareOutput(env.Stdout, env.Stderr)
	own := jobopts.NewEnviron(nil)
	if env.Environ != nil {
		own = jobopts.NewEnviron(env.Environ())
	}
	// _set_exit_code
	for _, e := range []struct {
		name string
		code *int
	}{{"SLURM_EXIT_ERROR", &s.errorExit}, {"SLURM_EXIT_IMMEDIATE", &s.immediateExit}} {
		if v, ok := own.Lookup(e.name); ok {
			if n, _ := strconv.Atoi(v); n == 0 {
				s.printf("error: %s has zero value", e.name)
			} else {
				*e.code = n
			}
		}
	}
	clock := time.Now
	if env.Now != nil {
		clock = env.Now
	}
	plugins, err := plugopts.Load(ctx, own.Lookup)
	if err != nil {
		fmt.Fprintf(env.Stderr, "salloc: error: %v\n", err)
		return s.errorExit
	}
	p := jobopts.NewSalloc(jobopts.Config{Prog: "salloc", Now: clock(), Cwd: env.Cwd, UID: env.User.UID, LookupEnv: own.Lookup, ErrorExit: s.errorExit, PluginOptions: plugins.Options()})
	// Each ":" on the command line starts the next component of a
	// heterogeneous job, which takes over what the one before it does
	// not reset.
	var comps []*jobopts.Options
	var argv []string
	for rest := args; ; {
		if len(comps) > 0 {
			if p, err = p.NextComponent(); err != nil {
				return s.exit(err)
			}
		}
		ops, err := p.Parse(rest)
		o := p.Options()
		for _, m := range o.Messages {
			s.printf("%s", m)
		}
		if err != nil {
			return s.exit(err)
		}
		for _, w := range o.Warnings {
			s.printf("warning: %s", w)
		}
		comps = append(comps, o)
		if len(ops) > 0 && ops[0] == ":" {
			rest = ops[1:]
			continue
		}
		argv = ops
		break
	}
	o := comps[0]
	s.opts = o
	if len(argv) == 0 && !o.NoShell {
		argv = []string{defaultShell(env, own)}
	}
	if s.term, err = openTerminal(env.Stdin, o.NoShell); err != nil {
		s.printf("error: %v", err)
		return s.errorExit
	}
	dir := env.Cwd
	if o.Chdir != "" {
		if fi, err := os.Stat(o.Chdir); err != nil || !fi.IsDir() {
			if err == nil {
				err = syscall.ENOTDIR
			}
			s.printf("error: chdir(%s): %s", o.Chdir, strerror(err))
			return s.errorExit
		}
		dir = o.Chdir
	}

	if o.Clusters != "" {
		_, msgs, ok := clusters.Select(ctx, env.Client, o.Clusters)
		for _, m := range msgs {
			s.printf("error: %s", m)
		}
		if !ok {
			return s.errorExit
		}
	}

	descs := make([]v0044.V0044JobDescMsg, len(comps))
	for i, co := range comps {
		descs[i] = co.JobDesc()
		descs[i].CurrentWorkingDirectory = v0044.NewOptString(dir)
		if len(argv) > 0 {
			descs[i].Argv = argv
		}
	}
	before := clock()
	g, code := s.allocate(ctx, descs)
	if code >= 0 {
		return code
	}
	s.printf("Granted job allocation %d", s.id)
	s.printf("Nodes %s are ready for job", g.Nodes())
	if o.Bell.Val || !o.Bell.Set && clock().Sub(before) > bellDelay {
		ringBell(s.stdout)
	}
	if o.NoShell {
		return 0
	}
	select {
	case sig := <-s.sigs:
		// A signal after the grant, before the command started: the
		// handler ended the job, and salloc relinquishes it.
		s.printf("Relinquishing job allocation %d", s.id)
		s.release(128 + signum(sig))
		return 1
	default:
	}
	sub := submission{Dir: env.Cwd, Host: env.Hostname}
	a := allocationOf(s.id, readmodel.FromV0044JobInfo(&g.Job))
	cmdEnv, err := commandEnv(append(own.List(), plugopts.Env(o.PluginValues)...), o, a, sub)
	if err == nil && len(comps) > 1 {
		cmdEnv, err = s.hetEnv(ctx, cmdEnv, comps, sub)
	}
	var local *plugopts.Local
	if err == nil {
		// The plugins' allocator stages see the command's environment,
		// and what they set reaches the command.
		local, cmdEnv, err = plugins.Start(ctx, protocol.ContextAllocator, argv, cmdEnv)
	}
	if err != nil {
		s.printf("error: %v", err)
		s.printf("Relinquishing job allocation %d", s.id)
		s.release(s.errorExit)
		return s.errorExit
	}
	defer local.Exit(ctx, s.id, cmdEnv)
	return s.runCommand(argv, dir, cmdEnv)
}

// exit prints a *jobopts.Exit and returns its status.
func (s *session) exit(err error) int {
	var e *jobopts.Exit
	if !errors.As(err, &e) {
		s.printf("error: %v", err)
		return s.errorExit
	}
	io.WriteString(s.stdout, e.Stdout)
	io.WriteString(s.stderr, e.Stderr)
	return e.Code
}

// defaultShell is the command salloc runs when given none
// (_salloc_default_command): the user's login shell from the password
// file, else $SHELL, else /bin/sh (Slurm gives up without a password
// entry; users known only through NSS have none in /etc/passwd).
// LaunchParameters=use_interactive_step is not followed.
func defaultShell(env *clienv.Env, own *jobopts.Environ) string {
	if data, err := os.ReadFile("/etc/passwd"); err == nil {
		if sh := shellOf(string(data), env.User.UID); sh != "" {
			return sh
		}
	}
	if sh, ok := own.Lookup("SHELL"); ok && sh != "" {
		return sh
	}
	return "/bin/sh"
}

// allocate submits the request and waits for the grant, as
// slurm_allocate_resources_blocking does for salloc. It returns the
// granted job and -1, or the status salloc exits with.
func (s *session) allocate(ctx context.Context, descs []v0044.V0044JobDescMsg) (alloc.Granted, int) {
	// salloc's own signal handling ends the wait, not the caller's
	// context (which the same signals cancel).
	base := context.WithoutCancel(ctx)
	id, code := alloc.SubmitHet(base, s.env, "salloc", descs)
	if code != 0 {
		return alloc.Granted{}, s.errorExit
	}
	s.id = id
	waitCtx, cancel := context.WithCancel(base)
	defer cancel()
	if s.opts.Immediate.Set {
		var stop context.CancelFunc
		waitCtx, stop = context.WithTimeout(waitCtx, time.Duration(s.opts.Immediate.Val)*time.Second)
		defer stop()
	}
	// A signal while waiting withdraws the request; sig is read once
	// the watcher has stopped.
	var sig os.Signal
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case sig = <-s.sigs:
			cancel()
		case <-done:
		}
	}()
	g, err := alloc.Wait(waitCtx, s.env, "salloc", id, func(id uint32) {
		s.printf("Pending job allocation %d", id)
	})
	close(done)
	<-stopped
	var revoked *alloc.RevokedError
	switch {
	case err == nil && sig == nil:
		return g, -1
	case err == nil:
		// Granted as the signal came: the handler ended the job, and
		// salloc relinquishes it.
		s.printf("Relinquishing job allocation %d", id)
		s.release(128 + signum(sig))
		return alloc.Granted{}, 1
	case sig != nil:
		// _signal_while_allocating: the request is withdrawn.
		s.release(128 + signum(sig))
		s.printf("Job aborted due to signal")
		return alloc.Granted{}, s.errorExit
	case errors.Is(err, context.DeadlineExceeded):
		s.release(1)
		s.printf("error: Unable to allocate resources: %s", strerror(syscall.ETIMEDOUT))
		return alloc.Granted{}, s.immediateExit
	case errors.As(err, &revoked):
		// Cancelled while pending: slurmctld tells the waiting salloc,
		// which then finds the job finished.
		s.printf("Job has been cancelled")
		s.printf("error: Job submit/allocate failed: %s", slurmerr.AlreadyDone.Message())
		return alloc.Granted{}, s.errorExit
	}
	s.printf("error: %v", err)
	return alloc.Granted{}, s.errorExit
}

// release ends the allocation with the command's exit status
// (slurm_complete_job); an allocation already over is no error.
func (s *session) release(code int) {
	err := alloc.Release(s.env, s.id, code)
	var re *connect.RequestError
	if err == nil || errors.As(err, &re) && re.Code == int32(slurmerr.AlreadyDone) {
		return
	}
	s.printf("error: Unable to clean up job allocation JobId=%d: %v", s.id, err)
}

// runCommand runs the command in the allocation and waits for it, then
// relinquishes the allocation unless it was revoked meanwhile. salloc
// exits with the command's status; a command killed by SIGHUP, SIGINT,
// SIGQUIT or SIGKILL counts as a normal end (0), by another signal as 1.
func (s *session) runCommand(argv []string, dir string, env []string) int {
	path, found := findCommand(argv[0], dir, lookup(env, "PATH"))
	var cmd *exec.Cmd
	var err error
	if !found {
		s.printf("error: _fork_command: Unable to find command \"%s\"", argv[0])
	} else if cmd, err = start(path, argv, dir, env, s.env.Stdin, s.stdout, s.stderr, s.term); err != nil {
		s.printf("error: _fork_command: Unable to exec command \"%s\": %s", path, strerror(err))
	}
	if cmd == nil {
		// The forked child exits with salloc's error status.
		s.printf("Relinquishing job allocation %d", s.id)
		s.release(s.errorExit)
		return s.errorExit
	}
	exited := make(chan *os.ProcessState, 1)
	go func() {
		cmd.Wait()
		exited <- cmd.ProcessState
	}()
	if s.term != nil {
		defer s.term.reclaim()
	}
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	revoked := false
	for {
		select {
		case st := <-exited:
			code, status := exitStatus(st)
			if !revoked {
				s.printf("Relinquishing job allocation %d", s.id)
				s.release(code)
			}
			return status
		case sig := <-s.sigs:
			if sig == syscall.SIGHUP {
				// _exit_on_signal: the command gets the hangup and
				// salloc stops waiting for it.
				syscall.Kill(-cmd.Process.Pid, syscall.SIGHUP)
				if !revoked {
					s.printf("Relinquishing job allocation %d", s.id)
					s.release(0)
				}
				return 1
			}
			// The allocation ends; slurmctld then revokes it.
			s.release(128 + signum(sig))
			if !revoked {
				revoked = true
				s.revoke(cmd, fmt.Sprintf("Job allocation %d has been revoked.", s.id))
			}
		case <-tick.C:
			if revoked {
				continue
			}
			if msg, over := s.checkJob(); over {
				revoked = true
				s.revoke(cmd, msg)
			}
		}
	}
}

// checkJob asks whether the allocation still runs; when it does not, it
// returns the message salloc prints (_job_complete_handler). A controller
// that does not answer is asked again later.
func (s *session) checkJob() (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := s.env.Client.SlurmV0044GetJob(ctx, v0044.SlurmV0044GetJobParams{JobID: strconv.FormatUint(uint64(s.id), 10)})
	if err != nil {
		return "", false
	}
	revoked := fmt.Sprintf("Job allocation %d has been revoked.", s.id)
	r, ok := res.(*v0044.V0044OpenapiJobInfoResp)
	if !ok || len(r.Jobs) == 0 {
		if _, known := res.(*v0044.V0044OpenapiJobInfoRespStatusCode); known {
			return revoked, true
		}
		return "", false
	}
	for _, st := range r.Jobs[0].JobState {
		switch st {
		case v0044.V0044JobInfoJobStateItemRUNNING, v0044.V0044JobInfoJobStateItemSUSPENDED:
			return "", false
		case v0044.V0044JobInfoJobStateItemTIMEOUT:
			return fmt.Sprintf("Job %d has exceeded its time limit and its allocation has been revoked.", s.id), true
		}
	}
	return revoked, true
}

// revoke reports the allocation's end and, with --kill-command, signals
// the command's process group. Slurm's default build sends nothing else
// (it is configured without SALLOC_KILL_CMD), except a hangup to a
// foreground job the command's shell started on salloc's terminal.
func (s *session) revoke(cmd *exec.Cmd, msg string) {
	s.printf("%s", msg)
	pid := cmd.Process.Pid
	if s.term != nil {
		if fg := s.term.foreground(); fg > 0 && fg != pid && fg != syscall.Getpgrp() {
			syscall.Kill(-fg, syscall.SIGHUP)
		}
	}
	if s.opts.KillCommand.Set {
		syscall.Kill(-pid, syscall.Signal(s.opts.KillCommand.Val))
	}
}

// exitStatus is what salloc releases the allocation with (the exit code,
// or 128 plus the signal that killed the command, as srun reports a
// signalled task) and what it exits with.
func exitStatus(st *os.ProcessState) (code, status int) {
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok {
		return st.ExitCode(), st.ExitCode()
	}
	switch {
	case ws.Exited():
		return ws.ExitStatus(), ws.ExitStatus()
	case ws.Signaled():
		switch ws.Signal() {
		case syscall.SIGHUP, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGKILL:
			return 128 + int(ws.Signal()), 0
		}
		return 128 + int(ws.Signal()), 1
	}
	return 1, 1
}

// signum is a signal's number.
func signum(sig os.Signal) int {
	if s, ok := sig.(syscall.Signal); ok {
		return int(s)
	}
	return 0
}

// lookup reads a variable of an environment list.
func lookup(env []string, name string) string {
	e := jobopts.NewEnviron(env)
	v, _ := e.Lookup(name)
	return v
}

// ringBell rings the terminal bell when standard output is a terminal.
func ringBell(w io.Writer) {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		io.WriteString(f, "\a")
	}
}

// shareOutput makes writers that are not files safe to share between
// salloc's messages and the copies os/exec makes of the command's output
// (a bytes.Buffer's ReadFrom would drop what salloc writes meanwhile).
// Files are passed to the command as they are.
func shareOutput(stdout, stderr io.Writer) (io.Writer, io.Writer) {
	mu := &sync.Mutex{}
	wrap := func(w io.Writer) io.Writer {
		if _, ok := w.(*os.File); ok || w == nil {
			return w
		}
		return &lockedWriter{mu: mu, w: w}
	}
	return wrap(stdout), wrap(stderr)
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
