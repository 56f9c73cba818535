//go:build linux

package proctrack

import (
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseProcStat(t *testing.T) {
	tests := map[string]struct {
		line    string
		want    procStat
		wantErr bool
	}{
		"plain": {
			line: "1234 (sleep) S 1200 1200 1100 34816 1234 4194304 100 0 0 0\n",
			want: procStat{PID: 1234, Comm: "sleep", State: 'S', PPID: 1200, PGRP: 1200, Session: 1100},
		},
		"command with spaces and parens": {
			line: "77 (a) b (c)) Z 1 77 77 0 -1\n",
			want: procStat{PID: 77, Comm: "a) b (c)", State: 'Z', PPID: 1, PGRP: 77, Session: 77},
		},
		"kernel thread": {
			line: "2 (kthreadd) S 0 0 0 0 -1 2129984",
			want: procStat{PID: 2, Comm: "kthreadd", State: 'S'},
		},
		"no command":      {line: "12 sleep S 1 1 1", wantErr: true},
		"too few fields":  {line: "12 (sleep) S 1 1", wantErr: true},
		"long state":      {line: "12 (sleep) SS 1 1 1", wantErr: true},
		"negative ppid":   {line: "12 (sleep) S -1 1 1", wantErr: true},
		"bad pid":         {line: "x (sleep) S 1 1 1", wantErr: true},
		"pid overflow":    {line: "99999999999 (sleep) S 1 1 1", wantErr: true},
		"close before op": {line: "12 )sleep( S 1 1 1", wantErr: true},
		"empty":           {line: "", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseProcStat([]byte(tc.line))
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseProcStat(%q) error = %v, want error %v", tc.line, err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("parseProcStat(%q) (-want +got):\n%s", tc.line, diff)
			}
		})
	}
}

func TestScanProcsFindsSelf(t *testing.T) {
	procs, err := scanProcs()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if p.PID == os.Getpid() {
			if diff := cmp.Diff(os.Getppid(), p.PPID); diff != "" {
				t.Errorf("PPID of self (-want +got):\n%s", diff)
			}
			return
		}
	}
	t.Errorf("scanProcs did not list this process (%d)", os.Getpid())
}

func TestTreeMembers(t *testing.T) {
	procs := []procStat{
		{PID: 1, PPID: 0, PGRP: 1, State: 'S'},
		{PID: 100, PPID: 50, PGRP: 100, State: 'S'},  // leader
		{PID: 101, PPID: 100, PGRP: 100, State: 'S'}, // child
		{PID: 102, PPID: 100, PGRP: 102, State: 'S'}, // setsid child
		{PID: 103, PPID: 102, PGRP: 102, State: 'S'}, // its child
		{PID: 104, PPID: 101, PGRP: 100, State: 'Z'}, // zombie
		{PID: 105, PPID: 1, PGRP: 105, State: 'S'},   // setsid orphan: lost
		{PID: 106, PPID: 1, PGRP: 100, State: 'R'},   // orphan still in group
		{PID: 50, PPID: 1, PGRP: 50, State: 'S'},     // the daemon
	}
	want := []int{100, 101, 102, 103, 106}
	if diff := cmp.Diff(want, treeMembers(procs, []int{100}, 50)); diff != "" {
		t.Errorf("treeMembers (-want +got):\n%s", diff)
	}
	if got := treeMembers(procs, []int{999}, 50); len(got) != 0 {
		t.Errorf("treeMembers of an empty group = %v, want none", got)
	}
}

func TestParseKernelRelease(t *testing.T) {
	tests := map[string]struct {
		rel          string
		major, minor int
		ok           bool
	}{
		"distro":    {rel: "6.8.0-45-generic", major: 6, minor: 8, ok: true},
		"this host": {rel: "6.18.44-fc-v595", major: 6, minor: 18, ok: true},
		"el8":       {rel: "4.18.0-553.el8_10.x86_64", major: 4, minor: 18, ok: true},
		"two parts": {rel: "5.7", major: 5, minor: 7, ok: true},
		"rc":        {rel: "6.10-rc1", major: 6, minor: 10, ok: true},
		"no dot":    {rel: "6", ok: false},
		"letters":   {rel: "abc.def", ok: false},
		"signed":    {rel: "+5.7", ok: false},
		"empty":     {rel: "", ok: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			major, minor, ok := parseKernelRelease(tc.rel)
			got := []any{major, minor, ok}
			if diff := cmp.Diff([]any{tc.major, tc.minor, tc.ok}, got); diff != "" {
				t.Errorf("parseKernelRelease(%q) (-want +got):\n%s", tc.rel, diff)
			}
		})
	}
}

// FuzzParseProcStat checks that parsing never panics, that what it accepts
// formats back to a line that parses to the same fields, and that any
// command name survives a round trip, since the kernel allows every byte in
// it.
func FuzzParseProcStat(f *testing.F) {
	f.Add([]byte("1234 (sleep) S 1200 1200 1100 34816 1234 4194304\n"), "x", 1, 2, 3, 4)
	f.Add([]byte("77 (a) b (c)) Z 1 77 77 0 -1\n"), "a) (b", 77, 1, 77, 77)
	f.Add([]byte("2 (kthreadd) S 0 0 0"), "", 0, 0, 0, 0)
	f.Add([]byte(") ( 1 2 3"), "\n", 5, 6, 7, 8)
	f.Fuzz(func(t *testing.T, line []byte, comm string, pid, ppid, pgrp, session int) {
		if p, err := parseProcStat(line); err == nil {
			again, err := parseProcStat(formatProcStat(p))
			if err != nil {
				t.Fatalf("reparse of %+v: %v", p, err)
			}
			if diff := cmp.Diff(p, again); diff != "" {
				t.Fatalf("round trip of %q (-first +second):\n%s", line, diff)
			}
		}
		ids := []int{pid, ppid, pgrp, session}
		for i, id := range ids {
			if id < 0 {
				ids[i] = -id
			}
			ids[i] %= 1 << 22 // PID_MAX_LIMIT
		}
		want := procStat{PID: ids[0], Comm: comm, State: 'R', PPID: ids[1], PGRP: ids[2], Session: ids[3]}
		got, err := parseProcStat(formatProcStat(want))
		if err != nil {
			t.Fatalf("parse of a kernel-style line for %+v: %v", want, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// FuzzParseKernelRelease checks that parsing never panics, that an accepted
// release starts with a digit, and that the numbers it returns round-trip.
func FuzzParseKernelRelease(f *testing.F) {
	for _, s := range []string{"6.8.0-45-generic", "5.7", "4.18.0-553.el8_10.x86_64", "6", "", "1.-2", "9999999999999999999999.1", "05.07"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		major, minor, ok := parseKernelRelease(rel)
		if !ok {
			return
		}
		if rel[0] < '0' || rel[0] > '9' || major < 0 || minor < 0 {
			t.Fatalf("parseKernelRelease(%q) accepted %d.%d", rel, major, minor)
		}
		again := fmt.Sprintf("%d.%d-x", major, minor)
		m2, n2, ok := parseKernelRelease(again)
		if !ok || m2 != major || n2 != minor {
			t.Fatalf("parseKernelRelease(%q) = %d.%d %v, want %d.%d", again, m2, n2, ok, major, minor)
		}
	})
}
