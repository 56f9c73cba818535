package scancel

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/readmodel"
)

const noTask = readmodel.NoVal

func TestParseTargets(t *testing.T) {
	tests := map[string]struct {
		args         []string
		wantTargets  []Target
		wantOperands []string
		// wantInvalid is the operand reported invalid, when wantErr.
		wantErr     bool
		wantInvalid string
	}{
		"job":              {args: []string{"123"}, wantTargets: []Target{{JobID: 123, Task: noTask}}, wantOperands: []string{"123"}},
		"task":             {args: []string{"123_4"}, wantTargets: []Target{{JobID: 123, Task: 4}}, wantOperands: []string{"123_4"}},
		"all tasks":        {args: []string{"123_*"}, wantTargets: []Target{{JobID: 123, Task: AllTasks}}, wantOperands: []string{"123_*"}},
		"task 0 by strtol": {args: []string{"12_"}, wantTargets: []Target{{JobID: 12, Task: 0}}, wantOperands: []string{"12_"}},
		"task range": {
			args:         []string{"7_[1-3,5]"},
			wantTargets:  []Target{{JobID: 7, Task: 1}, {JobID: 7, Task: 2}, {JobID: 7, Task: 3}, {JobID: 7, Task: 5}},
			wantOperands: []string{"7_[1-3,5]"},
		},
		"comma list": {
			args:         []string{"1,2_3", "4"},
			wantTargets:  []Target{{JobID: 1, Task: noTask}, {JobID: 2, Task: 3}, {JobID: 4, Task: noTask}},
			wantOperands: []string{"1", "2_3", "4"},
		},
		"step":             {args: []string{"9.2"}, wantTargets: []Target{{JobID: 9, Task: noTask, Step: 2, HasStep: true}}, wantOperands: []string{"9.2"}},
		"task and step":    {args: []string{"9_1.0"}, wantTargets: []Target{{JobID: 9, Task: 1, HasStep: true}}, wantOperands: []string{"9_1.0"}},
		"hetjob component": {args: []string{"9+1"}, wantTargets: []Target{{JobID: 9, Task: noTask}}, wantOperands: []string{"9+1"}},
		"leading blanks":   {args: []string{" 42"}, wantTargets: []Target{{JobID: 42, Task: noTask}}, wantOperands: []string{" 42"}},
		"not a number":     {args: []string{"abc"}, wantErr: true, wantInvalid: "abc"},
		"zero":             {args: []string{"0"}, wantErr: true, wantInvalid: "0"},
		"trailing text":    {args: []string{"12x"}, wantErr: true, wantInvalid: "12x"},
		"batch step name":  {args: []string{"12.batch"}, wantErr: true, wantInvalid: "12.batch"},
		"range then more":  {args: []string{"12_[1-3],13"}, wantErr: true, wantInvalid: "12_[1-3],13"},
		"bad range":        {args: []string{"12_[a]"}, wantErr: true, wantInvalid: "12_[a]"},
		"empty list item":  {args: []string{"12,"}, wantErr: true, wantInvalid: ""},
		"negative task":    {args: []string{"12_-1"}, wantErr: true, wantInvalid: "12_-1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			targets, operands, err := ParseTargets(tc.args)
			if tc.wantErr {
				var ite *InvalidTargetError
				if !errors.As(err, &ite) || ite.Arg != tc.wantInvalid {
					t.Fatalf("error = %v, want invalid %q", err, tc.wantInvalid)
				}
				return
			}
			if err != nil {
				t.Fatalf("error = %v", err)
			}
			if diff := cmp.Diff(tc.wantTargets, targets); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOperands, operands); diff != "" {
				t.Errorf("operands (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSignalNumber(t *testing.T) {
	tests := map[string]uint16{
		"KILL": 9, "SIGKILL": 9, "sigterm": 15, "Term": 15, " usr1 ": 10, "9": 9, " 15 ": 15,
		"70000": 70000 & 0xffff, "-1": 0xffff, "BOGUS": 0, "9x": 0, "": 0, "SIG": 0, "TERMX": 0,
	}
	for in, want := range tests {
		if got := SignalNumber(in); got != want {
			t.Errorf("SignalNumber(%q) = %d, want %d", in, got, want)
		}
	}
	for _, s := range signals {
		if got := SignalNumber("SIG" + s.name); got != s.num {
			t.Errorf("SignalNumber(SIG%s) = %d, want %d", s.name, got, s.num)
		}
	}
}

// FuzzParseTargets checks the operand parser: no panics, positive job ids,
// and every plain target prints back to an operand that parses to itself.
func FuzzParseTargets(f *testing.F) {
	for _, s := range []string{"123", "123_4", "123_*", "7_[1-3,5]", "1,2_3", "9.2", "9_1.0", "9+1", "abc", "12_[1-3],13", "12,", " 0x1", "5_[0-4000001]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		targets, operands, err := ParseTargets([]string{in})
		if err != nil {
			if targets != nil || operands != nil {
				t.Fatalf("%q: results returned with an error", in)
			}
			return
		}
		if len(operands) > len(targets) {
			t.Fatalf("%q: %d operands for %d targets", in, len(operands), len(targets))
		}
		for _, tg := range targets {
			if tg.JobID == 0 {
				t.Fatalf("%q: job id 0", in)
			}
			again, _, err := ParseTargets([]string{tg.String()})
			if err != nil || len(again) != 1 || again[0] != tg {
				t.Fatalf("%q: target %+v prints as %q, which parses to %+v (%v)", in, tg, tg.String(), again, err)
			}
		}
	})
}

// FuzzSignalNumber checks that what is recognised is either a number
// (which the REST parameter carries back unchanged) or one of Slurm's
// signal names.
func FuzzSignalNumber(f *testing.F) {
	for _, s := range []string{"KILL", "SIGTERM", " usr1 ", "9", "-1", "70000", "SIG", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		n := SignalNumber(in)
		if n == 0 {
			return
		}
		if got := SignalNumber(signalParam(n)); got != n {
			t.Fatalf("%q: %d sent as %q, read back as %d", in, n, signalParam(n), got)
		}
		if _, rest := strtol(in); rest != in {
			return
		}
		for _, s := range signals {
			if s.num == n {
				return
			}
		}
		t.Fatalf("%q: read as %d, which is no signal name", in, n)
	})
}
