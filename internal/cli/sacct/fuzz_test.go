package sacct

import (
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
			if _, ok := fields[strings.ToLower(c.Field.name)]; !ok {
				t.Fatalf("%q: unknown field %q", s, c.Field.name)
			}
		}
	})
}

// FuzzParseSelector: any -j item is read or refused; one read names a
// job, and prints back to an item that reads the same.
func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"125", "131_2", "125.batch", "131_2.0", "0", "x", "1.", "_1", "1_x"} {
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
		if sel.task != nil {
			back += "_" + strconv.FormatUint(uint64(*sel.task), 10)
		}
		if sel.step != "" {
			back += "." + sel.step
		}
		again, err := parseSelector(back)
		if err != nil || again.id != sel.id || again.step != sel.step || (again.task == nil) != (sel.task == nil) {
			t.Fatalf("%q -> %q -> %+v %v", s, back, again, err)
		}
	})
}

func TestUsageUnits(t *testing.T) {
	r := &row{hasUsage: true}
	for _, tc := range []struct {
		c    cellCtx
		n    int64
		want string
	}{
		{cellCtx{}, 5253120, "5.01M"},
		{cellCtx{}, 2 << 20, "2M"},
		{cellCtx{units: "K"}, 5253120, "5130K"},
		{cellCtx{units: "G"}, 3 << 30, "3G"},
		{cellCtx{units: "M"}, 1 << 19, "0.50M"},
		{cellCtx{noConvert: true}, 5253120, "5253120"},
	} {
		if got := usage(r, &tc.c, tc.n); got != tc.want {
			t.Errorf("usage(%d, %+v) = %q, want %q", tc.n, tc.c, got, tc.want)
		}
	}
}
