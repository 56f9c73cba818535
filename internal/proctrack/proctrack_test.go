//go:build linux

package proctrack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// The test binary doubles as the job: PROCTRACK_HELPER selects a role.
const (
	helperEnv  = "PROCTRACK_HELPER"
	pidFileEnv = "PROCTRACK_PIDFILE"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		os.Exit(m.Run())
	case "sleep":
		time.Sleep(time.Hour)
	case "setsid-orphan", "setsid-tree":
		// Fork a grandchild that leaves the process group and session
		// with setsid(2), report its pid, then either exit at once
		// (the grandchild is reparented to init and only a cgroup
		// still knows it belongs to the job) or stay as its parent.
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=sleep")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		writePidFile(os.Getenv(pidFileEnv), cmd.Process.Pid)
		if os.Getenv(helperEnv) == "setsid-orphan" {
			os.Exit(0)
		}
		time.Sleep(time.Hour)
	case "count-usr1":
		// Count every SIGUSR1 the kernel delivers, appending a line per
		// signal to the pid file's path + ".count".
		ch := make(chan os.Signal, 64)
		signal.Notify(ch, syscall.SIGUSR1)
		writePidFile(os.Getenv(pidFileEnv), os.Getpid())
		f, err := os.OpenFile(os.Getenv(pidFileEnv)+".count", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			os.Exit(2)
		}
		for range ch {
			f.WriteString("USR1\n")
		}
	default:
		fmt.Fprintln(os.Stderr, "unknown helper", os.Getenv(helperEnv))
		os.Exit(2)
	}
}

func writePidFile(path string, pid int) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)), 0o644); err != nil {
		os.Exit(2)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Exit(2)
	}
}

func helperCmd(t *testing.T, role string) (*exec.Cmd, string) {
	t.Helper()
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+role, pidFileEnv+"="+pidFile)
	return cmd, pidFile
}

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func readPid(t *testing.T, pidFile string) int {
	t.Helper()
	var pid int
	waitFor(t, "grandchild pid file", func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// gone reports whether pid no longer runs: kill(pid, 0) fails with ESRCH,
// or it is a zombie (this sandbox's init does not always reap orphans).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	st, err := parseProcStat(b)
	return err == nil && st.dead()
}

var rootSeq atomic.Int64

// testRoot returns a cgroup root unique to this test process and call.
func testRoot() string {
	return fmt.Sprintf("drover-test/%d-%d", os.Getpid(), rootSeq.Add(1))
}

// modes are the tracking modes this machine can exercise. cgroup v2 is
// tested against the v2 hierarchy of a hybrid host when there is one: it
// has no memory or cpuset controller, but tracking needs none.
func modes(t *testing.T) []Options {
	t.Helper()
	opts := []Options{{DisableCgroups: true}}
	if os.Geteuid() != 0 {
		t.Log("not root: cgroup modes are skipped")
		return opts
	}
	if tr, err := New(Options{Root: testRoot()}); err == nil && tr.Mode() != ModePGID {
		opts = append(opts, Options{})
		_ = tr.Cleanup()
	} else if err == nil {
		t.Logf("cgroups unavailable: %v", tr.FallbackReason())
	}
	if st, err := os.Stat("/sys/fs/cgroup/unified/cgroup.procs"); err == nil && st.Mode().IsRegular() {
		opts = append(opts, Options{forceMode: ModeCgroupV2, mountpoint: "/sys/fs/cgroup/unified"})
	}
	return opts
}

func newTracker(t *testing.T, opts Options) *Tracker {
	t.Helper()
	if opts.Root == "" {
		opts.Root = testRoot()
	}
	tr, err := New(opts)
	if err != nil {
		t.Fatalf("New(%+v): %v", opts, err)
	}
	if !opts.DisableCgroups && tr.Mode() == ModePGID {
		t.Skipf("cgroups not usable here: %v", tr.FallbackReason())
	}
	t.Cleanup(func() {
		if err := tr.Cleanup(); err != nil {
			t.Errorf("Cleanup: %v", err)
		}
	})
	return tr
}

// requireCgroup returns a tracker in a real cgroup mode of this machine, or
// skips the test.
func requireCgroup(t *testing.T) *Tracker {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	return newTracker(t, Options{})
}

func startGroup(t *testing.T, tr *Tracker, cmd *exec.Cmd, name string, limits Limits) *Group {
	t.Helper()
	g, err := tr.Start(cmd, name, limits)
	if err != nil {
		t.Fatalf("Start(%s): %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := g.Destroy(ctx); err != nil {
			t.Errorf("Destroy(%s): %v", name, err)
		}
		_, _ = g.Wait()
	})
	return g
}

func modeName(o Options) string {
	switch {
	case o.DisableCgroups:
		return ModePGID
	case o.forceMode != "":
		return o.forceMode
	default:
		return "host"
	}
}

func TestKillReachesSetsidGrandchild(t *testing.T) {
	for _, opts := range modes(t) {
		t.Run(modeName(opts), func(t *testing.T) {
			tr := newTracker(t, opts)
			// Without a cgroup only a grandchild whose parent lives
			// can be found; with one, even an orphan is caught.
			role := "setsid-orphan"
			if tr.Mode() == ModePGID {
				role = "setsid-tree"
			}
			cmd, pidFile := helperCmd(t, role)
			g := startGroup(t, tr, cmd, "job_1", Limits{})
			gc := readPid(t, pidFile)

			pgid, err := syscall.Getpgid(gc)
			if err != nil {
				t.Fatalf("getpgid(%d): %v", gc, err)
			}
			if pgid == g.Pid() {
				t.Fatalf("grandchild %d is still in process group %d: setsid did not happen", gc, pgid)
			}
			pids, err := g.Pids()
			if err != nil {
				t.Fatal(err)
			}
			if !contains(pids, gc) {
				t.Fatalf("Pids() = %v, want it to contain the setsid grandchild %d", pids, gc)
			}
			if err := g.Kill(); err != nil {
				t.Fatalf("Kill: %v", err)
			}
			waitFor(t, fmt.Sprintf("grandchild %d to die", gc), func() bool { return gone(gc) })
			if _, err := g.Wait(); err == nil {
				if role == "setsid-tree" {
					t.Errorf("Wait: leader exited cleanly, want it killed")
				}
			}
		})
	}
}

func TestSignalReachesShellTrap(t *testing.T) {
	for _, opts := range modes(t) {
		t.Run(modeName(opts), func(t *testing.T) {
			tr := newTracker(t, opts)
			dir := t.TempDir()
			ready, got := filepath.Join(dir, "ready"), filepath.Join(dir, "got")
			script := fmt.Sprintf(`trap 'echo TERM > %s; exit 7' TERM; touch %s; while :; do sleep 0.05; done`, got, ready)
			g := startGroup(t, tr, exec.Command("/bin/sh", "-c", script), "job_trap", Limits{})
			waitFor(t, "trap to be installed", func() bool { _, err := os.Stat(ready); return err == nil })

			if err := g.Signal(syscall.SIGTERM); err != nil {
				t.Fatalf("Signal(SIGTERM): %v", err)
			}
			st, err := g.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || st.ExitCode() != 7 {
				t.Fatalf("Wait = %v, %v; want exit status 7 from the trap", st, err)
			}
			b, err := os.ReadFile(got)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("TERM\n", string(b)); diff != "" {
				t.Errorf("trap output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSignalOnce checks that a signal reaches each process once: a
// handler must not run twice because a process is both in the cgroup and
// in the process group. The helper counts deliveries as the Go runtime
// sees them.
func TestSignalOnce(t *testing.T) {
	for _, opts := range modes(t) {
		t.Run(modeName(opts), func(t *testing.T) {
			tr := newTracker(t, opts)
			cmd, pidFile := helperCmd(t, "count-usr1")
			g := startGroup(t, tr, cmd, "job_once", Limits{})
			readPid(t, pidFile)
			count := func() int { b, _ := os.ReadFile(pidFile + ".count"); return strings.Count(string(b), "USR1") }
			for i := 1; i <= 5; i++ {
				if err := g.Signal(syscall.SIGUSR1); err != nil {
					t.Fatalf("Signal(SIGUSR1): %v", err)
				}
				waitFor(t, "the signal", func() bool { return count() >= i })
				time.Sleep(50 * time.Millisecond)
				if n := count(); n != i {
					t.Fatalf("after %d signals the process saw %d", i, n)
				}
			}
			_ = g.Kill()
			_, _ = g.Wait()
		})
	}
}

func TestDestroyRemovesCgroup(t *testing.T) {
	for _, opts := range modes(t) {
		if opts.DisableCgroups {
			continue
		}
		t.Run(modeName(opts), func(t *testing.T) {
			tr := newTracker(t, opts)
			cmd, pidFile := helperCmd(t, "setsid-orphan")
			g, err := tr.Start(cmd, "job_9", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			gc := readPid(t, pidFile)
			dirs := cgroupDirs(t, tr, "job_9")
			for _, d := range dirs {
				if _, err := os.Stat(d); err != nil {
					t.Fatalf("job cgroup missing after Start: %v", err)
				}
			}
			if _, err := g.Wait(); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := g.Destroy(ctx); err != nil {
				t.Fatalf("Destroy: %v", err)
			}
			if !gone(gc) {
				t.Errorf("grandchild %d survived Destroy", gc)
			}
			for _, d := range dirs {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("stat %s after Destroy: %v, want not exist", d, err)
				}
			}
			if err := g.Destroy(ctx); err != nil {
				t.Errorf("second Destroy: %v", err)
			}
			if pids, err := g.Pids(); err != nil || len(pids) != 0 {
				t.Errorf("Pids after Destroy = %v, %v; want none", pids, err)
			}
		})
	}
}

// cgroupDirs returns the directories of a job cgroup started without
// limits: on v1 only the tracking hierarchy has one.
func cgroupDirs(t *testing.T, tr *Tracker, name string) []string {
	t.Helper()
	switch b := tr.backend.(type) {
	case *v1Backend:
		return []string{b.dir(b.track, name)}
	case *v2Backend:
		return []string{filepath.Join(b.mount, b.root, name)}
	}
	t.Fatalf("no cgroup backend in mode %s", tr.Mode())
	return nil
}

// TestV2KillWithoutCgroupKill exercises the freezer path that kernels
// before 5.14, which lack cgroup.kill, take.
func TestV2KillWithoutCgroupKill(t *testing.T) {
	for _, opts := range modes(t) {
		if opts.forceMode != ModeCgroupV2 {
			continue
		}
		tr := newTracker(t, opts)
		cmd, pidFile := helperCmd(t, "setsid-tree")
		g := startGroup(t, tr, cmd, "job_freeze", Limits{})
		gc := readPid(t, pidFile)
		if err := g.cg.(*v2Cgroup).killFrozen(); err != nil {
			t.Fatalf("killFrozen: %v", err)
		}
		waitFor(t, "the tree to die", func() bool { return gone(gc) && gone(g.Pid()) })
		events, err := os.ReadFile(filepath.Join(g.cg.(*v2Cgroup).dir, "cgroup.events"))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff("0", eventValue(events, "frozen")); diff != "" {
			t.Errorf("frozen after killFrozen (-want +got):\n%s", diff)
		}
		return
	}
	t.Skip("no cgroup v2 hierarchy to test against")
}

// TestV1ConcurrentStarts starts jobs from many goroutines at once: each
// child must land in its own cgroup, never in another job's.
func TestV1ConcurrentStarts(t *testing.T) {
	tr := requireCgroup(t)
	if tr.Mode() != ModeCgroupV1 {
		t.Skipf("host tracks with %s, not cgroup v1", tr.Mode())
	}
	const n = 16
	groups := make([]*Group, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			g, err := tr.Start(exec.Command("sleep", "300"), fmt.Sprintf("job_c%d", i), Limits{})
			groups[i] = g
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	for _, g := range groups {
		if g == nil {
			continue
		}
		pids, err := g.Pids()
		if err != nil {
			t.Error(err)
		} else if diff := cmp.Diff([]int{g.Pid()}, pids); diff != "" {
			t.Errorf("%s Pids (-want +got):\n%s", g.Name(), diff)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := g.Destroy(ctx); err != nil {
			t.Error(err)
		}
		cancel()
		_, _ = g.Wait()
	}
}

func TestProcessGroupFallback(t *testing.T) {
	tr := newTracker(t, Options{DisableCgroups: true})
	if diff := cmp.Diff(ModePGID, tr.Mode()); diff != "" {
		t.Fatalf("Mode (-want +got):\n%s", diff)
	}
	if tr.FallbackReason() != nil {
		t.Errorf("FallbackReason = %v, want nil when cgroups are disabled on purpose", tr.FallbackReason())
	}
	// A plain fork stays in the group; the background sleep is one.
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "bg")
	script := fmt.Sprintf(`sleep 300 & echo $! > %s.tmp; mv %s.tmp %s; wait`, pidFile, pidFile, pidFile)
	g := startGroup(t, tr, exec.Command("/bin/sh", "-c", script), "job_pg", Limits{MemoryBytes: 1 << 30})
	bg := readPid(t, pidFile)
	// The mv that wrote the file may not have exited yet.
	var pids []int
	waitFor(t, "the group to hold the shell and the sleep", func() bool {
		var err error
		if pids, err = g.Pids(); err != nil {
			t.Fatal(err)
		}
		return len(pids) == 2
	})
	if diff := cmp.Diff([]int{g.Pid(), bg}, pids); diff != "" {
		t.Errorf("Pids (-want +got):\n%s", diff)
	}
	if err := g.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	waitFor(t, "background sleep to die", func() bool { return gone(bg) })
	st, err := g.Wait()
	if err == nil || st.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("Wait = %v, %v; want killed by SIGKILL", st, err)
	}
	if names, err := tr.Orphans(); err != nil || len(names) != 0 {
		t.Errorf("Orphans = %v, %v; want none in pgid mode", names, err)
	}
	if _, err := tr.Adopt("job_pg"); err == nil {
		t.Error("Adopt succeeded in pgid mode")
	}
	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Errorf("Signal after the job ended: %v, want nil", err)
	}
}

func TestLimitsV1(t *testing.T) {
	tr := requireCgroup(t)
	if tr.Mode() != ModeCgroupV1 {
		t.Skipf("host tracks with %s, not cgroup v1", tr.Mode())
	}
	b := tr.backend.(*v1Backend)
	const limit = 64 << 20
	g := startGroup(t, tr, exec.Command("sleep", "300"), "job_mem", Limits{MemoryBytes: limit, CPUs: "0"})
	got := map[string]string{}
	want := map[string]string{
		"memory/memory.limit_in_bytes": strconv.Itoa(limit),
		"cpuset/cpuset.cpus":           "0",
	}
	for file := range want {
		sub, name, _ := strings.Cut(file, "/")
		data, err := os.ReadFile(filepath.Join(v1Mountpoint, sub, b.root, "job_mem", name))
		if err != nil {
			t.Skipf("%s hierarchy not usable: %v", sub, err)
		}
		got[file] = strings.TrimSpace(string(data))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cgroup files (-want +got):\n%s", diff)
	}
	// The job inherits the cpuset: its allowed CPUs are just CPU 0.
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.Pid()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(status), "Cpus_allowed_list:\t0\n") {
		t.Errorf("job status has no Cpus_allowed_list of 0:\n%s", status)
	}
}

// TestV1StartLeavesDaemonThreadsHome checks the thread-migration start: the
// child is in the job cgroup from its first instruction, and no thread of
// this process is left there.
func TestV1StartLeavesDaemonThreadsHome(t *testing.T) {
	tr := requireCgroup(t)
	if tr.Mode() != ModeCgroupV1 {
		t.Skipf("host tracks with %s, not cgroup v1", tr.Mode())
	}
	for i := range 20 {
		name := fmt.Sprintf("job_t%d", i)
		g := startGroup(t, tr, exec.Command("sleep", "300"), name, Limits{})
		pids, err := g.Pids()
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]int{g.Pid()}, pids); diff != "" {
			t.Fatalf("Pids (-want +got):\n%s", diff)
		}
	}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		b, err := os.ReadFile(filepath.Join("/proc/self/task", task.Name(), "cgroup"))
		if err != nil {
			continue
		}
		if strings.Contains(string(b), tr.Root()) {
			t.Errorf("thread %s is still in a job cgroup:\n%s", task.Name(), b)
		}
	}
}

func TestOrphansAdoptAndCleanup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	for _, opts := range modes(t) {
		if opts.DisableCgroups {
			continue
		}
		t.Run(modeName(opts), func(t *testing.T) {
			opts.Root = testRoot()
			old := newTracker(t, opts)
			g := startGroup(t, old, exec.Command("sleep", "300"), "job_42", Limits{})

			// A restarted daemon finds the job's cgroup and kills it.
			tr := newTracker(t, opts)
			names, err := tr.Orphans()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"job_42"}, names); diff != "" {
				t.Fatalf("Orphans (-want +got):\n%s", diff)
			}
			if err := tr.Cleanup(); err == nil || !strings.Contains(err.Error(), "job_42") {
				t.Errorf("Cleanup with a live job = %v, want an error naming job_42", err)
			}
			adopted, err := tr.Adopt("job_42")
			if err != nil {
				t.Fatal(err)
			}
			pids, err := adopted.Pids()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int{g.Pid()}, pids); diff != "" {
				t.Errorf("adopted Pids (-want +got):\n%s", diff)
			}
			if _, err := adopted.Wait(); !errors.Is(err, ErrNotChild) {
				t.Errorf("adopted Wait = %v, want ErrNotChild", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := adopted.Destroy(ctx); err != nil {
				t.Fatalf("Destroy: %v", err)
			}
			if _, err := g.Wait(); err == nil {
				t.Error("leader exited cleanly, want it killed")
			}
			if err := tr.Cleanup(); err != nil {
				t.Fatalf("Cleanup: %v", err)
			}
			top := cgroupDirs(t, tr, "")
			for _, d := range top {
				if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("root %s still exists after Cleanup: %v", d, err)
				}
			}
		})
	}
}

func TestStartFailureRemovesCgroup(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to create cgroups")
	}
	for _, opts := range modes(t) {
		if opts.DisableCgroups {
			continue
		}
		t.Run(modeName(opts), func(t *testing.T) {
			tr := newTracker(t, opts)
			tests := map[string]struct {
				cmd    *exec.Cmd
				limits Limits
				skip   bool
			}{
				"missing program": {cmd: exec.Command("/nonexistent/program")},
				"negative limit":  {cmd: exec.Command("true"), limits: Limits{MemoryBytes: -1}},
				// The v2 hierarchy of a hybrid host has no memory
				// controller: the limit cannot be honoured.
				"limit without controller": {
					cmd:    exec.Command("true"),
					limits: Limits{MemoryBytes: 64 << 20},
					skip:   opts.forceMode != ModeCgroupV2,
				},
			}
			for name, tc := range tests {
				if tc.skip {
					continue
				}
				if g, err := tr.Start(tc.cmd, "job_bad", tc.limits); err == nil {
					_, _ = g.Wait()
					t.Fatalf("%s: Start succeeded", name)
				}
				names, err := tr.Orphans()
				if err != nil || len(names) != 0 {
					t.Errorf("%s: Orphans after a failed Start = %v, %v; want none", name, names, err)
				}
			}
		})
	}
}

func TestNewFallsBackWhenCgroupsUnwritable(t *testing.T) {
	tr, err := New(Options{Root: "x", forceMode: ModeCgroupV2, mountpoint: "/proc/self"})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Mode() != ModePGID || tr.FallbackReason() == nil {
		t.Errorf("Mode, FallbackReason = %s, %v; want pgid and a reason", tr.Mode(), tr.FallbackReason())
	}
}

func TestValidation(t *testing.T) {
	tests := map[string]struct {
		root, name string
		wantRoot   string
		wantErr    bool
	}{
		"default root":       {root: "", name: "job_1", wantRoot: DefaultRoot},
		"nested root":        {root: "drover/n1", name: "job_1", wantRoot: "drover/n1"},
		"leading slash":      {root: "/drover/n1/", name: "job_1", wantRoot: "drover/n1"},
		"dot dot root":       {root: "drover/../etc", name: "job_1", wantErr: true},
		"double slash root":  {root: "drover//n1", name: "job_1", wantErr: true},
		"slash only root":    {root: "/", name: "job_1", wantErr: true},
		"name with slash":    {root: "d", name: "job/1", wantErr: true},
		"dot dot name":       {root: "d", name: "..", wantErr: true},
		"empty name":         {root: "d", name: "", wantErr: true},
		"name with nul byte": {root: "d", name: "a\x00", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			root, err := cleanRoot(tc.root)
			if err == nil {
				err = validName(tc.name)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil {
				if diff := cmp.Diff(tc.wantRoot, root); diff != "" {
					t.Errorf("root (-want +got):\n%s", diff)
				}
			}
		})
	}
	tr := newTracker(t, Options{DisableCgroups: true})
	if _, err := tr.Start(exec.Command("true"), "../x", Limits{}); err == nil {
		t.Error("Start accepted an invalid name")
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestGroupGone(t *testing.T) {
	if groupGone(syscall.Getpgrp()) {
		t.Fatal("our own process group reported gone")
	}
	cmd := exec.Command("sh", "-c", "exit 0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	// Unreaped, the leader is a zombie and still holds its group.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pgid))
		if err == nil && strings.Contains(string(data), ") Z ") {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if groupGone(pgid) {
		t.Fatal("group of an unreaped zombie reported gone")
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	if !groupGone(pgid) {
		t.Fatal("group of a reaped leader still reported present")
	}
}

// A process started with an Affinity runs on those CPUs from the start,
// and so does a child it forks at once; the daemon's own thread keeps its
// mask.
func TestStartAffinity(t *testing.T) {
	var mine unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mine); err != nil || mine.Count() < 2 {
		t.Skipf("needs two CPUs to choose from (affinity %v)", err)
	}
	cpu := -1
	for c := 1; c < 1024 && cpu < 0; c++ {
		if mine.IsSet(c) {
			cpu = c
		}
	}
	for _, opts := range modes(t) {
		t.Run(modeName(opts), func(t *testing.T) {
			tr := newTracker(t, opts)
			out := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command("/bin/sh", "-c", `grep Cpus_allowed_list /proc/self/status > "$1"; grep Cpus_allowed_list /proc/$$/status >> "$1"`, "sh", out)
			g := startGroup(t, tr, cmd, "job_affinity", Limits{Affinity: []int{cpu}})
			if _, err := g.Wait(); err != nil {
				t.Fatalf("wait: %v", err)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Repeat("Cpus_allowed_list:\t"+strconv.Itoa(cpu)+"\n", 2)
			if string(data) != want {
				t.Errorf("child and shell masks %q, want %q", data, want)
			}
			var now unix.CPUSet
			if err := unix.SchedGetaffinity(0, &now); err != nil || now != mine {
				t.Errorf("the test's own mask changed: %v", err)
			}
		})
	}
}

// TestGroupOfSeveral starts a step's worth of processes in one group, as a
// node starts a step's tasks: each leads its own process group, one of
// them with a setsid grandchild, and a bad command fails alone. A signal
// reaches every process once, each is waited for on its own, and Destroy
// ends what is left.
func TestGroupOfSeveral(t *testing.T) {
	for _, opts := range modes(t) {
		t.Run(modeName(opts), func(t *testing.T) {
			tr := newTracker(t, opts)
			g, err := tr.NewGroup("job_5_step_0", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			var cmds []*exec.Cmd
			var pidFiles []string
			for range 3 {
				cmd, pidFile := helperCmd(t, "count-usr1")
				cmds, pidFiles = append(cmds, cmd), append(pidFiles, pidFile)
			}
			tree, treePid := helperCmd(t, "setsid-tree")
			cmds = append(cmds, tree, exec.Command("/nonexistent/program"))
			errs := g.Start(cmds, [][]int{{0}})
			for i, err := range errs[:4] {
				if err != nil {
					t.Fatalf("Start: command %d: %v", i, err)
				}
			}
			if errs[4] == nil || !strings.Contains(errs[4].Error(), "job_5_step_0") {
				t.Fatalf("Start of a missing program = %v, want an error naming the group", errs[4])
			}
			pgids := map[int]bool{}
			for _, cmd := range cmds[:4] {
				pgid, err := syscall.Getpgid(cmd.Process.Pid)
				if err != nil || pgid != cmd.Process.Pid {
					t.Fatalf("process %d: process group %d, %v; want it to lead its own", cmd.Process.Pid, pgid, err)
				}
				pgids[pgid] = true
			}
			if g.Pid() != cmds[0].Process.Pid {
				t.Errorf("Pid() = %d, want the first process %d", g.Pid(), cmds[0].Process.Pid)
			}
			var first unix.CPUSet
			if err := unix.SchedGetaffinity(cmds[0].Process.Pid, &first); err != nil || first.Count() != 1 || !first.IsSet(0) {
				t.Errorf("first process runs on %d CPUs (%v), want CPU 0 alone", first.Count(), err)
			}
			for _, f := range pidFiles {
				readPid(t, f)
			}
			gc := readPid(t, treePid)
			pids, err := g.Pids()
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []int{cmds[0].Process.Pid, cmds[1].Process.Pid, cmds[2].Process.Pid, cmds[3].Process.Pid, gc} {
				if !contains(pids, want) {
					t.Fatalf("Pids() = %v, want it to contain %d", pids, want)
				}
			}
			if err := g.Signal(syscall.SIGUSR1); err != nil {
				t.Fatalf("Signal: %v", err)
			}
			for _, f := range pidFiles {
				count := func() int { b, _ := os.ReadFile(f + ".count"); return strings.Count(string(b), "USR1") }
				waitFor(t, "the signal", func() bool { return count() >= 1 })
				time.Sleep(20 * time.Millisecond)
				if n := count(); n != 1 {
					t.Fatalf("%s: one signal was delivered %d times", f, n)
				}
			}
			// The first process ends on its own; the group lives on.
			_ = cmds[0].Process.Kill()
			if st, err := g.WaitFor(cmds[0]); st == nil || st.Success() || err == nil {
				t.Fatalf("WaitFor(first) = %v, %v; want it killed", st, err)
			}
			if _, err := g.WaitFor(cmds[4]); !errors.Is(err, ErrNotChild) {
				t.Errorf("WaitFor(a command that never started) = %v, want ErrNotChild", err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := g.Destroy(ctx); err != nil {
				t.Fatalf("Destroy: %v", err)
			}
			for _, cmd := range cmds[1:4] {
				if _, err := g.WaitFor(cmd); err == nil {
					t.Errorf("process %d exited cleanly, want it killed by Destroy", cmd.Process.Pid)
				}
			}
			waitFor(t, "the setsid grandchild to die", func() bool { return gone(gc) })
			if errs := g.Start([]*exec.Cmd{exec.Command("true")}, nil); errs[0] == nil {
				t.Errorf("Start in a destroyed group succeeded")
			}
		})
	}
}

// TestDestroyEmptyGroup checks that a group whose processes all ended is
// destroyed without any left to kill, its cgroup removed.
func TestDestroyEmptyGroup(t *testing.T) {
	for _, opts := range modes(t) {
		t.Run(modeName(opts), func(t *testing.T) {
			tr := newTracker(t, opts)
			g, err := tr.NewGroup("job_6_step_1", Limits{})
			if err != nil {
				t.Fatal(err)
			}
			cmds := []*exec.Cmd{exec.Command("true"), exec.Command("true")}
			for i, err := range g.Start(cmds, nil) {
				if err != nil {
					t.Fatalf("Start %d: %v", i, err)
				}
			}
			for _, cmd := range cmds {
				if st, err := g.WaitFor(cmd); err != nil || !st.Success() {
					t.Fatalf("WaitFor = %v, %v", st, err)
				}
			}
			if err := g.Destroy(context.Background()); err != nil {
				t.Fatalf("Destroy: %v", err)
			}
			if tr.Mode() != ModePGID {
				if names, err := tr.Orphans(); err != nil || len(names) != 0 {
					t.Errorf("Orphans() after Destroy = %v, %v; want none", names, err)
				}
			}
		})
	}
}

// TestDenyDevices checks ConstrainDevices' enforcement with two fake GPU
// device nodes (major 195, no driver behind them): the allowed one opens
// as far as the missing driver (ENXIO), the denied one is refused by the
// devices controller (EPERM).
func TestDenyDevices(t *testing.T) {
	tr := requireCgroup(t)
	dir := t.TempDir()
	allowed, denied := filepath.Join(dir, "nvidia0"), filepath.Join(dir, "nvidia1")
	for i, p := range []string{allowed, denied} {
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(195, uint32(i)))); err != nil {
			t.Skipf("cannot make device nodes: %v", err)
		}
	}
	dev, err := DeviceOf(denied)
	if err != nil {
		t.Fatal(err)
	}
	if dev != (Device{Type: 'c', Major: 195, Minor: 1}) {
		t.Fatalf("DeviceOf = %+v", dev)
	}
	if _, err := DeviceOf(dir); err == nil {
		t.Error("DeviceOf(folder) succeeded")
	}
	out := filepath.Join(dir, "out")
	script := fmt.Sprintf("exec 2>>%s; cat %s; cat %s", out, allowed, denied)
	g := startGroup(t, tr, exec.Command("/bin/sh", "-c", script), "job_devices", Limits{DenyDevices: []Device{dev}})
	if _, err := g.Wait(); err != nil && !errors.Is(err, ErrNotChild) {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{allowed + ": No such device or address", denied + ": Operation not permitted"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// TestChildCgroups checks that a cgroup made inside a group's (a
// container runtime's) stays part of the group: its processes are
// listed and killed, and it is removed with the group's.
func TestChildCgroups(t *testing.T) {
	tr := requireCgroup(t)
	if tr.Mode() != ModeCgroupV1 {
		t.Skipf("host tracks with %s, not cgroup v1", tr.Mode())
	}
	b := tr.backend.(*v1Backend)
	g, err := tr.NewGroup("job_child", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if p := g.CgroupPath(); p != b.path("job_child") {
		t.Errorf("CgroupPath = %q", p)
	}
	cmd := exec.Command("sleep", "300")
	if errs := g.Start([]*exec.Cmd{cmd}, nil); errs[0] != nil {
		t.Fatal(errs[0])
	}
	child := filepath.Join(b.dir(b.track, "job_child"), "task_0")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(child, 0o755))
	must(os.WriteFile(filepath.Join(child, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0))
	pids, err := g.Pids()
	must(err)
	if !slices.Contains(pids, cmd.Process.Pid) {
		t.Errorf("Pids %v lack %d, in a child cgroup", pids, cmd.Process.Pid)
	}
	must(g.Kill())
	if _, err := g.WaitFor(cmd); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	must(g.Destroy(ctx))
	if _, err := os.Stat(child); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("child cgroup left: %v", err)
	}
}

// TestPidsNeverListTheTracker: while a group starts its commands, the
// forking thread of this process sits in the group's cgroup (v1), and v1
// lists a thread's process in cgroup.procs; Pids must still never name
// this process, or ending a step whose task exits at once would signal
// the node daemon itself.
func TestPidsNeverListTheTracker(t *testing.T) {
	for _, opts := range modes(t) {
		t.Run(modeName(opts), func(t *testing.T) {
			tr := newTracker(t, opts)
			for i := range 20 {
				g, err := tr.NewGroup("job_9_step_"+strconv.Itoa(i), Limits{})
				if err != nil {
					t.Fatal(err)
				}
				stop := make(chan struct{})
				seen := make(chan int, 1)
				go func() {
					for {
						select {
						case <-stop:
							close(seen)
							return
						default:
						}
						pids, _ := g.Pids()
						if slices.Contains(pids, os.Getpid()) {
							seen <- os.Getpid()
							<-stop
							close(seen)
							return
						}
					}
				}()
				errs := g.Start([]*exec.Cmd{exec.Command("true"), exec.Command("true")}, nil)
				close(stop)
				if pid, ok := <-seen; ok {
					t.Fatalf("Pids listed this process (%d) while the group started", pid)
				}
				for _, err := range errs {
					if err != nil {
						t.Fatal(err)
					}
				}
				g.Wait()
				if err := g.Destroy(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestCPUTimes: a cgroup counts the CPU its processes spent after they
// are gone; a process group cannot.
func TestCPUTimes(t *testing.T) {
	for _, opts := range modes(t) {
		t.Run(modeName(opts), func(t *testing.T) {
			tr := newTracker(t, opts)
			cmd := exec.Command("sh", "-c", `sh -c 't=$(($(date +%s)+1)); while [ "$(date +%s)" -le "$t" ]; do :; done'`)
			g := startGroup(t, tr, cmd, "job_cpu", Limits{AccountCPU: true})
			if _, err := g.Wait(); err != nil {
				t.Fatalf("Wait: %v", err)
			}
			user, sys, ok := g.CPUTimes()
			if tr.Mode() == ModePGID {
				if ok {
					t.Fatalf("CPUTimes without a cgroup = %v, %v, true", user, sys)
				}
				return
			}
			if !ok || user+sys < 500*time.Millisecond {
				t.Fatalf("CPUTimes = %v, %v, %v; want at least 0.5 s of a second-long loop", user, sys, ok)
			}
		})
	}
}
