//go:build linux

package proctrack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3/cgroup1"
	"github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// v1Mountpoint is where the v1 hierarchies are mounted, one directory per
// controller, as cgroups.Mode assumes.
const v1Mountpoint = "/sys/fs/cgroup"

// v1Controllers are the hierarchies a job cgroup is created in: freezer
// tracks and stops the tree (what Slurm's proctrack/cgroup uses), memory and
// cpuset enforce Limits (task/cgroup), pids and cpuacct account for the job,
// devices is where GRES device constraints go. Hierarchies that are not
// mounted are skipped.
var v1Controllers = []cgroup1.Name{
	cgroup1.Freezer, cgroup1.Pids, cgroup1.Memory, cgroup1.Cpuset,
	cgroup1.Cpu, cgroup1.Cpuacct, cgroup1.Devices,
}

// v1FreezeTimeout bounds how long Kill waits for the freezer: a task in
// uninterruptible sleep can keep a cgroup FREEZING for ever, and the kill
// must go ahead regardless.
const v1FreezeTimeout = time.Second

type v1Backend struct {
	root      string // without leading slash
	hierarchy cgroup1.Hierarchy
	track     cgroup1.Name // the hierarchy processes are listed from
}

func newV1Backend(root string) (*v1Backend, error) {
	all, err := cgroup1.Default()
	if err != nil {
		return nil, fmt.Errorf("find cgroup v1 hierarchies: %w", err)
	}
	var subs []cgroup1.Subsystem
	for _, s := range all {
		if slices.Contains(v1Controllers, s.Name()) {
			subs = append(subs, s)
		}
	}
	if len(subs) == 0 {
		return nil, errors.New("none of the cgroup v1 controllers proctrack uses is mounted")
	}
	b := &v1Backend{
		root:      root,
		hierarchy: func() ([]cgroup1.Subsystem, error) { return subs, nil },
		track:     subs[0].Name(),
	}
	for _, s := range subs {
		if s.Name() == cgroup1.Freezer {
			b.track = cgroup1.Freezer
		}
	}
	// Creating the root is the probe: it fails without root privileges or
	// on a read-only cgroup file system, and the tracker then falls back
	// to process groups.
	if _, err := cgroup1.New(cgroup1.StaticPath("/"+root), &specs.LinuxResources{}, b.opts()...); err != nil {
		return nil, fmt.Errorf("create cgroup v1 root %s: %w", root, err)
	}
	return b, nil
}

func (b *v1Backend) opts() []cgroup1.InitOpts {
	return []cgroup1.InitOpts{
		cgroup1.WithHierarchy(b.hierarchy),
		// No controller is mandatory: tracking needs only one hierarchy.
		func(c *cgroup1.InitConfig) error { c.InitCheck = cgroup1.AllowAny; return nil },
	}
}

// optsFor limits a new job cgroup to the hierarchies it needs: the one
// that tracks processes (freezer), and memory or cpuset only for a limit.
// Creating and removing a directory in every mounted hierarchy for every
// job was most of a short job's cost on the node.
func (b *v1Backend) optsFor(limits Limits) []cgroup1.InitOpts {
	all, _ := b.hierarchy()
	var subs []cgroup1.Subsystem
	for _, s := range all {
		switch {
		case s.Name() == b.track,
			s.Name() == cgroup1.Memory && limits.MemoryBytes > 0,
			s.Name() == cgroup1.Cpuset && limits.CPUs != "",
			s.Name() == cgroup1.Devices && len(limits.DenyDevices) > 0,
			s.Name() == cgroup1.Cpuacct && limits.AccountCPU:
			subs = append(subs, s)
		}
	}
	return []cgroup1.InitOpts{
		cgroup1.WithHierarchy(func() ([]cgroup1.Subsystem, error) { return subs, nil }),
		func(c *cgroup1.InitConfig) error { c.InitCheck = cgroup1.AllowAny; return nil },
	}
}

func (b *v1Backend) has(n cgroup1.Name) bool {
	subs, _ := b.hierarchy()
	return slices.ContainsFunc(subs, func(s cgroup1.Subsystem) bool { return s.Name() == n })
}

func (b *v1Backend) path(name string) string { return "/" + b.root + "/" + name }

func (b *v1Backend) dir(sub cgroup1.Name, name string) string {
	return filepath.Join(v1Mountpoint, string(sub), b.root, name)
}

func (b *v1Backend) create(name string, limits Limits) (cgroupHandle, error) {
	// cgroup1.New skips hierarchies that are not mounted: a limit there
	// would be dropped without a word.
	if limits.MemoryBytes > 0 && !b.has(cgroup1.Memory) {
		return nil, errors.New("memory limit requested but the memory cgroup hierarchy is not mounted")
	}
	if limits.CPUs != "" && !b.has(cgroup1.Cpuset) {
		return nil, errors.New("CPU list requested but the cpuset cgroup hierarchy is not mounted")
	}
	if len(limits.DenyDevices) > 0 && !b.has(cgroup1.Devices) {
		return nil, errors.New("device constraints requested but the devices cgroup hierarchy is not mounted")
	}
	// A leftover cgroup of the same name that still holds processes would
	// mix two jobs: refuse it. An empty one is reused.
	if pids, err := readProcs(b.dir(b.track, name)); err == nil && len(pids) > 0 {
		return nil, fmt.Errorf("cgroup %s already holds processes %v", b.path(name), pids)
	}
	res := &specs.LinuxResources{}
	if limits.MemoryBytes > 0 {
		res.Memory = &specs.LinuxMemory{Limit: &limits.MemoryBytes}
	}
	if limits.CPUs != "" {
		res.CPU = &specs.LinuxCPU{Cpus: limits.CPUs}
	}
	// Only the denials: the new cgroup starts with its parent's list.
	for _, r := range limits.deviceRules() {
		if !r.Allow {
			res.Devices = append(res.Devices, r)
		}
	}
	cg, err := cgroup1.New(cgroup1.StaticPath(b.path(name)), res, b.optsFor(limits)...)
	if err != nil {
		err = fmt.Errorf("create cgroup %s: %w", b.path(name), err)
		if cg, lerr := cgroup1.Load(cgroup1.StaticPath(b.path(name)), b.opts()...); lerr == nil {
			err = errors.Join(err, cg.Delete())
		}
		return nil, err
	}
	return &v1Cgroup{b: b, name: name, cg: cg}, nil
}

func (b *v1Backend) load(name string) (cgroupHandle, error) {
	cg, err := cgroup1.Load(cgroup1.StaticPath(b.path(name)), b.opts()...)
	if err != nil {
		return nil, fmt.Errorf("load cgroup %s: %w", b.path(name), err)
	}
	return &v1Cgroup{b: b, name: name, cg: cg}, nil
}

// children lists job cgroups in any hierarchy, so that one whose creation
// failed half-way is found too.
func (b *v1Backend) children() ([]string, error) {
	subs, _ := b.hierarchy()
	var names []string
	for _, s := range subs {
		n, err := childDirs(filepath.Join(v1Mountpoint, string(s.Name()), b.root))
		if err != nil {
			return nil, err
		}
		names = append(names, n...)
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

func (b *v1Backend) removeRoot() error {
	subs, _ := b.hierarchy()
	var errs []error
	for _, s := range subs {
		top := filepath.Join(v1Mountpoint, string(s.Name()))
		errs = append(errs, removeTree(top, filepath.Join(top, b.root)))
	}
	return errors.Join(errs...)
}

type v1Cgroup struct {
	b    *v1Backend
	name string
	cg   cgroup1.Cgroup
}

func (c *v1Cgroup) String() string { return "cgroup " + c.b.path(c.name) }

// start starts each cmd inside the cgroup on every hierarchy.
//
// cgroup v1 has no equivalent of CLONE_INTO_CGROUP, and a Go program cannot
// run code in the child between fork and exec, so the child cannot wait on a
// pipe until it has been added, as slurmstepd's forked child does. Adding it
// after Start would race with its first fork. Instead the forking thread
// itself moves: on v1 every thread has its own cgroup membership (the
// "tasks" file), and clone(2) puts the child in the cgroups of the thread
// that calls it. So a goroutine locks itself to an OS thread, writes that
// thread's id into the job cgroup's tasks files, starts the commands (os/exec
// forks from the calling thread), and writes the thread back into the
// cgroups it came from. Moving a thread is the slow part on v1 (the kernel
// waits for every CPU to pass a quiescent point), so it is done once for
// all the commands. Nothing else runs on a locked thread meanwhile, and
// threads the runtime creates in that window come from its template
// thread, not from this one. The main thread is never moved: it owns the
// address space, and v1 memory cgroups charge the whole daemon to the
// cgroup of that owner. If the thread cannot be moved back, it is left
// locked so that the runtime destroys it instead of reusing it (a job
// started with Pdeathsig then gets its signal, since that follows the
// forking thread).
func (c *v1Cgroup) start(cmds []*exec.Cmd, affinity [][]int) []error {
	done := make(chan []error, 1)
	go c.startLocked(cmds, affinity, done)
	return <-done
}

// startLocked locks the calling goroutine to its thread and starts cmds
// from it, or from another goroutine when this one landed on the main
// thread.
func (c *v1Cgroup) startLocked(cmds []*exec.Cmd, affinity [][]int, done chan<- []error) {
	runtime.LockOSThread()
	if unix.Gettid() == unix.Getpid() {
		// Keep the main thread locked to this goroutine until a second
		// one has done the work: the scheduler cannot place that one
		// here meanwhile.
		inner := make(chan []error, 1)
		go c.startLocked(cmds, affinity, inner)
		done <- <-inner
		runtime.UnlockOSThread()
		return
	}
	clean, errs := c.startOnThread(cmds, affinity)
	if clean {
		runtime.UnlockOSThread()
	}
	done <- errs
}

// startOnThread runs on a locked thread other than the main one; clean
// reports whether the thread is back in its original cgroups and may be
// reused.
func (c *v1Cgroup) startOnThread(cmds []*exec.Cmd, affinity [][]int) (clean bool, errs []error) {
	errs = make([]error, len(cmds))
	all := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	tid := unix.Gettid()
	orig, err := cgroup1.ParseCgroupFile(fmt.Sprintf("/proc/self/task/%d/cgroup", tid))
	if err != nil {
		return true, all(fmt.Errorf("read cgroups of thread %d: %w", tid, err))
	}
	// The thread goes back only in the hierarchies it leaves: each write
	// to a tasks file waits for the kernel, even one that changes
	// nothing.
	joined := c.cg.Subsystems()
	home, err := cgroup1.Load(func(n cgroup1.Name) (string, error) {
		if p, ok := orig[string(n)]; ok {
			return p, nil
		}
		return "", cgroup1.ErrControllerNotActive
	}, cgroup1.WithHierarchy(func() ([]cgroup1.Subsystem, error) { return joined, nil }),
		func(c *cgroup1.InitConfig) error { c.InitCheck = cgroup1.AllowAny; return nil })
	if err != nil {
		return true, all(fmt.Errorf("load cgroups of thread %d: %w", tid, err))
	}
	task := cgroup1.Process{Pid: tid}
	started := false
	if err := c.cg.AddTask(task); err != nil {
		all(fmt.Errorf("move thread %d into the job cgroup: %w", tid, err))
	} else {
		for i, cmd := range cmds {
			errs[i] = startOn(affinity[i], cmd)
			started = started || errs[i] == nil
		}
	}
	if herr := home.AddTask(task); herr != nil {
		if started {
			// The jobs started inside their cgroup: only this
			// thread is lost, and the runtime discards it.
			return false, errs
		}
		for i := range errs {
			errs[i] = errors.Join(errs[i], fmt.Errorf("move thread %d back: %w", tid, herr))
		}
		return false, errs
	}
	return true, errs
}

func (c *v1Cgroup) path() string { return c.b.path(c.name) }

func (c *v1Cgroup) procs() ([]int, error) {
	// v1's cgroup.procs lists the cgroup's own processes only: those of
	// child cgroups (a container runtime's) are read from theirs.
	pids, err := readProcsTree(c.b.dir(c.b.track, c.name))
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", c, err)
	}
	// cgroup.procs on v1 may repeat a pid and is not sorted.
	slices.Sort(pids)
	return slices.Compact(pids), nil
}

func (c *v1Cgroup) kill() error {
	freezer := filepath.Join(v1Mountpoint, string(cgroup1.Freezer), c.b.root, c.name, "freezer.state")
	frozen := freezeV1(freezer)
	pids, err := c.procs()
	if err == nil {
		err = signalAll(pids, syscall.SIGKILL)
	}
	if frozen {
		// Frozen tasks die as soon as they thaw.
		if terr := os.WriteFile(freezer, []byte("THAWED"), 0); terr != nil && !errors.Is(terr, os.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("thaw %s: %w", c, terr))
		}
	}
	return err
}

// freezeV1 asks the freezer to stop the tree and waits, for a bounded time,
// until it has; it reports whether the cgroup must be thawed afterwards.
func freezeV1(state string) bool {
	if err := os.WriteFile(state, []byte("FROZEN"), 0); err != nil {
		return false
	}
	deadline := time.Now().Add(v1FreezeTimeout)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(state)
		if err != nil || strings.TrimSpace(string(b)) == "FROZEN" {
			break
		}
		time.Sleep(time.Millisecond)
		// Writing again is how a FREEZING cgroup is nudged to retry
		// the tasks that were busy.
		_ = os.WriteFile(state, []byte("FROZEN"), 0)
	}
	return true
}

// remove deletes the (empty) job cgroup from every hierarchy it exists in,
// with rmdir(2) alone: the library's Delete walks each hierarchy first.
func (c *v1Cgroup) remove() error {
	subs, _ := c.b.hierarchy()
	var errs []error
	for _, sub := range subs {
		dir := c.b.dir(sub.Name(), c.name)
		removeChildren(dir)
		err := unix.Rmdir(dir)
		for try := 0; errors.Is(err, unix.EBUSY) && try < 50; try++ {
			// The last task may still be leaving the cgroup.
			time.Sleep(2 * time.Millisecond)
			err = unix.Rmdir(dir)
		}
		if err != nil && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("rmdir %s: %w", dir, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("remove %s: %w", c, err)
	}
	return nil
}

// readProcs reads the pids in one cgroup.procs file; a missing cgroup has
// none. v1 lists the process of every thread in the cgroup, so while this
// daemon's forking thread is inside (see start: a task that exits at once
// can end its step before the thread is back), the daemon's own pid is
// listed: it is left out, or ending the step would signal the daemon.
func readProcs(dir string) ([]int, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			return nil, fmt.Errorf("%s: bad pid %q", dir, f)
		}
		if pid != self {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// self is this process: never one of a job's.
var self = os.Getpid()

// readProcsTree reads the pids of dir and of its child cgroups.
func readProcsTree(dir string) ([]int, error) {
	pids, err := readProcs(dir)
	if err != nil {
		return nil, err
	}
	kids, err := childDirs(dir)
	if err != nil {
		return nil, err
	}
	for _, k := range kids {
		more, err := readProcsTree(filepath.Join(dir, k))
		if err != nil {
			return nil, err
		}
		pids = append(pids, more...)
	}
	return pids, nil
}

// removeChildren removes dir's (empty) child cgroups, deepest first; what
// cannot be removed is left for the removal of dir to report.
func removeChildren(dir string) {
	kids, _ := childDirs(dir)
	for _, k := range kids {
		child := filepath.Join(dir, k)
		removeChildren(child)
		_ = unix.Rmdir(child)
	}
}

// childDirs lists the sub-directories of dir, which are child cgroups; a
// missing dir has none.
func childDirs(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// cpu reads cpuacct.stat, whose times are in USER_HZ ticks.
func (c *v1Cgroup) cpu() (user, system time.Duration, err error) {
	data, err := os.ReadFile(filepath.Join(c.b.dir(cgroup1.Cpuacct, c.name), "cpuacct.stat"))
	if err != nil {
		return 0, 0, fmt.Errorf("read CPU times of %s: %w", c, err)
	}
	u, s := statValue(data, "user"), statValue(data, "system")
	return time.Duration(u) * time.Second / userHZ, time.Duration(s) * time.Second / userHZ, nil
}
