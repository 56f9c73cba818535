//go:build linux

// Package proctrack tracks and kills the whole process tree of a job, as
// Slurm's proctrack/cgroup plugin does, with proctrack/pgid as the fallback
// where cgroups cannot be used.
//
// Every job runs as the leader of its own process group and, where the
// machine allows it, inside its own cgroup under a per-daemon root
// (cgroup v1 on legacy and hybrid hosts, cgroup v2 on unified ones). The
// cgroup is what makes tracking complete: a process that calls setsid(2) or
// double-forks leaves the process group but can never leave the cgroup, so
// Signal, Kill and Destroy reach it. Without cgroups the tracker follows the
// process group and the descendants of its members, which misses processes
// that both left the group and lost their parent, exactly the limitation
// Slurm documents for proctrack/pgid.
package proctrack

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3"
	specs "github.com/opencontainers/runtime-spec/specs-go"
	"golang.org/x/sys/unix"
)

// Mode names reported by Tracker.Mode.
const (
	// ModeCgroupV1 tracks jobs in cgroup v1 hierarchies (legacy and hybrid hosts).
	ModeCgroupV1 = "cgroup-v1"
	// ModeCgroupV2 tracks jobs in the cgroup v2 unified hierarchy.
	ModeCgroupV2 = "cgroup-v2"
	// ModePGID tracks jobs by process group only, like Slurm's proctrack/pgid.
	ModePGID = "pgid"
)

// DefaultRoot is the cgroup subtree used when Options.Root is empty.
const DefaultRoot = "drover"

// Options configures the tracker of one node daemon.
type Options struct {
	// Root names the cgroup subtree under which job cgroups are created,
	// e.g. "drover/n1". It is relative to the cgroup mount (a leading "/"
	// is accepted) and must be distinct per node daemon: several run on one
	// machine in tests and in `drover dev`. On a systemd host using cgroup
	// v2 it should name a subtree delegated to the daemon.
	Root string
	// DisableCgroups forces process-group tracking only.
	DisableCgroups bool

	// mountpoint and forceMode let tests run the cgroup v2 code against the
	// v2 hierarchy of a hybrid host (mounted at /sys/fs/cgroup/unified).
	mountpoint string
	forceMode  string
}

// Limits are the resource limits applied to a job's cgroup, as Slurm's
// task/cgroup applies ConstrainRAMSpace and ConstrainCores. Zero values mean
// no limit. Limits are ignored in process-group mode, where nothing can
// enforce them.
type Limits struct {
	// MemoryBytes caps the memory of the whole tree (memory.limit_in_bytes
	// on v1, memory.max on v2). The kernel rounds it down to a page.
	MemoryBytes int64
	// CPUs restricts the tree to a CPU list in cpuset syntax, e.g. "0-3,8".
	CPUs string
	// Affinity is the CPU affinity the process starts with (srun's
	// --cpu-bind): the thread that forks it carries the mask, so the
	// process runs on these CPUs from its first instruction and its
	// children inherit them. Unlike CPUs it needs no cpuset hierarchy,
	// and the process may change it.
	Affinity []int
	// DenyDevices are device files the tree may not open (cgroup.conf
	// ConstrainDevices: the node's GPUs a step was not given), enforced by
	// the devices controller (devices.deny on v1, an eBPF filter on v2).
	DenyDevices []Device
	// AccountCPU puts the tree in the cpuacct hierarchy on v1, whose
	// counters then tell its CPU time (Group.CPUTimes); v2 counts it
	// in every cgroup.
	AccountCPU bool
}

// Device is a device node, as the devices controller names it.
type Device struct {
	// Type is 'c' (character) or 'b' (block).
	Type         byte
	Major, Minor int64
}

// DeviceOf reads the device node at path.
func DeviceOf(path string) (Device, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return Device{}, fmt.Errorf("device %s: %w", path, err)
	}
	d := Device{Major: int64(unix.Major(st.Rdev)), Minor: int64(unix.Minor(st.Rdev))}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		d.Type = 'c'
	case unix.S_IFBLK:
		d.Type = 'b'
	default:
		return Device{}, fmt.Errorf("device %s: not a device node", path)
	}
	return d, nil
}

// deviceRules are the devices controller's rules for limits: everything
// allowed but the denied devices. A v1 child cgroup inherits its parent's
// list, so allowing all there is a no-op; v2's filter needs it to start
// from an open list.
func (l Limits) deviceRules() []specs.LinuxDeviceCgroup {
	if len(l.DenyDevices) == 0 {
		return nil
	}
	rules := []specs.LinuxDeviceCgroup{{Allow: true, Type: "a", Access: "rwm"}}
	for _, d := range l.DenyDevices {
		major, minor := d.Major, d.Minor
		rules = append(rules, specs.LinuxDeviceCgroup{Allow: false, Type: string(d.Type), Major: &major, Minor: &minor, Access: "rwm"})
	}
	return rules
}

// ErrNotChild is returned by Group.Wait for a group adopted after a daemon
// restart: its leader is not a child of this process, so it cannot be
// waited for.
var ErrNotChild = errors.New("process group was not started by this tracker")

// Tracker starts jobs in trackable process trees. It is safe for concurrent
// use.
type Tracker struct {
	root     string
	mode     string
	backend  backend
	fallback error
	// cgroupFailures counts cgroups that could not be made, for the
	// node daemon's metrics.
	cgroupFailures atomic.Uint64
}

// CgroupFailures counts the job and step cgroups that could not be made
// since the tracker was.
func (t *Tracker) CgroupFailures() uint64 { return t.cgroupFailures.Load() }

// backend is one cgroup implementation (v1 or v2).
type backend interface {
	create(name string, limits Limits) (cgroupHandle, error)
	load(name string) (cgroupHandle, error)
	children() ([]string, error)
	removeRoot() error
}

// cgroupHandle is one job cgroup.
type cgroupHandle interface {
	// start starts each cmd so that its first instruction already runs
	// inside the cgroup, the i-th on the CPUs affinity[i] (none: as it
	// is), and returns one error per cmd.
	start(cmds []*exec.Cmd, affinity [][]int) []error
	// procs lists the live processes of the cgroup and its descendants.
	procs() ([]int, error)
	// kill sends SIGKILL to every process, without letting a fork escape.
	kill() error
	// remove deletes the (empty) cgroup; removing a missing one succeeds.
	remove() error
	// String names the cgroup for errors.
	String() string
	// path is the cgroup's path below the cgroup mount.
	path() string
	// cpu is the CPU time the cgroup's processes spent, those gone
	// included (cpuacct.stat on v1, cpu.stat on v2).
	cpu() (user, system time.Duration, err error)
}

// New returns the tracker of one node daemon. It picks cgroup v2 on a
// unified host, cgroup v1 on a legacy or hybrid one, and falls back to
// process groups when cgroups are disabled, absent or not writable (for
// example without root): it never fails for that reason. Mode and
// FallbackReason say what was chosen and why.
func New(opts Options) (*Tracker, error) {
	root, err := cleanRoot(opts.Root)
	if err != nil {
		return nil, err
	}
	t := &Tracker{root: root, mode: ModePGID}
	if opts.DisableCgroups {
		return t, nil
	}
	mode := opts.forceMode
	if mode == "" {
		switch cgroups.Mode() {
		case cgroups.Unified:
			mode = ModeCgroupV2
		case cgroups.Legacy, cgroups.Hybrid:
			// On a hybrid host the controllers live in the v1
			// hierarchies; the v2 one mounted beside them has none.
			mode = ModeCgroupV1
		default:
			t.fallback = errors.New("no cgroup file system is mounted")
			return t, nil
		}
	}
	var b backend
	switch mode {
	case ModeCgroupV1:
		b, err = newV1Backend(root)
	case ModeCgroupV2:
		mnt := opts.mountpoint
		if mnt == "" {
			mnt = defaultV2Mountpoint
		}
		b, err = newV2Backend(mnt, root)
	default:
		return nil, fmt.Errorf("proctrack: unknown mode %q", mode)
	}
	if err != nil {
		t.fallback = err
		return t, nil
	}
	t.mode, t.backend = mode, b
	return t, nil
}

// cleanRoot validates Options.Root and returns it without a leading slash.
func cleanRoot(root string) (string, error) {
	if root == "" {
		return DefaultRoot, nil
	}
	clean := strings.TrimPrefix(path.Clean("/"+root), "/")
	if clean == "" || clean != strings.Trim(root, "/") || strings.ContainsRune(root, 0) {
		return "", fmt.Errorf("proctrack: invalid cgroup root %q: want a clean relative path such as \"drover/n1\"", root)
	}
	return clean, nil
}

// validName checks that a job cgroup name is a single path element.
func validName(name string) error {
	if name == "" || name == "." || name == ".." || len(name) > 255 || strings.ContainsAny(name, "/\x00") {
		return fmt.Errorf("proctrack: invalid group name %q: want a single path element such as \"job_123\"", name)
	}
	return nil
}

// Mode returns how jobs are tracked: ModeCgroupV1, ModeCgroupV2 or ModePGID.
func (t *Tracker) Mode() string { return t.mode }

// Root returns the cgroup subtree of this tracker, without a leading slash.
func (t *Tracker) Root() string { return t.root }

// FallbackReason says why cgroups are not used although they were not
// disabled, so that the node daemon can log it; nil when Mode is a cgroup
// mode or Options.DisableCgroups was set.
func (t *Tracker) FallbackReason() error { return t.fallback }

// Start starts cmd as the leader of a new process group (Setpgid, unless
// the caller asked for Setsid, which implies it) and, in a cgroup mode,
// inside a new cgroup called name under Root with the given limits. The
// child is inside the cgroup before it can run a single instruction, so it
// cannot fork a process that escapes: see the v1 and v2 start methods for
// how. Other SysProcAttr fields the caller set (Credential, Setctty...) are
// kept; UseCgroupFD and CgroupFD belong to the tracker. On failure the
// cgroup is removed again.
func (t *Tracker) Start(cmd *exec.Cmd, name string, limits Limits) (*Group, error) {
	g, err := t.NewGroup(name, limits)
	if err != nil {
		return nil, err
	}
	if err := g.Start([]*exec.Cmd{cmd}, [][]int{limits.Affinity})[0]; err != nil {
		if g.cg != nil {
			if rerr := g.cg.remove(); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
		return nil, err
	}
	return g, nil
}

// NewGroup makes an empty group called name, in a cgroup mode a new cgroup
// under Root with the given limits (Limits.Affinity is ignored: each
// process gets its own in Group.Start). Processes are added with
// Group.Start. This is how a node starts a job step's tasks: one group,
// as Slurm keeps a step in one cgroup, so that the cgroup is made, joined
// and removed once per step rather than once per task.
func (t *Tracker) NewGroup(name string, limits Limits) (*Group, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	if limits.MemoryBytes < 0 {
		return nil, fmt.Errorf("proctrack: start %s: negative memory limit %d", name, limits.MemoryBytes)
	}
	g := &Group{name: name}
	if t.backend == nil {
		return g, nil
	}
	cg, err := t.backend.create(name, limits)
	if err != nil {
		t.cgroupFailures.Add(1)
		return nil, fmt.Errorf("proctrack: create cgroup for %s: %w", name, err)
	}
	g.cg = cg
	return g, nil
}

// Orphans lists the job cgroups left under Root, typically by a previous
// run of the node daemon, sorted by name. The daemon adopts each one with
// Adopt and destroys it, as slurmd does with the steps it finds on restart.
// In process-group mode nothing survives a restart in a findable way, so
// the list is empty.
func (t *Tracker) Orphans() ([]string, error) {
	if t.backend == nil {
		return nil, nil
	}
	names, err := t.backend.children()
	if err != nil {
		return nil, fmt.Errorf("proctrack: list job cgroups under %s: %w", t.root, err)
	}
	slices.Sort(names)
	return names, nil
}

// Adopt returns the group of an existing job cgroup, typically one listed
// by Orphans, so that it can be signalled and destroyed. Its leader is not
// a child of this process: Wait returns ErrNotChild.
func (t *Tracker) Adopt(name string) (*Group, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	if t.backend == nil {
		return nil, fmt.Errorf("proctrack: adopt %s: not possible in %s mode", name, t.mode)
	}
	cg, err := t.backend.load(name)
	if err != nil {
		return nil, fmt.Errorf("proctrack: adopt %s: %w", name, err)
	}
	return &Group{name: name, cg: cg}, nil
}

// Cleanup removes the Root subtree at node daemon shutdown. Job cgroups that
// are already empty are removed with it; if any still holds processes,
// Cleanup leaves everything in place and says which, since those jobs must
// be killed (or kept running) first. Parents of Root shared with other
// daemons are removed only when they are empty.
func (t *Tracker) Cleanup() error {
	if t.backend == nil {
		return nil
	}
	names, err := t.Orphans()
	if err != nil {
		return err
	}
	var busy []string
	for _, name := range names {
		cg, err := t.backend.load(name)
		if err != nil {
			return fmt.Errorf("proctrack: cleanup %s: %w", name, err)
		}
		pids, err := cg.procs()
		if err != nil {
			return fmt.Errorf("proctrack: cleanup %s: %w", name, err)
		}
		if len(pids) > 0 {
			busy = append(busy, name)
			continue
		}
		if err := cg.remove(); err != nil {
			return fmt.Errorf("proctrack: cleanup %s: %w", name, err)
		}
	}
	if len(busy) > 0 {
		return fmt.Errorf("proctrack: cleanup %s: job cgroups still hold processes: %s", t.root, strings.Join(busy, ", "))
	}
	if err := t.backend.removeRoot(); err != nil {
		return fmt.Errorf("proctrack: cleanup %s: %w", t.root, err)
	}
	return nil
}

// removeTree removes dir and then each parent of it up to (not including)
// top. dir itself must go; a parent that is busy or not empty belongs to
// another daemon too and is left alone.
func removeTree(top, dir string) error {
	if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	for p := path.Dir(dir); strings.HasPrefix(p, top+"/"); p = path.Dir(p) {
		if err := os.Remove(p); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if errors.Is(err, syscall.EBUSY) || errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
				return nil
			}
			return fmt.Errorf("remove %s: %w", p, err)
		}
	}
	return nil
}

// startOn starts cmd from a thread whose CPU affinity is cpus for the
// fork (affinity is inherited across fork and exec), then gives the thread
// its mask back. Without cpus, or when the mask cannot be set (CPUs this
// machine lacks, as a node configured with more CPUs than it has), it is
// cmd.Start. If the mask cannot be put back the thread stays locked, and
// the runtime ends it with the goroutine.
func startOn(cpus []int, cmd *exec.Cmd) error {
	if len(cpus) == 0 {
		return cmd.Start()
	}
	runtime.LockOSThread()
	var old, set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	if unix.SchedGetaffinity(0, &old) != nil || unix.SchedSetaffinity(0, &set) != nil {
		runtime.UnlockOSThread()
		return cmd.Start()
	}
	err := cmd.Start()
	if unix.SchedSetaffinity(0, &old) == nil {
		runtime.UnlockOSThread()
	}
	return err
}
