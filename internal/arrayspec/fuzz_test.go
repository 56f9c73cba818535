package arrayspec

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse checks the invariants of Parse and that Format's output parses
// back to the same tasks and throttle.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"0-99", "1,3,5-7", "0-99:3", "0-9%2", "[1-3]", ",1,,2,", "1%2,3", "0-15:4%8", "1000", "1001",
		"9-0", "0-9:0", "5:2", "1, 3", "+5", "%4", "0-", "", "1-3%x", "0-1000:7", "1%99999999999",
	} {
		f.Add(s, uint32(DefaultMaxArraySize))
	}
	f.Add("0-9", uint32(10))
	f.Add("1", uint32(0))
	f.Fuzz(func(t *testing.T, s string, max uint32) {
		// Bound the bitmap so the fuzzer does not spend its time in
		// allocation; Slurm caps MaxArraySize at 4000001.
		max %= 5000
		spec, err := Parse(s, max)
		if err != nil {
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("Parse(%q) error %v is not an *Error", s, err)
			}
			return
		}
		if len(spec.Tasks) == 0 {
			t.Fatalf("Parse(%q) accepted no tasks", s)
		}
		if !slices.IsSorted(spec.Tasks) || len(slices.Compact(slices.Clone(spec.Tasks))) != len(spec.Tasks) {
			t.Fatalf("Parse(%q) tasks not sorted and unique: %v", s, spec.Tasks)
		}
		if last := spec.Tasks[len(spec.Tasks)-1]; last >= max {
			t.Fatalf("Parse(%q, %d) accepted index %d", s, max, last)
		}
		out := Format(spec.Tasks, spec.MaxRunning)
		back, err := Parse(out, max)
		if err != nil {
			t.Fatalf("Parse(%q) = %+v formats as %q, which does not parse: %v", s, spec, out, err)
		}
		if diff := cmp.Diff(spec, back); diff != "" {
			t.Fatalf("Parse(%q) formats as %q, which parses differently (-first +second):\n%s", s, out, diff)
		}
		if limited := FormatLimited(spec.Tasks, spec.MaxRunning, DefaultBitstrLen); len(limited) > len(out) {
			t.Fatalf("FormatLimited(%q) = %q is longer than Format's %q", s, limited, out)
		}
	})
}
