package jobfmt

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTaskSet(t *testing.T) {
	tests := map[string]struct {
		in     string
		want   string
		len    int
		wantOK bool
	}{
		"range with throttle": {in: "0-9%2", want: "0-9", len: 10, wantOK: true},
		"list":                {in: "1,3,5-7", want: "1,3,5-7", len: 5, wantOK: true},
		"unsorted overlap":    {in: "5-7,1,6-9,2", want: "1-2,5-9", len: 7, wantOK: true},
		"adjacent merge":      {in: "1-2,3", want: "1-3", len: 3, wantOK: true},
		"empty":               {in: "", want: "", wantOK: true},
		"empty before %":      {in: "%4", want: "", wantOK: true},
		"reversed range":      {in: "5-3", wantOK: false},
		"not a number":        {in: "a", wantOK: false},
		"negative":            {in: "-1", wantOK: false},
		"too large":           {in: "4000001", wantOK: false},
		"trailing comma":      {in: "1,", wantOK: false},
		"step is not allowed": {in: "1-9:2", wantOK: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, ok := ParseTaskSet(tc.in)
			if ok != tc.wantOK {
				t.Fatalf("ParseTaskSet(%q) ok = %v, want %v", tc.in, ok, tc.wantOK)
			}
			if !ok {
				return
			}
			if got.String() != tc.want || got.Len() != tc.len {
				t.Errorf("ParseTaskSet(%q) = %q (%d ids), want %q (%d)", tc.in, got.String(), got.Len(), tc.want, tc.len)
			}
		})
	}
}

func TestTaskSetOps(t *testing.T) {
	var s TaskSet
	for _, id := range []uint32{9, 2, 3, 1, 7, 8} {
		s.Add(id)
	}
	if diff := cmp.Diff([]TaskRange{{1, 3}, {7, 9}}, s.Ranges()); diff != "" {
		t.Errorf("ranges (-want +got):\n%s", diff)
	}
	s.AddRange(4, 6)
	if got := s.String(); got != "1-9" {
		t.Errorf("after AddRange(4,6): %q", got)
	}
	for id, want := range map[uint32]bool{0: false, 1: true, 5: true, 9: true, 10: false} {
		if s.Contains(id) != want {
			t.Errorf("Contains(%d) = %v", id, !want)
		}
	}
	other, _ := ParseTaskSet("0,3,5-6,9-20")
	s.Intersect(other)
	if got := s.String(); got != "3,5-6,9" {
		t.Errorf("Intersect = %q, want 3,5-6,9", got)
	}
	if first, ok := s.First(); !ok || first != 3 {
		t.Errorf("First = %d, %v", first, ok)
	}
	var top TaskSet
	top.AddRange(0xfffffffe, 0xffffffff)
	top.Add(0xfffffffd)
	if got := top.String(); got != "4294967293-4294967295" {
		t.Errorf("ids at the top of the range: %q", got)
	}
}

// FuzzParseTaskSet checks that whatever parses prints back to a list that
// parses to the same set, with sorted disjoint ranges.
func FuzzParseTaskSet(f *testing.F) {
	for _, s := range []string{"0-9%2", "1,3,5-7", "5-7,1,6-9,2", "", "4000000", "1-2,3", "0-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, ok := ParseTaskSet(in)
		if !ok {
			return
		}
		again, ok := ParseTaskSet(s.String())
		if !ok {
			t.Fatalf("%q printed as %q, which does not parse", in, s.String())
		}
		if diff := cmp.Diff(s.Ranges(), again.Ranges()); diff != "" {
			t.Fatalf("%q: round trip differs (-first +second):\n%s", in, diff)
		}
		rs := s.Ranges()
		for i, r := range rs {
			if r.Last < r.First || r.Last > MaxTaskID {
				t.Fatalf("bad range %v", r)
			}
			if i > 0 && uint64(rs[i-1].Last)+1 >= uint64(r.First) {
				t.Fatalf("ranges not disjoint and separated: %v", rs)
			}
			if !s.Contains(r.First) || !s.Contains(r.Last) {
				t.Fatalf("Contains misses %v", r)
			}
		}
	})
}
