package sbatch

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// process is what sbatch reads from its own process rather than from the
// command environment: the values it forwards to the job (scheduling
// priority, umask, resource limits) and the clock it sleeps on while
// retrying or waiting. Tests replace it.
type process interface {
	// nice is the process's nice value (SLURM_PRIO_PROCESS).
	nice() (int, bool)
	// umask is the file creation mask (SLURM_UMASK).
	umask() (uint32, bool)
	// rlimit returns the soft limit named as Slurm names it ("NOFILE").
	rlimit(name string) (uint64, bool)
	// sleep waits for d or until ctx ends.
	sleep(ctx context.Context, d time.Duration) error
}

// hostProcess reads the real process.
type hostProcess struct{}

func (hostProcess) nice() (int, bool) {
	// The raw getpriority system call answers 20 - nice.
	p, err := unix.Getpriority(unix.PRIO_PROCESS, 0)
	if err != nil {
		return 0, false
	}
	return 20 - p, true
}

// umask reads the mask from /proc instead of calling umask(2), which can
// only be read by changing it and would race with other goroutines.
func (hostProcess) umask() (uint32, bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "Umask:"); ok {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32)
			return uint32(n), err == nil
		}
	}
	return 0, false
}

var rlimitResources = map[string]int{
	"CPU": unix.RLIMIT_CPU, "FSIZE": unix.RLIMIT_FSIZE, "DATA": unix.RLIMIT_DATA,
	"STACK": unix.RLIMIT_STACK, "CORE": unix.RLIMIT_CORE, "RSS": unix.RLIMIT_RSS,
	"NPROC": unix.RLIMIT_NPROC, "NOFILE": unix.RLIMIT_NOFILE, "MEMLOCK": unix.RLIMIT_MEMLOCK,
	"AS": unix.RLIMIT_AS,
}

func (hostProcess) rlimit(name string) (uint64, bool) {
	res, ok := rlimitResources[name]
	if !ok {
		return 0, false
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(res, &rl); err != nil {
		return 0, false
	}
	// The Go runtime raises its own open-files soft limit at start and
	// gives children the caller's value back: when it may have raised
	// it, ask a child.
	if res == unix.RLIMIT_NOFILE && nofileRaised(rl) {
		if n, ok := nofileProbe(); ok {
			return n, true
		}
	}
	return rl.Cur, true
}

// nofileProbe runs inheritedNofile once. startNofileProbe starts it as
// sbatch starts, so that the child shell runs while sbatch reads its
// options, script and configuration instead of after.
var nofileProbe = sync.OnceValues(inheritedNofile)

func startNofileProbe() {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && nofileRaised(rl) {
		go nofileProbe()
	}
}

// nofileRaised reports whether the runtime may have raised the limit. It
// raises a soft limit below the hard one less one to the hard one less
// one (go.dev/issue/46279; TestRuntimeRaisesNofile pins this), so any
// other value is still the caller's, and only that one is ambiguous: the
// caller may have set it.
func nofileRaised(rl unix.Rlimit) bool { return rl.Max > 0 && rl.Cur == rl.Max-1 }

// inheritedNofile reads the open-files soft limit sbatch was started
// with, through a child shell (children get the original limit back).
func inheritedNofile() (uint64, bool) {
	out, err := exec.Command("/bin/sh", "-c", "ulimit -S -n").Output()
	if err != nil {
		return 0, false
	}
	v := strings.TrimSpace(string(out))
	if v == "unlimited" {
		return unix.RLIM_INFINITY, true
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

func (hostProcess) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
