package sacct

import (
	"github.com/droverhq/drover/internal/arrayspec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseFormat: any -o list is read or refused, and a list read is
// made of known fields with widths.
func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{defaultFormat, "JobID,State%30,ExitCode", "jobid%-3", "Bogus", ",,", "State%", "%5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cols, err := parseFormat(s)
		if err != nil {
			return
		}
		for _, c := range cols {
			if _, ok := fields()[strings.ToLower(c.Field.name)]; !ok {
				t.Fatalf("%q: unknown field %q", s, c.Field.name)
			}
		}
	})
}

// FuzzParseSelector: any -j item is read or refused; one read names a
// job, and prints back to an item that reads the same.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"125", "131_2", "125.batch", "131_2.0", "0", "x", "1.", "_1", "1_x", "131_[1-3,7]", "131_[", "131_[1-3%2]", "34+1", "34+1.2", "34+", "+1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := parseSelector(s)
		if err != nil {
			return
		}
		if sel.id == 0 {
			t.Fatalf("%q: job 0", s)
		}
		back := strconv.FormatUint(uint64(sel.id), 10)
		if sel.het {
			back += "+" + strconv.FormatUint(uint64(sel.offset), 10)
		}
		if sel.tasks != nil {
			back += "_[" + arrayspec.Format(sel.tasks, 0) + "]"
		}
		if sel.step != "" {
			back += "." + sel.step
		}
		again, err := parseSelector(back)
		if err != nil || again.id != sel.id || again.step != sel.step || !slices.Equal(again.tasks, sel.tasks) || again.het != sel.het || again.offset != sel.offset {
			t.Fatalf("%q -> %q -> %+v %v", s, back, again, err)
		}
	})
}

func TestUnits(t *testing.T) {
	for _, tc := range []struct {
		c         cellCtx
		n         float64
		mem, disk string
	}{
		{cellCtx{}, 66142208, "64592K", "63.08M"},
		{cellCtx{}, 2 << 20, "2M", "2.00M"},
		{cellCtx{}, 1694, "2K", "0.00M"},
		{cellCtx{units: "K"}, 5253120, "5130K", "5130K"},
		{cellCtx{units: "G"}, 3 << 30, "3G", "3G"},
		{cellCtx{units: "M"}, 1 << 19, "0.50M", "0.50M"},
		{cellCtx{noConvert: true}, 5253120, "5253120", "5253120"},
	} {
		if got := tc.c.memory(tc.n); got != tc.mem {
			t.Errorf("memory(%v, %+v) = %q, want %q", tc.n, tc.c, got, tc.mem)
		}
		if got := tc.c.disk(tc.n); got != tc.disk {
			t.Errorf("disk(%v, %+v) = %q, want %q", tc.n, tc.c, got, tc.disk)
		}
	}
}

func TestSplitJobs(t *testing.T) {
	got := splitJobs("131_[1-3,7],140, 150.batch,,")
	if want := []string{"131_[1-3,7]", "140", "150.batch"}; !slices.Equal(got, want) {
		t.Fatalf("splitJobs = %q, want %q", got, want)
	}
	sel, err := parseSelector("131_[1-3,7]")
	if err != nil || !slices.Equal(sel.tasks, []uint32{1, 2, 3, 7}) {
		t.Fatalf("parseSelector = %+v, %v", sel, err)
	}
	o := options{jobs: []selector{sel}}
	for task, want := range map[int64]bool{1: true, 3: true, 4: false, 7: true} {
		if got := o.selected(200, 131, task, true); got != want {
			t.Errorf("task %d selected %v", task, got)
		}
	}
}
