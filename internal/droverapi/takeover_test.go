package droverapi

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseTakeoverTarget(t *testing.T) {
	names := []string{"ctl0", "ctl1.example.org", "ctl2"}
	tests := []struct {
		name    string
		in      string
		want    TakeoverTarget
		wantErr string
		index   int
		resolve string
	}{
		{name: "default", in: "", want: TakeoverTarget{Index: 1}, index: 1},
		{name: "index", in: "2", want: TakeoverTarget{Index: 2}, index: 2},
		{name: "index out of range", in: "3", want: TakeoverTarget{Index: 3}, resolve: "invalid backup controller index (3)"},
		{name: "primary by index", in: "0", wantErr: "invalid backup controller index (0)"},
		{name: "negative", in: "-1", wantErr: "invalid backup controller index (-1)"},
		{name: "huge", in: "99999999999999999999", wantErr: "invalid backup controller index (99999999999999999999)"},
		{name: "name", in: "ctl2", want: TakeoverTarget{Name: "ctl2"}, index: 2},
		{name: "primary by name", in: "ctl0", want: TakeoverTarget{Name: "ctl0"}, index: 0},
		{name: "short name", in: "CTL1", want: TakeoverTarget{Name: "CTL1"}, index: 1},
		{name: "full name", in: "ctl1.example.org", want: TakeoverTarget{Name: "ctl1.example.org"}, index: 1},
		{name: "unknown name", in: "ctl9", want: TakeoverTarget{Name: "ctl9"}, resolve: "no controller named ctl9"},
		{name: "bad name", in: "ctl 1", wantErr: `invalid controller name ("ctl 1")`},
		{name: "two signs", in: "--1", wantErr: `invalid controller name ("--1")`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseTakeoverTarget(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParseTakeoverTarget(%q) error %v, want %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseTakeoverTarget(%q) (-want +got):\n%s", tc.in, diff)
			}
			i, err := got.Resolve(names)
			if tc.resolve != "" {
				if err == nil || err.Error() != tc.resolve {
					t.Fatalf("Resolve error %v, want %q", err, tc.resolve)
				}
				return
			}
			if err != nil || i != tc.index {
				t.Errorf("Resolve = %d, %v; want %d", i, err, tc.index)
			}
		})
	}
	if _, err := (TakeoverTarget{Index: 1}).Resolve([]string{"ctl0"}); err == nil || err.Error() != "no backup controller defined" {
		t.Errorf("one controller: %v", err)
	}
}

func TestControllerMode(t *testing.T) {
	got := []string{ControllerMode(0, 1), ControllerMode(0, 2), ControllerMode(1, 2), ControllerMode(1, 3), ControllerMode(2, 3)}
	want := []string{"primary", "primary", "backup", "backup1", "backup2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
}

// FuzzParseTakeoverTarget checks that any argument parses or fails
// cleanly, that what parses resolves without panicking, and that the
// parameter it becomes parses back to the same target.
func FuzzParseTakeoverTarget(f *testing.F) {
	for _, s := range []string{"", "1", "0", "-1", "+2", "ctl1", "ctl1.example.org", "9999999999999999999999", "a b", "--1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTakeoverTarget(s)
		if err != nil {
			return
		}
		if got.Name == "" && got.Index < 1 {
			t.Fatalf("%q parsed to index %d", s, got.Index)
		}
		_, _ = got.Resolve([]string{"a", "b", "c"})
		back, err := ParseTakeoverTarget(got.String())
		if err != nil || back != got {
			t.Fatalf("%q -> %+v -> %q -> %+v, %v", s, got, got.String(), back, err)
		}
	})
}
