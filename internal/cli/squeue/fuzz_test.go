package squeue

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/readmodel"
)

// FuzzParseJobList checks -j parsing: accepted entries have positive ids,
// one per non-empty item.
func FuzzParseJobList(f *testing.F) {
	for _, s := range []string{"128,129", "131_1", "131_[1-3]", ",,5,", "-1", "0", "12abc", " 7_ 8", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		jobs, bad := parseJobList(in)
		if bad != "" {
			if jobs != nil {
				t.Fatalf("%q: jobs returned with an error", in)
			}
			return
		}
		if len(jobs) != len(splitList(in)) {
			t.Fatalf("%q: %d entries for %d items", in, len(jobs), len(splitList(in)))
		}
		for _, j := range jobs {
			if j.jobID == 0 {
				t.Fatalf("%q: job id 0 accepted", in)
			}
		}
	})
}

// FuzzParseOptions runs the whole command-line parser on fuzzed argument
// vectors (NUL-separated): it must not panic, must either succeed quietly
// or stop with an exit code, and must explain every failure on stderr.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{
		"-h\x00-o\x00%i %t", "--format=%i\x00-j128", "-jobs", "--s", "--sort", "-Z", "-o", "--long=1",
		"-t\x00bogus", "-i\x000", "--running-over=1:00\x00--running-under=0:30", "-l\x00-o\x00%i",
		"-O\x00JobID\x00-o\x00%i", "--\x00-x", "128", "-j\x00128\x00129", "--me\x00--user=root,5",
		"--json=v0.0.44", "-s", "--helpst", "-V", "-w\x00n[1-3]", "-w\x00n[", "--start",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 1<<10 {
			return
		}
		args := strings.Split(in, "\x00")
		var out, errb strings.Builder
		env := &clienv.Env{
			Prog:   "squeue",
			Stdout: &out,
			Stderr: &errb,
			Getenv: func(string) string { return "" },
			Now:    func() time.Time { return time.Unix(0, 0) },
		}
		o, err := parseOptions(env, args)
		if err == nil {
			if errb.Len() != 0 {
				t.Fatalf("%q: success with stderr %q", args, errb.String())
			}
			if o.long && o.format != nil {
				t.Fatalf("%q: -l and -o accepted together", args)
			}
			for _, j := range o.jobs {
				if j.jobID == 0 {
					t.Fatalf("%q: job id 0", args)
				}
			}
			for _, s := range o.states {
				if _, ok := readmodel.ParseState(s.String()); !ok && s.Flags() == 0 {
					t.Fatalf("%q: state %v does not print back", args, s)
				}
			}
			return
		}
		var ee *exitError
		if !errors.As(err, &ee) {
			t.Fatalf("%q: error %v is not an exit", args, err)
		}
		if ee.code != 0 && errb.Len() == 0 {
			t.Fatalf("%q: exit %d without a message", args, ee.code)
		}
	})
}
