package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func runDrover(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	r := runCmd(t, exec.Command(filepath.Join(binDir, "drover"), args...))
	return r.Stdout, r.Stderr, r.Code
}

// TestSim replays the small SWF trace with `drover sim`: FIFO, backfill
// and the site's logged schedule side by side, and an SVG chart; bad
// input gets a clear error and exit 1.
func TestSim(t *testing.T) {
	t.Parallel()
	trace, _ := filepath.Abs("../../internal/trace/testdata/small.swf")
	chart := filepath.Join(t.TempDir(), "waits.svg")
	out, stderr, code := runDrover(t, "sim", trace, "--chart", chart)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"trace    small.swf: 4 jobs (2 left out of the trace as unreplayable, 1 larger than the machine)\n",
		"machine  4 nodes x 1 CPU\n",
		"fifo  backfill  site log\n",
		"mean wait     99 s      42 s      42 s\n",
		"site log: the schedule the site logged, with what the simulation leaves out",
		"chart: " + chart + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if svg, err := os.ReadFile(chart); err != nil || !strings.HasPrefix(string(svg), "<svg") {
		t.Errorf("chart: %v %.40q", err, svg)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"sim", "/nonexistent.swf"}, "open /nonexistent.swf: no such file or directory"},
		{[]string{"sim", trace, "--policy", "sjf"}, `unknown policy "sjf" (fifo or backfill)`},
		{[]string{"sim", trace, "--scheduler-parameters", "bf_window=0"}, "--scheduler-parameters: Invalid SchedulerParameters bf_window: 0"},
		{[]string{"sim", trace, "--chart", "x.pdf"}, "the name must end in .svg"},
		{[]string{"sim", trace, "--scale", "0"}, "--scale: scale 0: at least 1"},
	} {
		_, stderr, code := runDrover(t, tc.args...)
		if code != 1 || !strings.Contains(stderr, tc.err) {
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, stderr, tc.err)
		}
	}
	// Twice the machine, jobs arriving twice as fast: the site's
	// schedule no longer applies and is not shown; the job larger than
	// the machine now fits.
	out, stderr, code = runDrover(t, "sim", trace, "--scale", "2")
	if code != 0 || !strings.Contains(out, "machine  8 nodes x 1 CPU\n") || !strings.Contains(out, "0 larger than the machine") ||
		strings.Contains(out, "site log") {
		t.Errorf("--scale 2: exit %d %s\n%s", code, stderr, out)
	}
	gpu := filepath.Join(t.TempDir(), "gpu.csv")
	os.WriteFile(gpu, []byte("job_id,submission_time,duration,num_gpu\na,0,10,8\n"), 0o644)
	if _, stderr, code := runDrover(t, "sim", gpu); code != 1 || !strings.Contains(stderr, "a GPU trace needs --nodes") {
		t.Errorf("GPU trace without --nodes: exit %d %q", code, stderr)
	}
	if out, _, code := runDrover(t, "sim", gpu, "--nodes", "2"); code != 0 || !strings.Contains(out, "machine  2 nodes x 8 GPUs") {
		t.Errorf("GPU trace: exit %d\n%s", code, out)
	}
}
