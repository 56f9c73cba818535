//go:build linux

package proctrack

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/containerd/cgroups/v3/cgroup2"
	"golang.org/x/sys/unix"
)

// defaultV2Mountpoint is where the unified hierarchy is mounted on a
// unified host.
const defaultV2Mountpoint = "/sys/fs/cgroup"

// v2FreezeTimeout bounds the wait for cgroup.freeze on kernels without
// cgroup.kill, for the same reason as v1FreezeTimeout.
const v2FreezeTimeout = time.Second

type v2Backend struct {
	mount string
	root  string // without leading slash
	// intoCgroup says the kernel supports clone3 with CLONE_INTO_CGROUP.
	intoCgroup bool
}

func newV2Backend(mount, root string) (*v2Backend, error) {
	b := &v2Backend{mount: mount, root: root, intoCgroup: kernelAtLeast(5, 7)}
	// Creating the root is the probe, as on v1. No controller is enabled
	// here: job cgroups enable the ones their limits need.
	if err := os.MkdirAll(filepath.Join(mount, root), 0o755); err != nil {
		return nil, fmt.Errorf("create cgroup v2 root %s: %w", root, err)
	}
	return b, nil
}

func (b *v2Backend) group(name string) string { return "/" + b.root + "/" + name }

func (b *v2Backend) create(name string, limits Limits) (cgroupHandle, error) {
	dir := filepath.Join(b.mount, b.root, name)
	if pids, err := readProcs(dir); err == nil && len(pids) > 0 {
		return nil, fmt.Errorf("cgroup %s already holds processes %v", b.group(name), pids)
	}
	res := &cgroup2.Resources{}
	if limits.MemoryBytes > 0 {
		res.Memory = &cgroup2.Memory{Max: &limits.MemoryBytes}
	}
	if limits.CPUs != "" {
		res.CPU = &cgroup2.CPU{Cpus: limits.CPUs}
	}
	res.Devices = limits.deviceRules()
	m, err := cgroup2.NewManager(b.mount, b.group(name), res)
	if err != nil {
		// NewManager removes the directory it made when a controller
		// or a limit cannot be set.
		return nil, fmt.Errorf("create cgroup %s: %w", b.group(name), err)
	}
	return &v2Cgroup{group: b.group(name), dir: dir, m: m, intoCgroup: b.intoCgroup}, nil
}

func (b *v2Backend) load(name string) (cgroupHandle, error) {
	dir := filepath.Join(b.mount, b.root, name)
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("load cgroup %s: %w", b.group(name), err)
	}
	m, err := cgroup2.Load(b.group(name), cgroup2.WithMountpoint(b.mount))
	if err != nil {
		return nil, fmt.Errorf("load cgroup %s: %w", b.group(name), err)
	}
	return &v2Cgroup{group: b.group(name), dir: dir, m: m, intoCgroup: b.intoCgroup}, nil
}

func (b *v2Backend) children() ([]string, error) {
	return childDirs(filepath.Join(b.mount, b.root))
}

func (b *v2Backend) removeRoot() error {
	return removeTree(b.mount, filepath.Join(b.mount, b.root))
}

type v2Cgroup struct {
	group string // path below the mount, with a leading slash
	dir   string
	m     *cgroup2.Manager
	// intoCgroup says the kernel supports clone3 with CLONE_INTO_CGROUP.
	intoCgroup bool
}

func (c *v2Cgroup) String() string { return "cgroup " + c.group }

func (c *v2Cgroup) path() string { return c.group }

// start starts each cmd directly inside the cgroup: clone3(2) with
// CLONE_INTO_CGROUP (SysProcAttr.UseCgroupFD) creates the child as a member,
// so not even its first instruction runs elsewhere. Kernels before 5.7 lack
// that flag, and a failed exec.Cmd cannot be started again, so on them the
// child is moved in right after Start: a fork in the few microseconds
// between would escape the cgroup, though not the process group.
func (c *v2Cgroup) start(cmds []*exec.Cmd, affinity [][]int) []error {
	errs := make([]error, len(cmds))
	if !c.intoCgroup {
		for i, cmd := range cmds {
			if errs[i] = startOn(affinity[i], cmd); errs[i] != nil {
				continue
			}
			if err := c.m.AddProc(uint64(cmd.Process.Pid)); err != nil {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				errs[i] = fmt.Errorf("move process %d into %s: %w", cmd.Process.Pid, c, err)
			}
		}
		return errs
	}
	fd, err := unix.Open(c.dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		for i := range errs {
			errs[i] = fmt.Errorf("open %s: %w", c, err)
		}
		return errs
	}
	defer unix.Close(fd)
	for i, cmd := range cmds {
		attr := cmd.SysProcAttr
		attr.UseCgroupFD, attr.CgroupFD = true, fd
		errs[i] = startOn(affinity[i], cmd)
		// The descriptor is closed on return: do not leave it in the
		// caller's SysProcAttr.
		attr.UseCgroupFD, attr.CgroupFD = false, 0
	}
	return errs
}

// kernelAtLeast reports whether the running kernel's release is at least
// major.minor; an unreadable release counts as old.
func kernelAtLeast(major, minor int) bool {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return false
	}
	gotMajor, gotMinor, ok := parseKernelRelease(unix.ByteSliceToString(u.Release[:]))
	return ok && (gotMajor > major || gotMajor == major && gotMinor >= minor)
}

// parseKernelRelease reads the leading "major.minor" of a kernel release
// such as "6.8.0-45-generic".
func parseKernelRelease(rel string) (major, minor int, ok bool) {
	majS, rest, found := strings.Cut(rel, ".")
	if !found {
		return 0, 0, false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	major, err1 := strconv.Atoi(majS)
	minor, err2 := strconv.Atoi(rest[:end])
	if err1 != nil || err2 != nil || majS == "" || majS[0] < '0' || majS[0] > '9' {
		return 0, 0, false
	}
	return major, minor, true
}

func (c *v2Cgroup) procs() ([]int, error) {
	ps, err := c.m.Procs(true)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("list %s: %w", c, err)
	}
	pids := make([]int, 0, len(ps))
	for _, p := range ps {
		pids = append(pids, int(p))
	}
	slices.Sort(pids)
	return slices.Compact(pids), nil
}

// kill writes cgroup.kill (Linux 5.14 and later), which kills every process
// of the subtree and, unlike a signal loop, also the children they fork
// meanwhile. Older kernels get the freezer: stop the tree, kill every
// process, thaw.
func (c *v2Cgroup) kill() error {
	err := os.WriteFile(filepath.Join(c.dir, "cgroup.kill"), []byte("1"), 0)
	if err == nil || errors.Is(err, os.ErrNotExist) && !exists(c.dir) {
		return nil
	}
	return c.killFrozen()
}

// killFrozen kills every process of the cgroup while it is frozen, for
// kernels without cgroup.kill.
func (c *v2Cgroup) killFrozen() error {
	frozen := c.freeze()
	pids, err := c.procs()
	if err == nil {
		err = signalAll(pids, syscall.SIGKILL)
	}
	if frozen {
		// On v2 a fatal signal gets through the freezer, but thawing
		// keeps the cgroup usable should the kill have missed one.
		if terr := os.WriteFile(filepath.Join(c.dir, "cgroup.freeze"), []byte("0"), 0); terr != nil && exists(c.dir) {
			err = errors.Join(err, fmt.Errorf("thaw %s: %w", c, terr))
		}
	}
	return err
}

// freeze writes cgroup.freeze and waits, for a bounded time, until
// cgroup.events says "frozen 1"; it reports whether a thaw is needed.
func (c *v2Cgroup) freeze() bool {
	if err := os.WriteFile(filepath.Join(c.dir, "cgroup.freeze"), []byte("1"), 0); err != nil {
		return false
	}
	deadline := time.Now().Add(v2FreezeTimeout)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(filepath.Join(c.dir, "cgroup.events"))
		if err != nil || eventValue(b, "frozen") == "1" {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// eventValue returns the value of key in a cgroup.events file.
func eventValue(events []byte, key string) string {
	s := bufio.NewScanner(bytes.NewReader(events))
	for s.Scan() {
		k, v, ok := bytes.Cut(s.Bytes(), []byte(" "))
		if ok && string(k) == key {
			return string(v)
		}
	}
	return ""
}

func (c *v2Cgroup) remove() error {
	if !exists(c.dir) {
		return nil
	}
	removeChildren(c.dir)
	if err := c.m.Delete(); err != nil {
		return fmt.Errorf("remove %s: %w", c, err)
	}
	return nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// cpu reads cpu.stat, whose times are in microseconds.
func (c *v2Cgroup) cpu() (user, system time.Duration, err error) {
	data, err := os.ReadFile(filepath.Join(c.dir, "cpu.stat"))
	if err != nil {
		return 0, 0, fmt.Errorf("read CPU times of %s: %w", c, err)
	}
	return time.Duration(statValue(data, "user_usec")) * time.Microsecond,
		time.Duration(statValue(data, "system_usec")) * time.Microsecond, nil
}
