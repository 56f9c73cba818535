package squeue

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clitest"
)

// reference is one cli/NAME capture of real squeue 25.11.7.
type reference struct {
	args           []string
	stdout, stderr string
	rc             int
}

func readReference(t *testing.T, name string) reference {
	t.Helper()
	words := shellWords(clitest.ReadReference(t, filepath.Join("cli", name+".cmd")))
	if len(words) == 0 || words[0] != "squeue" {
		t.Fatalf("%s.cmd is not a squeue command: %q", name, words)
	}
	rc, err := strconv.Atoi(strings.TrimSpace(clitest.ReadReference(t, filepath.Join("cli", name+".rc"))))
	if err != nil {
		t.Fatalf("%s.rc: %v", name, err)
	}
	ref := reference{args: words[1:], rc: rc}
	dir := filepath.Join(clitest.ReferenceDir(t), "cli")
	if b, err := os.ReadFile(filepath.Join(dir, name+".out")); err == nil {
		ref.stdout = string(b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, name+".err")); err == nil {
		ref.stderr = string(b)
	}
	return ref
}

// TestGoldenCaptures runs every squeue capture that the REST captures can
// reproduce and compares the output byte for byte.
func TestGoldenCaptures(t *testing.T) {
	tests := map[string]struct {
		ctl func(testing.TB) *fakeController
		now time.Time
		// fix undoes an artefact of the captures' normalisation in the
		// expected output (see the cases).
		fix func(string) string
	}{
		"squeue_default":                {ctl: jobsController, now: captureNow},
		"squeue_l":                      {ctl: jobsController, now: captureNow},
		"squeue_j_running_gpu":          {ctl: jobsController, now: captureNow},
		"squeue_r_array":                {ctl: jobsController, now: captureNow},
		"squeue_o_many":                 {ctl: jobsController, now: captureNow},
		"squeue_start":                  {ctl: jobsController, now: captureNow},
		"err_squeue_unknown_job":        {ctl: jobsController, now: captureNow},
		"squeue_array_partly_running":   {ctl: partlyController, now: partlyNow},
		"squeue_r_array_partly_running": {ctl: partlyController, now: partlyNow},
		"squeue_j_array_task":           {ctl: partlyController, now: partlyNow},
		// The capture's working directory was 12 bytes long and padded to
		// 20; normalising it to /home/alice/project (19 bytes) kept the
		// 8 blanks, so the real column is 7 bytes wider than Slurm's.
		"squeue_O_fields": {ctl: jobsController, now: captureNow, fix: func(s string) string {
			return strings.ReplaceAll(s, "/home/alice/project        ", "/home/alice/project ")
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ref := readReference(t, name)
			h := clitest.New(t, tc.ctl(t), tc.now)
			got := h.Run(Run, "squeue", "", ref.args...)
			want := clitest.Run{Code: ref.rc, Stdout: ref.stdout, Stderr: ref.stderr}
			if tc.fix != nil {
				want.Stdout = tc.fix(want.Stdout)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("squeue %s (-want +got):\n%s", strings.Join(ref.args, " "), diff)
			}
		})
	}
}

// TestGoldenAllStates compares squeue -t all with its capture on the jobs
// both know: the capture was taken while jobs 74-121 still existed (purged
// by MinJobAge before jobs.json was taken) and before 138-147 were
// submitted. The order of the common jobs must match.
func TestGoldenAllStates(t *testing.T) {
	ref := readReference(t, "squeue_t_all")
	h := clitest.New(t, jobsController(t), captureNow)
	got := h.Run(Run, "squeue", "", ref.args...)
	if got.Code != ref.rc || got.Stderr != ref.stderr {
		t.Fatalf("squeue -t all: code %d, stderr %q", got.Code, got.Stderr)
	}
	idOf := regexp.MustCompile(`^\s*(\d+)`)
	ids := func(out string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(out, "\n")[1:] {
			if s := idOf.FindStringSubmatch(l); s != nil {
				m[s[1]] = true
			}
		}
		return m
	}
	inWant, inGot := ids(ref.stdout), ids(got.Stdout)
	keep := func(out string, other map[string]bool) []string {
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		kept := lines[:1]
		for _, l := range lines[1:] {
			if s := idOf.FindStringSubmatch(l); s != nil && other[s[1]] {
				kept = append(kept, l)
			}
		}
		return kept
	}
	want, have := keep(ref.stdout, inGot), keep(got.Stdout, inWant)
	if len(want) < 15 {
		t.Fatalf("only %d common lines; the fixture changed?", len(want))
	}
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("squeue -t all, common jobs (-want +got):\n%s", diff)
	}
}

// TestGoldenBadLongField: an unknown -O field is reported and prints
// nothing, leaving one empty line per job and for the header. The capture
// was taken with more jobs in the queue (8 lines) than jobs.json holds, so
// only the shape is compared.
func TestGoldenBadLongField(t *testing.T) {
	ref := readReference(t, "err_squeue_bad_O_field")
	h := clitest.New(t, jobsController(t), captureNow)
	got := h.Run(Run, "squeue", "", ref.args...)
	if got.Code != ref.rc || got.Stderr != ref.stderr {
		t.Errorf("code %d stderr %q; want %d %q", got.Code, got.Stderr, ref.rc, ref.stderr)
	}
	if strings.Trim(got.Stdout, "\n") != "" || strings.Trim(ref.stdout, "\n") != "" {
		t.Errorf("stdout has more than empty lines: %q", got.Stdout)
	}
	if n := strings.Count(got.Stdout, "\n"); n != 5 {
		t.Errorf("%d lines, want 5 (header and 4 jobs)", n)
	}
}

// TestGoldenVersion: Drover reports the release it follows.
func TestGoldenVersion(t *testing.T) {
	h := clitest.New(t, jobsController(t), captureNow)
	for _, arg := range []string{"-V", "--version", "--vers"} {
		got := h.Run(Run, "squeue", "", arg)
		want := clitest.Run{Stdout: "slurm " + clienv.SlurmVersion + "\n"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("squeue %s (-want +got):\n%s", arg, diff)
		}
	}
}

// TestGoldenJSON checks squeue --json against its capture structurally:
// the same jobs in the same order, job_state as a list, and the top-level
// keys and meta of a CLI dump.
func TestGoldenJSON(t *testing.T) {
	ref := readReference(t, "squeue_json")
	h := clitest.New(t, jobsController(t), captureNow)
	got := h.Run(Run, "squeue", "", ref.args...)
	if got.Code != 0 || got.Stderr != "" {
		t.Fatalf("code %d stderr %q", got.Code, got.Stderr)
	}
	type job struct {
		JobID    int      `json:"job_id"`
		JobState []string `json:"job_state"`
		Name     string   `json:"name"`
	}
	type doc struct {
		Jobs         []job          `json:"jobs"`
		LastBackfill map[string]any `json:"last_backfill"`
		LastUpdate   map[string]any `json:"last_update"`
		Meta         struct {
			Command []string       `json:"command"`
			Plugin  map[string]any `json:"plugin"`
		} `json:"meta"`
		Errors   []any `json:"errors"`
		Warnings []any `json:"warnings"`
	}
	var want, have doc
	if err := json.Unmarshal([]byte(ref.stdout), &want); err != nil {
		t.Fatalf("capture: %v", err)
	}
	if err := json.Unmarshal([]byte(got.Stdout), &have); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got.Stdout)
	}
	// The timestamps come from the server: jobs.json was taken later than
	// the CLI capture.
	want.LastBackfill, want.LastUpdate = nil, nil
	if have.LastBackfill["set"] != true || have.LastUpdate["set"] != true {
		t.Errorf("last_backfill/last_update not copied: %v %v", have.LastBackfill, have.LastUpdate)
	}
	have.LastBackfill, have.LastUpdate = nil, nil
	if diff := cmp.Diff(want, have); diff != "" {
		t.Errorf("squeue --json (-want +got):\n%s", diff)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(got.Stdout), &raw); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(raw))
	if diff := cmp.Diff([]string{"errors", "jobs", "last_backfill", "last_update", "meta", "warnings"}, keys); diff != "" {
		t.Errorf("top-level keys (-want +got):\n%s", diff)
	}
}
