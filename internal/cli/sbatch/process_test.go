package sbatch

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRuntimeRaisesNofile pins what nofileRaised relies on, and checks
// that sbatch forwards the open-files limit it was started with, not the
// one the Go runtime gave itself: the test binary is run again under a
// shell that sets the soft limit first.
func TestRuntimeRaisesNofile(t *testing.T) {
	if os.Getenv("SBATCH_NOFILE_HELPER") == "1" {
		var rl unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
			fmt.Println("error", err)
			os.Exit(1)
		}
		n, ok := hostProcess{}.rlimit("NOFILE")
		fmt.Println(rl.Cur, rl.Max, n, ok)
		os.Exit(0)
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	if rl.Max < 200 || rl.Max == unix.RLIM_INFINITY {
		t.Skipf("hard open-files limit %d leaves no room for the test", rl.Max)
	}
	run := func(soft string) string {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-c", `ulimit -S -n "$1" && exec "$0" -test.run='^TestRuntimeRaisesNofile$'`, os.Args[0], soft)
		cmd.Env = append(os.Environ(), "SBATCH_NOFILE_HELPER=1")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("helper with soft limit %s: %v\n%s", soft, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	hard := rl.Max
	for _, tc := range []struct {
		soft uint64
		want string
	}{
		// Raised by the runtime to hard-1; the caller's 100 is forwarded.
		{100, fmt.Sprintf("%d %d 100 true", hard-1, hard)},
		// Left alone; nothing to ask.
		{hard, fmt.Sprintf("%d %d %d true", hard, hard, hard)},
		// Left alone at the one ambiguous value; the child confirms it.
		{hard - 1, fmt.Sprintf("%d %d %d true", hard-1, hard, hard-1)},
	} {
		if got := run(fmt.Sprint(tc.soft)); got != tc.want {
			t.Errorf("soft limit %d: got %q, want %q (runtime's limit, hard limit, forwarded)", tc.soft, got, tc.want)
		}
	}
}
