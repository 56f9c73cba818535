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
			if _, ok := fields[strings.ToLower(c.f.name)]; !ok {
				t.Fatalf("%q: unknown field %q", s, c.f.name)
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

func TestFit(t *testing.T) {
	for _, tc := range []struct {
		s    string
		w    int
		left bool
		want string
	}{
		{"completed_job", 10, false, "completed+"},
		{"failed_job", 10, false, "failed_job"},
		{"batch", 10, false, "     batch"},
		{"125", 12, true, "125         "},
		{"x", 0, false, ""},
	} {
		if got := fit(tc.s, tc.w, tc.left); got != tc.want {
			t.Errorf("fit(%q, %d, %v) = %q, want %q", tc.s, tc.w, tc.left, got, tc.want)
		}
	}
}
