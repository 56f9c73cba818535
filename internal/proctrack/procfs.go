//go:build linux

package proctrack

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// procRoot is where the process table is read; tests never change it, but
// keeping it in one place documents the dependency on procfs.
const procRoot = "/proc"

// procStat is the part of /proc/<pid>/stat that process tracking needs:
// identity, state and the ancestry and grouping fields.
type procStat struct {
	PID     int
	Comm    string
	State   byte
	PPID    int
	PGRP    int
	Session int
}

// dead reports whether the process has exited and only waits to be reaped
// (zombie) or is being torn down: such a process can no longer run code,
// ignores signals and must not keep a job alive.
func (p procStat) dead() bool {
	return p.State == 'Z' || p.State == 'X' || p.State == 'x'
}

// errProcStat is wrapped by every parse failure of a stat line.
var errProcStat = errors.New("malformed /proc stat line")

// parseProcStat parses the first six fields of a /proc/<pid>/stat line:
// "pid (comm) state ppid pgrp session ...". The command name may hold any
// byte, spaces and parentheses included, so it is delimited by the first
// "(" and the last ")", as proc(5) advises.
func parseProcStat(data []byte) (procStat, error) {
	open := bytes.IndexByte(data, '(')
	end := bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("%w: no command name in %q", errProcStat, truncate(data))
	}
	pid, err := parseID(bytes.TrimSpace(data[:open]))
	if err != nil {
		return procStat{}, fmt.Errorf("%w: pid: %w", errProcStat, err)
	}
	fields := bytes.Fields(data[end+1:])
	if len(fields) < 4 {
		return procStat{}, fmt.Errorf("%w: %d fields after the command name, want at least 4", errProcStat, len(fields))
	}
	if len(fields[0]) != 1 {
		return procStat{}, fmt.Errorf("%w: state %q", errProcStat, fields[0])
	}
	var ids [3]int
	for i, name := range []string{"ppid", "pgrp", "session"} {
		if ids[i], err = parseID(fields[i+1]); err != nil {
			return procStat{}, fmt.Errorf("%w: %s: %w", errProcStat, name, err)
		}
	}
	return procStat{
		PID:     pid,
		Comm:    string(data[open+1 : end]),
		State:   fields[0][0],
		PPID:    ids[0],
		PGRP:    ids[1],
		Session: ids[2],
	}, nil
}

// formatProcStat writes the leading fields of a stat line the way the
// kernel does; the fuzz target uses it to check that parsing round-trips.
func formatProcStat(p procStat) []byte {
	b := fmt.Appendf(nil, "%d (%s) ", p.PID, p.Comm)
	b = append(b, p.State) // the raw byte: %c would UTF-8 encode it
	return fmt.Appendf(b, " %d %d %d 0 -1 4194560\n", p.PPID, p.PGRP, p.Session)
}

// parseID parses a non-negative decimal process, group or session id.
func parseID(b []byte) (int, error) {
	if len(b) == 0 || b[0] == '+' || b[0] == '-' {
		return 0, fmt.Errorf("invalid id %q", b)
	}
	n, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("invalid id %q: %w", b, err)
	}
	return int(n), nil
}

func truncate(b []byte) []byte {
	if len(b) > 64 {
		return b[:64]
	}
	return b
}

// scanProcs reads the stat line of every process on the machine. Processes
// that exit while the table is read are skipped: their absence is the
// answer a caller wants.
func scanProcs() ([]procStat, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("read process table: %w", err)
	}
	procs := make([]procStat, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		data, err := os.ReadFile(filepath.Join(procRoot, name, "stat"))
		if err != nil {
			continue // exited meanwhile, or hidden from us
		}
		p, err := parseProcStat(data)
		if err != nil {
			return nil, fmt.Errorf("read process %s: %w", name, err)
		}
		procs = append(procs, p)
	}
	return procs, nil
}

// treeMembers returns the live processes that belong to a job tracked by
// process group: every member of the groups pgids, and every descendant of such a
// member, so that a child that called setsid(2) is still found while its
// parent lives (what Slurm's proctrack/linuxproc adds to proctrack/pgid). A
// process that left the group and was reparented to init is out of reach:
// only a cgroup can follow it. self is never included. The result is
// sorted.
func treeMembers(procs []procStat, pgids []int, self int) []int {
	children := make(map[int][]procStat, len(procs))
	var queue []procStat
	for _, p := range procs {
		children[p.PPID] = append(children[p.PPID], p)
		if slices.Contains(pgids, p.PGRP) {
			queue = append(queue, p)
		}
	}
	seen := make(map[int]bool, len(queue))
	var pids []int
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if seen[p.PID] {
			continue
		}
		seen[p.PID] = true
		if p.PID != self && !p.dead() {
			pids = append(pids, p.PID)
		}
		queue = append(queue, children[p.PID]...)
	}
	slices.Sort(pids)
	return pids
}
