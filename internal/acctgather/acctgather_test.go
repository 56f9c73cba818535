//go:build linux

package acctgather

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStat(t *testing.T) {
	line := "4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 10 0 7 0 250 50 30 20 20 0 1 0 100 1048576 64 18446744073709551615\n"
	got, err := parseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := proc{pid: 4242, ppid: 1, pgrp: 4242, majflt: 7, utime: 250, stime: 50, cutime: 30, cstime: 20, vsize: 1048576, rssPages: 64}
	if d := cmp.Diff(want, got, cmp.AllowUnexported(proc{})); d != "" {
		t.Fatalf("parseStat (-want +got):\n%s", d)
	}
	for _, bad := range []string{"", "12 (x", "12 (x) S 1 2", "x (y) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21"} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
}

func TestParseIO(t *testing.T) {
	r, w := parseIO([]byte("rchar: 1685835\nwchar: 1694\nsyscr: 3\nread_bytes: 0\n"))
	if r != 1685835 || w != 1694 {
		t.Fatalf("parseIO = %d, %d", r, w)
	}
}

// TestMeasureOwnership: a task is its leader's process group and the
// descendants of its members; a process only the step's cgroup still
// holds counts for the lowest task; a reaped child's time is in its
// parent's cutime.
func TestMeasureOwnership(t *testing.T) {
	procs := []proc{
		{pid: 10, ppid: 1, pgrp: 10, utime: 100, cutime: 100, rssPages: 1, vsize: 10},
		{pid: 11, ppid: 10, pgrp: 10, utime: 100, rssPages: 2, vsize: 20},
		{pid: 12, ppid: 11, pgrp: 12, stime: 100, rssPages: 4, vsize: 40}, // setsid child: found as a descendant
		{pid: 20, ppid: 1, pgrp: 20, utime: 300, rssPages: 8, vsize: 80},
		{pid: 30, ppid: 1, pgrp: 30, utime: 500, rssPages: 16, vsize: 160}, // escaped: in the cgroup only
		{pid: 31, ppid: 1, pgrp: 31, dead: true, utime: 700},               // a zombie: time counted, memory not
		{pid: 40, ppid: 1, pgrp: 40, utime: 900},                           // a stranger
	}
	io := func(pid int) (uint64, uint64) { return uint64(pid), 1 }
	got := measure(procs, []Task{{ID: 3, Pid: 20}, {ID: 2, Pid: 10}}, []int{10, 11, 12, 20, 30, 31}, io)
	ps := pageSize
	want := map[int]Sample{
		2: {UserCPU: 3*time.Second + 5*time.Second + 7*time.Second, SystemCPU: time.Second, RSS: 23 * ps, VMSize: 230, DiskRead: 10 + 11 + 12 + 30 + 31, DiskWrite: 5, Pids: []int{10, 11, 12, 30}},
		3: {UserCPU: 3 * time.Second, RSS: 8 * ps, VMSize: 80, DiskRead: 20, DiskWrite: 1, Pids: []int{20}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("measure (-want +got):\n%s", d)
	}
}

// TestMeasureRealTask measures a real process tree: a shell whose child
// burns CPU and holds memory while reading a stream.
func TestMeasureRealTask(t *testing.T) {
	// The busy loop is a count, not a time: on a loaded machine a second
	// of wall time can be well under the half second of CPU looked for.
	cmd := exec.Command("sh", "-c", `head -c 20000000 /dev/zero | tail -c 8000000 >/dev/null; i=0; while [ $i -lt 1500000 ]; do i=$((i+1)); done; sleep 30`)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	var peaks Peaks
	deadline := time.Now().Add(20 * time.Second)
	for {
		all, err := Measure([]Task{{ID: 0, Pid: cmd.Process.Pid}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := peaks.Add(0, all[0])
		if s.UserCPU+s.SystemCPU >= 500*time.Millisecond && s.DiskRead >= 20000000 && len(all[0].Pids) >= 2 {
			if s.RSS == 0 || s.VMSize < s.RSS {
				t.Fatalf("memory: %+v", s)
			}
			if !strings.Contains(fmt.Sprint(all[0].Pids), fmt.Sprint(cmd.Process.Pid)) {
				t.Fatalf("pids %v lack the leader %d", all[0].Pids, cmd.Process.Pid)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s the task showed %+v", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("4242 (a (weird) name) S 1 4242 4242 0 -1 4194560 10 0 7 0 250 50 30 20 20 0 1 0 100 1048576 64 18446744073709551615\n"))
	f.Add([]byte("1 (init) S 0 1 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseStat(data)
		if err == nil && p.pid <= 0 {
			t.Fatalf("accepted pid %d", p.pid)
		}
		parseIO(data)
	})
}
