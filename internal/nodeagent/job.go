package nodeagent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/acctgather"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/outpattern"
	"github.com/droverhq/drover/internal/proctrack"
	"github.com/droverhq/drover/internal/usercred"
	"github.com/droverhq/drover/plugins/protocol"
)

// runningJob is one batch script and its process tree.
type runningJob struct {
	id    uint32
	run   uint32
	agent *Agent
	group *proctrack.Group
	// gather samples the script's processes.
	gather *gatherer

	mu   sync.Mutex
	kind nodeproto.EndKind // set when we were asked to end it
	// killTimer fires SIGKILL KillWait after SIGTERM.
	killTimer *time.Timer
	// spankHook describes the batch step to the launch hooks' last
	// stages; nil without hooks.
	spankHook *protocol.Hook
}

// launch starts a batch job. It is idempotent: a repeated launch of a job
// that runs or ran here is acknowledged without starting it again.
func (a *Agent) launch(l *nodeproto.Launch) error {
	a.mu.Lock()
	_, running := a.jobs[l.JobID]
	d, done := a.done[l.JobID]
	if done && d.Run < l.RestartCount {
		// The end of an earlier run, which the controller no longer
		// needs: the job was requeued and runs again here.
		a.forgetLocked(l.JobID)
		done = false
	}
	if running || done {
		a.mu.Unlock()
		return nil
	}
	if kind, ok := a.ended[l.JobID]; ok {
		delete(a.ended, l.JobID)
		a.mu.Unlock()
		a.logger.Info("job ended before its launch arrived", "job", l.JobID, "kind", kind)
		_ = os.MkdirAll(a.jobDir(l.JobID), 0o700)
		a.finish(nodeproto.JobDone{Node: a.cfg.Name, JobID: l.JobID, Run: l.RestartCount, Kind: kind, EndTime: time.Now()})
		return nil
	}
	j := &runningJob{id: l.JobID, run: l.RestartCount, agent: a}
	a.jobs[l.JobID] = j
	delete(a.lost, l.JobID)
	a.mu.Unlock()

	if err := j.start(l); err != nil {
		a.logger.Error("batch launch failed", "job", l.JobID, "err", err)
		a.finish(nodeproto.JobDone{Node: a.cfg.Name, JobID: l.JobID, Run: l.RestartCount, Kind: nodeproto.EndFailed, ExitCode: 1, EndTime: time.Now(), Error: err.Error()})
	}
	return nil
}

// start writes the script, opens the output files as the job's user and
// starts the script in its own process group and cgroup.
func (j *runningJob) start(l *nodeproto.Launch) error {
	a := j.agent
	dir := a.jobDir(l.JobID)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create job folder: %w", err)
	}
	script := filepath.Join(dir, "slurm_script")
	if err := writeExecutable(script, []byte(l.Script)); err != nil {
		return fmt.Errorf("write batch script: %w", err)
	}
	switchUser := os.Geteuid() == 0
	var id *usercred.Identity
	if switchUser {
		var err error
		// The uid is the one the controller signed for; it and the gid
		// must exist here, as slurmd checks before it runs anything.
		id, err = usercred.Lookup(l.UID)
		if err == nil {
			err = id.CheckGID(l.GID)
		}
		if err != nil {
			return fmt.Errorf("user %d: %w", l.UID, err)
		}
		// The user must be able to run the script (Slurm's slurmstepd
		// makes the spool copy readable by the job's user).
		for _, p := range []string{dir, script} {
			if err := os.Chown(p, int(l.UID), int(l.GID)); err != nil {
				return fmt.Errorf("chown %s: %w", p, err)
			}
		}
	}

	vals := outpattern.Values{
		JobID: l.JobID, ArrayJobID: l.JobID, ArrayTaskID: l.ArrayTaskID, StepID: outpattern.BatchStep,
		JobName: l.Name, User: l.UserName, NodeName: a.cfg.Name, NodeID: 0, TaskID: 0,
	}
	if l.ArrayJobID != 0 {
		vals.ArrayJobID = l.ArrayJobID
	}
	outPat := l.StdOut
	if outPat == "" {
		outPat = outpattern.Default(l.ArrayJobID != 0)
	}
	workDir := l.WorkDir
	if st, err := os.Stat(workDir); err != nil || !st.IsDir() {
		// slurmstepd falls back to /tmp when the working folder is gone.
		workDir = os.TempDir()
	}
	outPath := outpattern.Resolve(workDir, outpattern.Expand(outPat, vals))
	errPath := outPath
	if l.StdErr != "" {
		errPath = outpattern.Resolve(workDir, outpattern.Expand(l.StdErr, vals))
	}
	inPath := "/dev/null"
	if l.StdIn != "" {
		inPath = outpattern.Resolve(workDir, outpattern.Expand(l.StdIn, vals))
	}

	if wantsUserEnv(l.Environment) {
		// The user is the one the controller signed for.
		if id == nil {
			return errors.New("Unable to get user's local environment: the node daemon does not run as root")
		}
		loaded, err := withUserEnv(context.Background(), id.Name, l.Environment)
		if err != nil {
			return fmt.Errorf("Unable to get user's local environment: %w", err)
		}
		copied := *l
		copied.Environment = loaded
		l = &copied
	}
	if a.cfg.ConfPath != "" {
		// A configless node has its own copy (slurmd sets SLURM_CONF to
		// its conf-cache for its jobs).
		copied := *l
		copied.ConfPath = a.cfg.ConfPath
		l = &copied
	}
	env, prop := batchEnv(l, a.cfg.Name, a.current().ConstrainDevices)
	env, hook, err := a.spankBatchStart(l, env)
	if err != nil {
		return err
	}
	j.spankHook = hook
	// A tiny shell prologue, already running as the job's user, learns
	// SLURM_TASK_PID (the script's own pid), applies the propagated limits
	// and umask, opens the output files (so the user creates them, with
	// the user's rights, as slurmstepd does), enters the working folder,
	// and then becomes the script. The paths come as positional
	// parameters, so nothing extra reaches the environment.
	prologue := `SLURM_TASK_PID=$$; export SLURM_TASK_PID; ` + prop.shell()
	if validUmask(prop.umask) {
		prologue += "umask " + prop.umask + "; "
	}
	redirect := ">"
	if l.OpenAppend {
		redirect = ">>"
	}
	prologue += `o=$1; e=$2; i=$3; w=$4; exec ` + redirect + `"$o" <"$i"; `
	if errPath == outPath {
		prologue += `exec 2>&1; `
	} else {
		prologue += `exec 2` + redirect + `"$e"; `
	}
	// The working folder is entered as the user too; like slurmstepd,
	// fall back to /tmp when that fails.
	prologue += "shift 4; cd -- \"$w\" 2>/dev/null || { echo \"slurmstepd: error: couldn't chdir to \\`$w': Permission denied: going to /tmp instead\" >&2; cd /tmp; }; "
	prologue += `unset o e i w; exec "$0" "$@"`
	// argv[0] of a submission is the script's name; the script runs as
	// the spool copy, with the rest as its arguments.
	var scriptArgs []string
	if len(l.Argv) > 1 {
		scriptArgs = l.Argv[1:]
	}
	args := append([]string{"-c", prologue, script, outPath, errPath, inPath, workDir}, scriptArgs...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.Dir = "/"
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if switchUser && id != nil {
		cmd.SysProcAttr.Credential = id.Credential()
		cmd.SysProcAttr.Credential.Gid = l.GID
	}
	limits := proctrack.Limits{DenyDevices: a.otherGPUs(l.GPUs), AccountCPU: a.cfg.AcctGather == GatherCgroup}
	if l.MemPerNode > 0 {
		limits.MemoryBytes = int64(l.MemPerNode) << 20
	}
	g, err := a.tracker.Start(cmd, fmt.Sprintf("job_%d", l.JobID), limits)
	if err != nil {
		return fmt.Errorf("start batch script: %w", err)
	}

	gather := a.newGatherer(j.liveTasks, l.GPUs, true)
	j.mu.Lock()
	j.group = g
	j.gather = gather
	pending := j.kind
	j.mu.Unlock()
	if pending != "" {
		j.terminate(pending, 0)
	}
	a.logger.Info("batch job started", "job", l.JobID, "pid", g.Pid(), "user", l.UserName)
	go j.wait()
	return nil
}

// liveTasks is the script as a sample's one task, while it runs.
func (j *runningJob) liveTasks() ([]acctgather.Task, *proctrack.Group) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.group == nil || j.group.Pid() == 0 {
		return nil, nil
	}
	return []acctgather.Task{{ID: 0, Pid: j.group.Pid()}}, j.group
}

// wait collects the script's exit status, cleans up the process tree and
// reports the end.
func (j *runningJob) wait() {
	st, err := j.group.Wait()
	var usage *job.Usage
	if st != nil {
		j.agent.spankBatchEnd(j.spankHook, st.Sys().(syscall.WaitStatus))
		usage = usageOf(st)
	}
	j.mu.Lock()
	gather := j.gather
	j.mu.Unlock()
	gather.close()
	// Before the cgroup goes: its counters are part of the usage.
	gather.final(0, usage, true, j.group)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	// Children the script left behind die with the job, as Slurm's
	// proctrack does at the end of a step.
	if derr := j.group.Destroy(ctx); derr != nil {
		j.agent.logger.Warn("clean up job processes", "job", j.id, "err", derr)
	}
	cancel()
	j.mu.Lock()
	kind := j.kind
	if j.killTimer != nil {
		j.killTimer.Stop()
	}
	j.mu.Unlock()
	d := nodeproto.JobDone{Node: j.agent.cfg.Name, JobID: j.id, Run: j.run, Kind: nodeproto.EndExited, EndTime: time.Now()}
	if kind != "" {
		d.Kind = kind
	}
	var ee *exec.ExitError
	switch {
	case st != nil:
		d.Usage = usage
		ws := st.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			d.Signal = int32(ws.Signal())
		} else {
			d.ExitCode = int32(ws.ExitStatus())
		}
	case errors.As(err, &ee):
		d.ExitCode = int32(ee.ExitCode())
	case err != nil:
		d.Kind, d.Error, d.ExitCode = nodeproto.EndFailed, err.Error(), 1
	}
	j.agent.logger.Info("batch job ended", "job", j.id, "kind", d.Kind, "exit", d.ExitCode, "signal", d.Signal)
	j.agent.finish(d)
}

// terminate ends the job the way slurmd does: SIGCONT and SIGTERM to every
// process, then SIGKILL after KillWait.
func (j *runningJob) terminate(kind nodeproto.EndKind, killWait time.Duration) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.kind == "" {
		j.kind = kind
	}
	if j.group == nil {
		// Still starting: start() ends it as soon as it runs.
		return
	}
	_ = j.group.Signal(syscall.SIGCONT)
	_ = j.group.Signal(syscall.SIGTERM)
	if j.killTimer == nil {
		g := j.group
		j.killTimer = time.AfterFunc(killWait, func() { _ = g.Kill() })
	}
}

// signal delivers sig to every process of the batch step, or only to
// the batch script's shell.
func (j *runningJob) signal(sig syscall.Signal, shellOnly bool) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.group == nil {
		return fmt.Errorf("job %d has no processes", j.id)
	}
	if shellOnly {
		return syscall.Kill(j.group.Pid(), sig)
	}
	return j.group.Signal(sig)
}

// writeExecutable writes a file that a child is about to execute. No
// process may be forked while the file is open for writing: a child
// forked meanwhile (another job's launch) keeps the descriptor until its
// own exec, and executing the file then fails with ETXTBSY, which the
// job's shell reports as exit status 126 (golang.org/issue/22315). Forks
// in Go take syscall.ForkLock for writing, so holding it for reading
// keeps them out for the few microseconds the file is open.
func writeExecutable(path string, data []byte) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	return os.WriteFile(path, data, 0o700)
}

// usageOf is what a reaped process and the children it reaped used, as
// the kernel counts it (getrusage): ru_maxrss is in KiB, the block
// counts in 512-byte units.
func usageOf(st *os.ProcessState) *job.Usage {
	ru, ok := st.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return nil
	}
	return &job.Usage{
		UserCPU:      time.Duration(ru.Utime.Nano()),
		SystemCPU:    time.Duration(ru.Stime.Nano()),
		MaxRSS:       uint64(ru.Maxrss) << 10,
		MaxDiskRead:  uint64(ru.Inblock) * 512,
		MaxDiskWrite: uint64(ru.Oublock) * 512,
	}
}
