//go:build linux

package proctrack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultDestroyTimeout bounds Destroy when its context has no deadline. It
// matches the default of Slurm's UnkillableStepTimeout, after which slurmd
// gives up on a step whose processes do not die.
const DefaultDestroyTimeout = 60 * time.Second

// Group is the process tree of one job: a process group and, in a cgroup
// mode, a cgroup. Its methods are safe for concurrent use, except that Wait
// may be called only once, as with exec.Cmd.
type Group struct {
	name string
	cmd  *exec.Cmd    // nil for an adopted group
	pgid int          // 0 for an adopted group
	cg   cgroupHandle // nil in process-group mode

	// reaped is set once Wait has reaped the leader. From then on the
	// kernel may hand the group's number to a new process group as soon
	// as ours is empty, so with a cgroup to go by the number is no longer
	// used.
	reaped atomic.Bool
	// destroyed is set once Destroy has seen the tree empty: nothing can
	// join it again, and signalling by number could only hit strangers.
	destroyed atomic.Bool
}

// groupID returns the process group to signal by number, or 0 when that is
// no longer safe or useful (see reaped and destroyed). Without a cgroup the
// number is all there is, with the pid-reuse risk Slurm's proctrack/pgid
// also accepts.
func (g *Group) groupID() int {
	if g.destroyed.Load() || g.cg != nil && g.reaped.Load() {
		return 0
	}
	return g.pgid
}

// Name returns the name the group was started or adopted under.
func (g *Group) Name() string { return g.name }

// Pid returns the process id of the leader, or 0 for an adopted group.
func (g *Group) Pid() int { return g.pgid }

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
	if pgid := g.groupID(); pgid > 0 && !groupGone(pgid) {
		procs, err := scanProcs()
		if err != nil {
			return nil, fmt.Errorf("proctrack: list processes of %s: %w", g.name, err)
		}
		pids = append(pids, treeMembers(procs, pgid, os.Getpid())...)
	}
	slices.Sort(pids)
	return slices.Compact(pids), nil
}

// Signal sends sig to every process of the tree exactly once: the
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
	pgid := g.groupID()
	others := pids[:0]
	for _, p := range pids {
		if pgid > 0 {
			if pg, gerr := syscall.Getpgid(p); gerr == nil && pg == pgid {
				continue // reached through the process group
			}
		}
		others = append(others, p)
	}
	errs := []error{err}
	if pgid > 0 {
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
// else the process group's members and their descendants.
func (g *Group) members() ([]int, error) {
	if g.destroyed.Load() {
		return nil, nil
	}
	if g.cg != nil {
		return g.cg.procs()
	}
	pgid := g.groupID()
	if pgid <= 0 || groupGone(pgid) {
		return nil, nil
	}
	procs, err := scanProcs()
	if err != nil {
		return nil, err
	}
	return treeMembers(procs, pgid, os.Getpid()), nil
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
	} else if g.groupID() > 0 {
		errs = append(errs, g.stopTree())
		if err := g.Signal(syscall.SIGKILL); err != nil {
			errs = append(errs, err)
		}
	}
	if pgid := g.groupID(); pgid > 0 {
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

// Wait waits for the leader to exit and returns its state, as exec.Cmd.Wait
// does (a non-zero exit is an *exec.ExitError). Other processes of the tree
// may still run: Destroy ends them. An adopted group returns ErrNotChild.
func (g *Group) Wait() (*os.ProcessState, error) {
	if g.cmd == nil {
		return nil, fmt.Errorf("proctrack: wait for %s: %w", g.name, ErrNotChild)
	}
	err := g.cmd.Wait()
	if g.cmd.ProcessState != nil {
		g.reaped.Store(true)
	}
	return g.cmd.ProcessState, err
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
	for {
		killErr := g.Kill()
		pids, err := g.Pids()
		if err == nil && len(pids) == 0 {
			if g.cg == nil {
				g.destroyed.Store(true)
			}
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
