package hostlist

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzExpand checks that Expand never panics, that every refusal is an
// *Error of a known kind, and, for accepted input, that Count agrees, that
// Compress round-trips through Expand, and that CompressSorted is a sorted
// permutation of the names and idempotent.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{
		"", "n[1-3,7]", "a1,a2,a3", "n3,n1,n2,n10", "r[1-2]n[001-010]", "n[8-010]",
		"n[1-", "n[1-2]x", "h003,h002,h001", "n9,n010,n10,n01", "[0-9]", "a b\tc",
		"n[1, 3]", "x[1-2]y[1]z[00-01]", "n1,n1,n[0-1]", "n[098-101],n100",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		names, err := Expand(expr)
		n, cerr := Count(expr)
		if err != nil {
			var he *Error
			if !errors.As(err, &he) || !(errors.Is(err, ErrInvalid) || errors.Is(err, ErrTooLarge)) {
				t.Fatalf("Expand(%q): unexpected error type %T: %v", expr, err, err)
			}
			if cerr == nil || cerr.Error() != err.Error() {
				t.Fatalf("Count(%q) = %v, Expand error %v", expr, cerr, err)
			}
			return
		}
		if cerr != nil || n != len(names) {
			t.Fatalf("Count(%q) = %d, %v; Expand gave %d names", expr, n, cerr, len(names))
		}
		for _, name := range names {
			if name == "" {
				t.Fatalf("Expand(%q) produced an empty name", expr)
			}
		}

		c := Compress(names)
		back, err := Expand(c)
		if err != nil {
			t.Fatalf("Expand(Compress(Expand(%q))) = Expand(%q): %v", expr, c, err)
		}
		if diff := cmp.Diff(names, back); diff != "" {
			t.Fatalf("Expand(%q) -> Compress %q -> Expand mismatch (-want +got):\n%s", expr, c, diff)
		}

		s := CompressSorted(names)
		sorted, err := Expand(s)
		if err != nil {
			t.Fatalf("Expand(CompressSorted) = Expand(%q): %v", s, err)
		}
		want := slices.Clone(names)
		Sort(want)
		if diff := cmp.Diff(want, sorted); diff != "" {
			t.Fatalf("CompressSorted(Expand(%q)) = %q is not the sorted names (-want +got):\n%s", expr, s, diff)
		}
		if !slices.IsSortedFunc(sorted, Compare) {
			t.Fatalf("CompressSorted(Expand(%q)) = %q is not sorted", expr, s)
		}
		if again := CompressSorted(sorted); again != s {
			t.Fatalf("CompressSorted not idempotent: %q then %q", s, again)
		}
	})
}

// FuzzCompare checks that Compare is a total order: antisymmetric, zero
// only for equal strings, and transitive.
func FuzzCompare(f *testing.F) {
	f.Add("n9", "n01", "n10")
	f.Add("n001", "n100", "n99")
	f.Add("r2n1", "r10n1", "r01n1")
	f.Add("n", "n0", "n00")
	f.Add("a1b", "a01b", "a001b")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		ab, ba := Compare(a, b), Compare(b, a)
		if ab != -ba {
			t.Fatalf("Compare(%q, %q) = %d but Compare(%q, %q) = %d", a, b, ab, b, a, ba)
		}
		if (ab == 0) != (a == b) {
			t.Fatalf("Compare(%q, %q) = %d", a, b, ab)
		}
		bc, ac := Compare(b, c), Compare(a, c)
		if ab <= 0 && bc <= 0 && ac > 0 {
			t.Fatalf("not transitive: %q <= %q <= %q but Compare(a, c) = %d", a, b, c, ac)
		}
		if ab >= 0 && bc >= 0 && ac < 0 {
			t.Fatalf("not transitive: %q >= %q >= %q but Compare(a, c) = %d", a, b, c, ac)
		}
	})
}
