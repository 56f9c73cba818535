package arrayspec

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/slurmerr"
)

func seq(first, last, step uint32) []uint32 {
	var out []uint32
	for i := first; i <= last; i += step {
		out = append(out, i)
	}
	return out
}

func TestParse(t *testing.T) {
	tests := map[string]struct {
		in   string
		max  uint32
		want Spec
	}{
		"range":                 {in: "0-9", want: Spec{Tasks: seq(0, 9, 1)}},
		"reference capture":     {in: "0-9%2", want: Spec{Tasks: seq(0, 9, 1), MaxRunning: 2}},
		"list":                  {in: "1,3,5-7", want: Spec{Tasks: []uint32{1, 3, 5, 6, 7}}},
		"single":                {in: "5", want: Spec{Tasks: []uint32{5}}},
		"step":                  {in: "0-99:3", want: Spec{Tasks: seq(0, 99, 3)}},
		"step and throttle":     {in: "0-15:4%8", want: Spec{Tasks: []uint32{0, 4, 8, 12}, MaxRunning: 8}},
		"unsorted duplicates":   {in: "7,1-3,2", want: Spec{Tasks: []uint32{1, 2, 3, 7}}},
		"empty items skipped":   {in: ",1,,2,", want: Spec{Tasks: []uint32{1, 2}}},
		"brackets":              {in: "[1-3]", want: Spec{Tasks: []uint32{1, 2, 3}}},
		"bracketed list":        {in: "[1,3]", want: Spec{Tasks: []uint32{1, 3}}},
		"top index":             {in: "1000", want: Spec{Tasks: []uint32{1000}}},
		"zero throttle":         {in: "1-3%0", want: Spec{Tasks: []uint32{1, 2, 3}}},
		"throttle in any item":  {in: "1%2,3", want: Spec{Tasks: []uint32{1, 3}, MaxRunning: 2}},
		"first throttle counts": {in: "1%2,3%5", want: Spec{Tasks: []uint32{1, 3}, MaxRunning: 2}},
		"throttle garbage":      {in: "1-3%x", want: Spec{Tasks: []uint32{1, 2, 3}}},
		"negative throttle":     {in: "1-3%-4", want: Spec{Tasks: []uint32{1, 2, 3}}},
		"plus throttle":         {in: "1-3%+4", want: Spec{Tasks: []uint32{1, 2, 3}, MaxRunning: 4}},
		"step wider than range": {in: "2-5:10", want: Spec{Tasks: []uint32{2}}},
		"leading zeros":         {in: "007", want: Spec{Tasks: []uint32{7}}},
		"small max":             {in: "0-9", max: 10, want: Spec{Tasks: seq(0, 9, 1)}},
		"big max":               {in: "4000000", max: 4000001, want: Spec{Tasks: []uint32{4000000}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = DefaultMaxArraySize
			}
			got, err := Parse(tc.in, max)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := map[string]struct {
		in     string
		max    uint32
		reason string
	}{
		"too large":          {in: "0-1001", reason: "index too large"},
		"single too large":   {in: "1001", reason: "index too large"},
		"small max":          {in: "10", max: 10, reason: "index too large"},
		"huge":               {in: "99999999999999999999", reason: "index too large"},
		"reversed":           {in: "9-0", reason: "below its start"},
		"zero step":          {in: "0-9:0", reason: "step"},
		"step too large":     {in: "0-9:1001", reason: "step"},
		"step without range": {in: "5:2", reason: "unexpected"},
		"space":              {in: "1, 3", reason: "white space"},
		"tab":                {in: "1-3\t", reason: "white space"},
		"sign":               {in: "+5", reason: "index expected"},
		"negative":           {in: "-5", reason: "index expected"},
		"missing end":        {in: "0-", reason: "range end expected"},
		"missing step":       {in: "0-9:", reason: "step expected"},
		"throttle only":      {in: "%4", reason: "index expected"},
		"letters":            {in: "abc", reason: "index expected"},
		"trailing garbage":   {in: "1-3x", reason: "unexpected"},
		"empty":              {in: "", reason: "no indices"},
		"commas only":        {in: ",,", reason: "no indices"},
		"disabled":           {in: "1", max: 0, reason: "disabled"},
		"throttle overflow":  {in: "1%99999999999", reason: "throttle"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			max := tc.max
			if max == 0 && name != "disabled" {
				max = DefaultMaxArraySize
			}
			got, err := Parse(tc.in, max)
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("Parse(%q) = %+v, %v; want an *Error", tc.in, got, err)
			}
			if !strings.Contains(ae.Reason, tc.reason) {
				t.Errorf("Parse(%q) reason %q, want it to mention %q", tc.in, ae.Reason, tc.reason)
			}
			if !errors.Is(err, slurmerr.Sentinel(slurmerr.InvalidArray)) {
				t.Errorf("Parse(%q) error does not match InvalidArray", tc.in)
			}
			if diff := cmp.Diff("Invalid job array specification", slurmerr.CodeOf(err).Message()); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := map[string]struct {
		tasks []uint32
		max   uint32
		want  string
	}{
		"reference pending":       {tasks: seq(0, 9, 1), max: 2, want: "0-9%2"},
		"reference partly run":    {tasks: seq(2, 9, 1), max: 2, want: "2-9%2"},
		"list":                    {tasks: []uint32{1, 3, 5, 6, 7}, want: "1,3,5-7"},
		"pair is a range":         {tasks: []uint32{5, 6}, want: "5-6"},
		"single":                  {tasks: []uint32{4}, want: "4"},
		"short progression":       {tasks: []uint32{0, 3, 6}, want: "0,3,6"},
		"progression":             {tasks: seq(0, 99, 3), want: "0-99:3"},
		"progression throttled":   {tasks: seq(0, 30, 5), max: 4, want: "0-30:5%4"},
		"progression of six":      {tasks: seq(0, 15, 3), want: "0-15:3"},
		"five is not enough":      {tasks: seq(0, 12, 3), want: "0,3,6,9,12"},
		"span of ten not enough":  {tasks: seq(0, 10, 2), want: "0,2,4,6,8,10"},
		"irregular":               {tasks: []uint32{0, 3, 6, 9, 12, 16}, want: "0,3,6,9,12,16"},
		"unsorted and duplicated": {tasks: []uint32{7, 1, 2, 3, 2}, want: "1-3,7"},
		"none":                    {tasks: nil, max: 3, want: ""},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Format(tc.tasks, tc.max)); diff != "" {
				t.Errorf("Format(%v, %d) (-want +got):\n%s", tc.tasks, tc.max, diff)
			}
		})
	}
}

func TestFormatDoesNotModifyInput(t *testing.T) {
	in := []uint32{3, 1, 2, 2}
	Format(in, 0)
	if diff := cmp.Diff([]uint32{3, 1, 2, 2}, in); diff != "" {
		t.Errorf("input changed (-want +got):\n%s", diff)
	}
}

func TestFormatLimited(t *testing.T) {
	evens := seq(0, 200, 2)
	evens = append(evens, 201) // breaks the progression
	full := Format(evens, 0)
	tests := map[string]struct {
		tasks []uint32
		max   uint32
		width int
		want  string
	}{
		"short fits":         {tasks: seq(0, 9, 1), max: 2, width: DefaultBitstrLen, want: "0-9%2"},
		"cut at 64":          {tasks: evens, width: DefaultBitstrLen, want: full[:60] + "..."},
		"throttle after cut": {tasks: evens, max: 5, width: DefaultBitstrLen, want: full[:60] + "...%5"},
		"no cut":             {tasks: evens, width: 0, want: full},
		"progression uncut":  {tasks: seq(0, 900, 3), width: 8, want: "0-900:3"},
		"61 bytes fits":      {tasks: evens, width: 64 + len(full) - 61, want: full},
		"tiny width":         {tasks: evens, width: 1, want: "..."},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FormatLimited(tc.tasks, tc.max, tc.width)); diff != "" {
				t.Errorf("FormatLimited (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFormatLimitedBoundary pins Slurm's cut: a list of exactly
// bitstrLen-3 bytes is kept, one byte more is cut to bitstrLen-4 bytes and
// "...".
func TestFormatLimitedBoundary(t *testing.T) {
	tasks := append(seq(0, 100, 2), 101)
	full := Format(tasks, 0)
	width := len(full) + 3
	if got := FormatLimited(tasks, 0, width); got != full {
		t.Errorf("width %d: got %q, want the whole %q", width, got, full)
	}
	if got, want := FormatLimited(tasks, 0, width-1), full[:width-5]+"..."; got != want {
		t.Errorf("width %d: got %q, want %q", width-1, got, want)
	}
}

func TestBitstrLen(t *testing.T) {
	tests := map[string]struct {
		value string
		set   bool
		want  int
	}{
		"unset":      {want: 64},
		"empty":      {value: "", set: true, want: 0},
		"zero":       {value: "0", set: true, want: 0},
		"number":     {value: "128", set: true, want: 128},
		"negative":   {value: "-1", set: true, want: 64},
		"capped":     {value: "100000", set: true, want: 4096},
		"not number": {value: "abc", set: true, want: 0},
		"prefix":     {value: "32abc", set: true, want: 32},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := BitstrLen(tc.value, tc.set); got != tc.want {
				t.Errorf("BitstrLen(%q, %v) = %d, want %d", tc.value, tc.set, got, tc.want)
			}
		})
	}
}

func TestSpecString(t *testing.T) {
	s, err := Parse("0-9%2", DefaultMaxArraySize)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("0-9%2", s.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
