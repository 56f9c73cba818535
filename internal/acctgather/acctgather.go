//go:build linux

// Package acctgather measures what the tasks of a step use while they
// run, as Slurm's jobacct_gather/linux plugin does: each task is the
// process tree its leader heads, read from /proc (CPU time, resident and
// virtual memory, major page faults, bytes read and written). Where the
// step has a cgroup its CPU counters cover the whole step on the node,
// processes that left the tree and children already reaped included, so
// a node's only task takes its CPU times from there (jobacct_gather/cgroup).
//
// Resident and virtual memory are levels, not counters: a sample sees
// them at one moment, so Peaks keeps the largest each task showed across
// the samples a node daemon takes every JobAcctGatherFrequency seconds and
// whenever sstat asks.
package acctgather

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"
)

// procRoot is where the process table is read.
const procRoot = "/proc"

// userHZ is the unit of the CPU times in /proc/<pid>/stat (USER_HZ, fixed
// at 100 on every Linux architecture Go supports).
const userHZ = 100

// pageSize converts stat's resident pages to bytes.
var pageSize = uint64(os.Getpagesize())

// Sample is what a task's processes use at one moment: CPU time spent
// (counters), memory held (levels), and the bytes they read and wrote
// (rchar and wchar, as Slurm reports MaxDiskRead and MaxDiskWrite).
type Sample struct {
	UserCPU, SystemCPU time.Duration
	RSS, VMSize        uint64
	// Pages is major page faults (Slurm's MaxPages).
	Pages               uint64
	DiskRead, DiskWrite uint64
	// Pids are the task's live processes, sorted (sstat -i).
	Pids []int
	// GPUMem is the device memory its processes hold (bytes), GPUUtil
	// the sum of the busy percentages of the GPUs they run on (Slurm's
	// gres/gpumem and gres/gpuutil); the GPU plugin measures them.
	GPUMem  uint64
	GPUUtil uint64
}

// Task is one task of a step on this node: its id in the step and the pid
// of its leader, which heads its own process group.
type Task struct {
	ID  int
	Pid int
}

// proc is one process as a sample reads it.
type proc struct {
	pid, ppid, pgrp int
	dead            bool
	// utime..cstime are in USER_HZ ticks; cutime and cstime are the
	// children it has reaped, whose own entries are gone.
	utime, stime, cutime, cstime uint64
	majflt                       uint64
	vsize, rssPages              uint64
}

// errStat is wrapped by every parse failure of a stat line.
var errStat = errors.New("malformed /proc stat line")

// parseStat reads the fields of a /proc/<pid>/stat line a sample needs.
// The command name may hold any byte, parentheses included, so the fields
// are counted from the last ")" as proc(5) advises.
func parseStat(data []byte) (proc, error) {
	open := bytes.IndexByte(data, '(')
	end := bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return proc{}, fmt.Errorf("%w: no command name", errStat)
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil || pid <= 0 {
		return proc{}, fmt.Errorf("%w: pid %q", errStat, bytes.TrimSpace(data[:open]))
	}
	f := bytes.Fields(data[end+1:])
	// After the name: state(0) ppid(1) pgrp(2) ... majflt(9) ...
	// utime(11) stime(12) cutime(13) cstime(14) ... vsize(20) rss(21).
	if len(f) < 22 || len(f[0]) != 1 {
		return proc{}, fmt.Errorf("%w: %d fields after the command name, want 22", errStat, len(f))
	}
	p := proc{pid: pid, dead: f[0][0] == 'Z' || f[0][0] == 'X' || f[0][0] == 'x'}
	ints := []*int{&p.ppid, &p.pgrp}
	for i, dst := range ints {
		if *dst, err = strconv.Atoi(string(f[1+i])); err != nil {
			return proc{}, fmt.Errorf("%w: field %d: %w", errStat, i+4, err)
		}
	}
	counters := map[int]*uint64{9: &p.majflt, 11: &p.utime, 12: &p.stime, 13: &p.cutime, 14: &p.cstime, 20: &p.vsize, 21: &p.rssPages}
	for i, dst := range counters {
		// cutime and cstime are signed in the kernel's format; a
		// negative value never happens in practice and reads as 0.
		v, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil {
			return proc{}, fmt.Errorf("%w: field %d: %w", errStat, i+3, err)
		}
		*dst = uint64(max(v, 0))
	}
	return p, nil
}

// parseIO reads rchar and wchar from /proc/<pid>/io.
func parseIO(data []byte) (read, write uint64) {
	for line := range bytes.SplitSeq(data, []byte{'\n'}) {
		k, v, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		n, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 10, 64)
		if err != nil {
			continue
		}
		switch string(k) {
		case "rchar":
			read = n
		case "wchar":
			write = n
		}
	}
	return read, write
}

// readProcs reads every process's stat line; those that exit meanwhile
// are skipped.
func readProcs() ([]proc, error) {
	entries, err := os.ReadDir(procRoot)
	if err != nil {
		return nil, fmt.Errorf("read process table: %w", err)
	}
	out := make([]proc, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		if name[0] < '0' || name[0] > '9' {
			continue
		}
		data, err := os.ReadFile(filepath.Join(procRoot, name, "stat"))
		if err != nil {
			continue
		}
		p, err := parseStat(data)
		if err != nil {
			return nil, fmt.Errorf("read process %s: %w", name, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// Measure samples each task: the members of its leader's process group
// and their descendants. inStep lists every process of the step's cgroup
// (nil without one): those no task's tree reaches (they called setsid and
// lost their parent) count for the first task, so that nothing the step
// runs goes unmeasured.
func Measure(tasks []Task, inStep []int) (map[int]Sample, error) {
	procs, err := readProcs()
	if err != nil {
		return nil, err
	}
	return measure(procs, tasks, inStep, readIO), nil
}

func readIO(pid int) (uint64, uint64) {
	data, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(pid), "io"))
	if err != nil {
		return 0, 0
	}
	return parseIO(data)
}

// measure is Measure on a process table already read.
func measure(procs []proc, tasks []Task, inStep []int, io func(int) (uint64, uint64)) map[int]Sample {
	byPid := make(map[int]*proc, len(procs))
	children := make(map[int][]int, len(procs))
	for i := range procs {
		p := &procs[i]
		byPid[p.pid] = p
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	owner := make(map[int]int, len(procs)) // pid -> task id
	leaders := make(map[int]int, len(tasks))
	for _, t := range tasks {
		leaders[t.Pid] = t.ID
	}
	// Members of a task's process group first, then their descendants.
	var queue []int
	for _, p := range procs {
		if id, ok := leaders[p.pgrp]; ok {
			owner[p.pid] = id
			queue = append(queue, p.pid)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		for _, c := range children[pid] {
			if _, seen := owner[c]; !seen {
				owner[c] = owner[pid]
				queue = append(queue, c)
			}
		}
	}
	if len(tasks) > 0 {
		first := slices.MinFunc(tasks, func(a, b Task) int { return a.ID - b.ID }).ID
		for _, pid := range inStep {
			if _, ok := owner[pid]; !ok && byPid[pid] != nil {
				owner[pid] = first
			}
		}
	}
	out := make(map[int]Sample, len(tasks))
	for _, t := range tasks {
		out[t.ID] = Sample{}
	}
	for pid, id := range owner {
		p := byPid[pid]
		s := out[id]
		s.UserCPU += ticks(p.utime + p.cutime)
		s.SystemCPU += ticks(p.stime + p.cstime)
		if !p.dead {
			s.RSS += p.rssPages * pageSize
			s.VMSize += p.vsize
			s.Pids = append(s.Pids, pid)
		}
		s.Pages += p.majflt
		r, w := io(pid)
		s.DiskRead += r
		s.DiskWrite += w
		out[id] = s
	}
	for id, s := range out {
		slices.Sort(s.Pids)
		out[id] = s
	}
	return out
}

func ticks(n uint64) time.Duration { return time.Duration(n) * time.Second / userHZ }

// Peaks keeps, per task, the largest memory and the highest counters its
// samples showed: a task's processes may end (and their counters vanish
// from /proc) before the task does. It is safe for concurrent use.
type Peaks struct {
	mu    sync.Mutex
	tasks map[int]Sample
}

// Add folds a sample of task id into its peaks and returns them.
func (p *Peaks) Add(id int, s Sample) Sample {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tasks == nil {
		p.tasks = map[int]Sample{}
	}
	m := p.tasks[id]
	m.UserCPU = max(m.UserCPU, s.UserCPU)
	m.SystemCPU = max(m.SystemCPU, s.SystemCPU)
	m.RSS = max(m.RSS, s.RSS)
	m.VMSize = max(m.VMSize, s.VMSize)
	m.Pages = max(m.Pages, s.Pages)
	m.DiskRead = max(m.DiskRead, s.DiskRead)
	m.DiskWrite = max(m.DiskWrite, s.DiskWrite)
	m.GPUMem = max(m.GPUMem, s.GPUMem)
	m.GPUUtil = max(m.GPUUtil, s.GPUUtil)
	m.Pids = s.Pids
	p.tasks[id] = m
	return m
}

// Get returns task id's peaks (zero if never sampled).
func (p *Peaks) Get(id int) Sample {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tasks[id]
}
