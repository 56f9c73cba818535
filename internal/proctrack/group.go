//go:build linux

package proctrack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultDestroyTimeout bounds Destroy when its context has no deadline. It
// matches the default of Slurm's UnkillableStepTimeout, after which slurmd
// gives up on a step whose processes do not die.
const DefaultDestroyTimeout = 60 * time.Second

// Group is the process tree of one job, or of one step's tasks on a node:
// the process groups of the processes started in it and, in a cgroup mode,
// one cgroup holding them all. Its methods are safe for concurrent use,
// except that each started process may be waited for only once, as with
// exec.Cmd.
type Group struct {
	name string
	cg   cgroupHandle // nil in process-group mode

	mu      sync.Mutex
	leaders []*leader // none for an adopted group

	// destroyed is set once Destroy has seen the tree empty: nothing can
	// join it again, and signalling by number could only hit strangers.
	destroyed atomic.Bool
}

// leader is a process started in a group, the leader of its own process
// group.
type leader struct {
	cmd *exec.Cmd
	// reaped is set once Wait has reaped it. From then on the kernel may
	// hand its group's number to a new process group as soon as ours is
	// empty, so with a cgroup to go by the number is no longer used.
	reaped atomic.Bool
}

func (l *leader) pgid() int { return l.cmd.Process.Pid }

// groupIDs returns the process groups to signal by number: none once that
// is no longer safe or useful (see leader.reaped and destroyed). Without a
// cgroup the numbers are all there is, with the pid-reuse risk Slurm's
// proctrack/pgid also accepts.
func (g *Group) groupIDs() []int {
	if g.destroyed.Load() {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	ids := make([]int, 0, len(g.leaders))
	for _, l := range g.leaders {
		if g.cg == nil || !l.reaped.Load() {
			ids = append(ids, l.pgid())
		}
	}
	return ids
}

// liveGroupIDs is groupIDs without the groups that have no process left.
func (g *Group) liveGroupIDs() []int {
	ids := g.groupIDs()
	live := ids[:0]
	for _, id := range ids {
		if !groupGone(id) {
			live = append(live, id)
		}
	}
	return live
}

// Name returns the name the group was started or adopted under.
func (g *Group) Name() string { return g.name }

// CgroupPath is the group's cgroup below the cgroup mount
// ("/drover/c/n1/job_7_step_0"), "" for a process group. A child cgroup
// made there (by a container runtime) stays part of the group: its
// processes are listed, signalled and killed with the group's.
func (g *Group) CgroupPath() string {
	if g.cg == nil {
		return ""
	}
	return g.cg.path()
}

// Pid returns the process id of the first process started in the group,
// or 0 for an adopted group.
func (g *Group) Pid() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.leaders) == 0 {
		return 0
	}
	return g.leaders[0].pgid()
}

// Start starts cmds in the group, each as the leader of a new process
// group (Setpgid, unless the caller asked for Setsid, which implies it),
// the i-th on the CPUs affinity[i] when there are any (affinity may be
// shorter than cmds). See Tracker.Start for what else it does. It returns
// one error per command, nil for each that started; a command that failed
// may be built again and started on its own. Starting in a destroyed group
// fails.
func (g *Group) Start(cmds []*exec.Cmd, affinity [][]int) []error {
	errs := make([]error, len(cmds))
	if g.destroyed.Load() {
		for i := range errs {
			errs[i] = fmt.Errorf("proctrack: start in %s: the group was destroyed", g.name)
		}
		return errs
	}
	affs := make([][]int, len(cmds))
	copy(affs, affinity)
	for _, cmd := range cmds {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		if !cmd.SysProcAttr.Setsid {
			// setpgid(0, 0) after setsid(2) would fail with EPERM: a
			// session leader already leads its own process group.
			cmd.SysProcAttr.Setpgid = true
			cmd.SysProcAttr.Pgid = 0
		}
	}
	if g.cg == nil {
		for i, cmd := range cmds {
			errs[i] = startOn(affs[i], cmd)
		}
	} else {
		errs = g.cg.start(cmds, affs)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, cmd := range cmds {
		if errs[i] != nil {
			where := ""
			if g.cg != nil {
				where = " in " + g.cg.String()
			}
			errs[i] = fmt.Errorf("proctrack: start %s%s: %w", g.name, where, errs[i])
			continue
		}
		g.leaders = append(g.leaders, &leader{cmd: cmd})
	}
	return errs
}

// Pids returns the live processes of the tree, sorted: everything in the
// cgroup, and the members of the process group with their descendants.
// Zombies are left out: they have exited and only wait to be reaped.
func (g *Group) Pids() ([]int, error) {
	if g.destroyed.Load() {
		return nil, nil
	}
	var pids []int
	if g.cg != nil {
		p, err := g.cg.procs()
		if err != nil {
			return nil, fmt.Errorf("proctrack: list processes of %s: %w", g.name, err)
		}
		pids = p
	}
	if live := g.liveGroupIDs(); len(live) > 0 {
		procs, err := scanProcs()
		if err != nil {
			return nil, fmt.Errorf("proctrack: list processes of %s: %w", g.name, err)
		}
		pids = append(pids, treeMembers(procs, live, os.Getpid())...)
	}
	slices.Sort(pids)
	return slices.Compact(pids), nil
}

// Signal sends sig to every process of the tree exactly once: each
// process group with one kill(2), then every other process found in the
// cgroup (those that called setsid(2)) or, without a cgroup, among the
// group's descendants. Processes are listed before any is signalled, so
// that a parent's death cannot hide its children by reparenting them. A
// process must not get the signal twice: a handler (a USR1 trap) would
// run twice. A tree with no process left is not an error: the signal has
// nobody to reach, as when scancel races with the end of a job.
func (g *Group) Signal(sig syscall.Signal) error {
	pids, err := g.members()
	if err != nil {
		err = fmt.Errorf("list processes: %w", err)
	}
	pgids := g.groupIDs()
	others := pids[:0]
	for _, p := range pids {
		if len(pgids) > 0 {
			if pg, gerr := syscall.Getpgid(p); gerr == nil && slices.Contains(pgids, pg) {
				continue // reached through its process group
			}
		}
		others = append(others, p)
	}
	errs := []error{err}
	for _, pgid := range pgids {
		if err := ignoreGone(syscall.Kill(-pgid, sig)); err != nil {
			errs = append(errs, fmt.Errorf("signal process group %d: %w", pgid, err))
		}
	}
	errs = append(errs, signalAll(others, sig))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("proctrack: signal %s with %s: %w", g.name, sig, err)
	}
	return nil
}

// members lists the processes to signal: the cgroup's when there is one,
// else the process groups' members and their descendants.
func (g *Group) members() ([]int, error) {
	if g.destroyed.Load() {
		return nil, nil
	}
	if g.cg != nil {
		return g.cg.procs()
	}
	live := g.liveGroupIDs()
	if len(live) == 0 {
		return nil, nil
	}
	procs, err := scanProcs()
	if err != nil {
		return nil, err
	}
	return treeMembers(procs, live, os.Getpid()), nil
}

// Kill sends SIGKILL to every process of the tree without letting a
// concurrent fork escape. With a cgroup that is cgroup.kill on v2; on v1,
// and on v2 kernels without cgroup.kill, the freezer stops the tree while it
// is killed, as Slurm's proctrack/cgroup does. Without a cgroup the tree is
// stopped with SIGSTOP, listed again until no new process appears, and then
// killed, which also keeps a dying parent from orphaning its children before
// they are found.
func (g *Group) Kill() error {
	var errs []error
	if g.cg != nil {
		if err := g.cg.kill(); err != nil {
			errs = append(errs, err)
		}
	} else if len(g.groupIDs()) > 0 {
		errs = append(errs, g.stopTree())
		if err := g.Signal(syscall.SIGKILL); err != nil {
			errs = append(errs, err)
		}
	}
	for _, pgid := range g.groupIDs() {
		if err := ignoreGone(syscall.Kill(-pgid, syscall.SIGKILL)); err != nil {
			errs = append(errs, fmt.Errorf("kill process group %d: %w", pgid, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("proctrack: kill %s: %w", g.name, err)
	}
	return nil
}

// stopTree sends SIGSTOP to the tree until a listing finds no process it
// has not stopped yet (or a few rounds have passed: a tree that forks
// faster than it can be listed is killed regardless).
func (g *Group) stopTree() error {
	stopped := map[int]bool{}
	for range 8 {
		pids, err := g.members()
		if err != nil {
			return err
		}
		fresh := false
		for _, pid := range pids {
			if !stopped[pid] {
				stopped[pid], fresh = true, true
				if err := ignoreGone(syscall.Kill(pid, syscall.SIGSTOP)); err != nil {
					return fmt.Errorf("stop process %d: %w", pid, err)
				}
			}
		}
		if !fresh {
			return nil
		}
	}
	return nil
}

// Wait waits for the group's first process to exit and returns its state,
// as exec.Cmd.Wait does (a non-zero exit is an *exec.ExitError). Other
// processes of the tree may still run: Destroy ends them. An adopted group
// returns ErrNotChild.
func (g *Group) Wait() (*os.ProcessState, error) {
	g.mu.Lock()
	var first *exec.Cmd
	if len(g.leaders) > 0 {
		first = g.leaders[0].cmd
	}
	g.mu.Unlock()
	return g.WaitFor(first)
}

// WaitFor is Wait for one of the processes the group started, cmd.
func (g *Group) WaitFor(cmd *exec.Cmd) (*os.ProcessState, error) {
	g.mu.Lock()
	var l *leader
	for _, c := range g.leaders {
		if c.cmd == cmd {
			l = c
		}
	}
	g.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("proctrack: wait for %s: %w", g.name, ErrNotChild)
	}
	err := cmd.Wait()
	if cmd.ProcessState != nil {
		l.reaped.Store(true)
	}
	return cmd.ProcessState, err
}

// Destroy kills whatever is left of the tree, waits until no process
// remains and removes the cgroup. It gives up when ctx ends, or after
// DefaultDestroyTimeout if ctx has no deadline, and then reports the
// processes that would not die (in uninterruptible sleep, typically), as
// slurmd reports an unkillable step. Destroying a destroyed group succeeds.
// It does not reap the leader: call Wait for that.
func (g *Group) Destroy(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultDestroyTimeout)
		defer cancel()
	}
	delay := time.Millisecond
	pause := func() error {
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			delay = min(2*delay, 100*time.Millisecond)
			return nil
		}
	}
	// A tree whose processes have all ended, the usual case, is not
	// frozen and killed for nothing: on cgroup v1 that costs more than
	// everything else.
	pids, err := g.Pids()
	var killErr error
	for err != nil || len(pids) > 0 {
		killErr = g.Kill()
		if pids, err = g.Pids(); err == nil && len(pids) == 0 {
			break
		}
		if werr := pause(); werr != nil {
			if err == nil {
				err = fmt.Errorf("%d processes would not die: %v", len(pids), pids)
			}
			return fmt.Errorf("proctrack: destroy %s: %w", g.name, errors.Join(err, killErr, werr))
		}
	}
	if g.cg == nil {
		g.destroyed.Store(true)
		return nil
	}
	for {
		// rmdir can fail briefly with EBUSY while the kernel finishes
		// tearing down the last exited tasks.
		err := g.cg.remove()
		if err == nil {
			g.destroyed.Store(true)
			return nil
		}
		if werr := pause(); werr != nil {
			return fmt.Errorf("proctrack: destroy %s: %w", g.name, errors.Join(err, werr))
		}
	}
}

// groupGone reports whether process group pgid has no process left, not
// even a zombie. The tree is then empty too: treeMembers reaches other
// processes only as descendants of a member, so with no member there is
// nothing to find, and the scan of the whole process table (the cost of
// ending a job in process-group mode) can be skipped.
func groupGone(pgid int) bool {
	return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
}

// signalAll sends sig to each pid, ignoring those that are already gone.
func signalAll(pids []int, sig syscall.Signal) error {
	var errs []error
	for _, pid := range pids {
		if pid == self || pid <= 0 {
			continue // never this daemon, never a process group
		}
		if err := ignoreGone(syscall.Kill(pid, sig)); err != nil {
			errs = append(errs, fmt.Errorf("signal process %d: %w", pid, err))
		}
	}
	return errors.Join(errs...)
}

// ignoreGone treats "no such process" as success: the process we meant to
// signal has exited, which is what signalling it was for.
func ignoreGone(err error) error {
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// userHZ is the unit of cgroup v1's cpuacct.stat (USER_HZ).
const userHZ = 100

// statValue reads "key value" lines (cpuacct.stat, cpu.stat); a missing
// or malformed key reads as 0.
func statValue(data []byte, key string) uint64 {
	for line := range strings.Lines(string(data)) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), " ")
		if ok && k == key {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// CPUTimes is the CPU time every process of the group spent, reaped ones
// and those that left the process tree included; ok is false without a
// cgroup (or where its CPU accounting cannot be read), and then only
// /proc can tell.
func (g *Group) CPUTimes() (user, system time.Duration, ok bool) {
	if g.cg == nil {
		return 0, 0, false
	}
	u, s, err := g.cg.cpu()
	if err != nil {
		return 0, 0, false
	}
	return u, s, true
}
