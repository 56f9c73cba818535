package coltable

import (
	"strings"
	"testing"
)

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
		if got := Fit(tc.s, tc.w, tc.left); got != tc.want {
			t.Errorf("Fit(%q, %d, %v) = %q, want %q", tc.s, tc.w, tc.left, got, tc.want)
		}
	}
}

func TestPrint(t *testing.T) {
	cols := []Column{{"JobID", 6, true}, {"MaxRSS", 8, false}}
	rows := [][]string{{"1.0", "64616K"}, {"1.batch", "3284K"}}
	var b strings.Builder
	Print(&b, cols, rows, Style{})
	want := "JobID    MaxRSS \n------ -------- \n1.0      64616K \n1.bat+    3284K \n"
	if b.String() != want {
		t.Fatalf("table:\n%q\nwant\n%q", b.String(), want)
	}
	b.Reset()
	Print(&b, cols, rows, Style{Parsable: true, Delimiter: "|", NoHeader: true})
	if want := "1.0|64616K|\n1.batch|3284K|\n"; b.String() != want {
		t.Fatalf("-p: %q, want %q", b.String(), want)
	}
	b.Reset()
	Print(&b, cols, rows[:1], Style{Parsable2: true, Delimiter: "|"})
	if want := "JobID|MaxRSS\n1.0|64616K\n"; b.String() != want {
		t.Fatalf("-P: %q, want %q", b.String(), want)
	}
}
