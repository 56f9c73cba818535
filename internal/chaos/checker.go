// Package chaos holds what the fault-injection suite records and checks:
// a history of what concurrent clients asked and were told while a
// nemesis broke the controllers, what the jobs themselves wrote when
// they ran, and a checker that compares both with what the cluster holds
// at the end. The promises checked are the ones an admin of replicated
// controllers relies on: every acknowledged submission exists exactly
// once, no job was lost, job ids never repeat, no job ran twice at the
// same time, and a cancelled job never runs.
package chaos

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Kind is what a client asked.
type Kind string

// The operations the suite's clients make.
const (
	Submit Kind = "submit"
	Cancel Kind = "cancel"
	List   Kind = "list"
)

// Outcome is what a client was told.
type Outcome int

const (
	// OK: acknowledged (a job id for a submission).
	OK Outcome = iota
	// Unknown: failed in a way that leaves open whether it was applied
	// (a command that exits non-zero after a timeout, say). The checker
	// allows either.
	Unknown
)

// Op is one operation of one client.
type Op struct {
	Kind   Kind
	Client int
	// Tag names a submission uniquely (the job's name), so that the
	// job it made can be found whatever id it got.
	Tag string
	// JobID is the id a submission was told, or the one a cancel named.
	JobID              uint32
	Invoked, Completed time.Time
	Outcome            Outcome
	Err                string
}

// History collects operations from concurrent clients.
type History struct {
	mu  sync.Mutex
	ops []Op
}

// Add records an operation.
func (h *History) Add(op Op) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// Ops returns the operations recorded so far.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

// Job is a job as the cluster holds it at the end.
type Job struct {
	ID    uint32
	Name  string
	State string
}

// Mark is a line a job wrote as it ran: "start ID HOST UNIXNANO",
// "end ID HOST UNIXNANO", or "double ID HOST UNIXNANO" when it found
// another run of itself holding its lock.
type Mark struct {
	Event string
	JobID uint32
	Host  string
	At    time.Time
}

// ParseMarks reads the marks jobs appended to a file.
func ParseMarks(r io.Reader) ([]Mark, error) {
	var out []Mark
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("marks line %d: %q: want EVENT JOBID HOST UNIXNANO", line, sc.Text())
		}
		switch f[0] {
		case "start", "end", "double":
		default:
			return nil, fmt.Errorf("marks line %d: unknown event %q", line, f[0])
		}
		id, err := strconv.ParseUint(f[1], 10, 32)
		if err != nil {
			return nil, fmt.Errorf("marks line %d: job id %q: %v", line, f[1], err)
		}
		ns, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("marks line %d: time %q: %v", line, f[3], err)
		}
		out = append(out, Mark{Event: f[0], JobID: uint32(id), Host: f[2], At: time.Unix(0, ns)})
	}
	return out, sc.Err()
}

// JobScript is the batch script the suite submits: it holds a lock of
// its job's own while it runs (flock(1) on a shared folder; the lock
// goes with the processes, however they end), writes its marks, and
// runs for secs seconds.
func JobScript(marks string, secs int) string {
	return fmt.Sprintf(`#!/bin/sh
m=%[1]s/marks
now() { date +%%s%%N; }
exec 9>%[1]s/lock.$SLURM_JOB_ID
if ! flock -n 9; then echo "double $SLURM_JOB_ID $(hostname) $(now)" >> $m; exit 1; fi
echo "start $SLURM_JOB_ID $(hostname) $(now)" >> $m
sleep %[2]d
echo "end $SLURM_JOB_ID $(hostname) $(now)" >> $m
`, marks, secs)
}

// Verdict is what the checker found.
type Verdict struct {
	Submitted, Acknowledged, Unknown int
	Cancelled                        int
	Runs                             int
	Violations                       []string
}

// OK reports whether no promise was broken.
func (v Verdict) OK() bool { return len(v.Violations) == 0 }

func (v Verdict) String() string {
	s := fmt.Sprintf("%d submissions (%d acknowledged, %d unknown), %d cancels acknowledged, %d runs: ", v.Submitted, v.Acknowledged, v.Unknown, v.Cancelled, v.Runs)
	if v.OK() {
		return s + "no violation"
	}
	return s + fmt.Sprintf("%d violations:\n  %s", len(v.Violations), strings.Join(v.Violations, "\n  "))
}

// Check compares the history and the marks with the jobs the cluster
// holds at the end.
func Check(ops []Op, final []Job, marks []Mark) Verdict {
	var v Verdict
	bad := func(format string, args ...any) { v.Violations = append(v.Violations, fmt.Sprintf(format, args...)) }
	byName := map[string][]Job{}
	byID := map[uint32]Job{}
	for _, j := range final {
		byName[j.Name] = append(byName[j.Name], j)
		if prev, dup := byID[j.ID]; dup {
			bad("job id %d held twice: %q and %q", j.ID, prev.Name, j.Name)
		}
		byID[j.ID] = j
	}
	ackedID := map[uint32]string{}
	tags := map[string]bool{}
	for _, op := range ops {
		if op.Kind != Submit {
			continue
		}
		v.Submitted++
		tags[op.Tag] = true
		jobs := byName[op.Tag]
		if len(jobs) > 1 {
			bad("submission %s made %d jobs: %v", op.Tag, len(jobs), jobs)
		}
		if op.Outcome != OK {
			v.Unknown++
			continue
		}
		v.Acknowledged++
		if prev, dup := ackedID[op.JobID]; dup {
			bad("job id %d acknowledged for %s and %s", op.JobID, prev, op.Tag)
		}
		ackedID[op.JobID] = op.Tag
		switch j, ok := byID[op.JobID]; {
		case !ok:
			bad("acknowledged job %d (%s) is lost", op.JobID, op.Tag)
		case j.Name != op.Tag:
			bad("acknowledged job %d is %q in the cluster, was submitted as %q", op.JobID, j.Name, op.Tag)
		}
	}
	for name, jobs := range byName {
		if !tags[name] {
			bad("the cluster holds %d job(s) named %q that no client submitted", len(jobs), name)
		}
	}
	// Runs: a double is a run that found another holding the job's lock.
	starts := map[uint32][]time.Time{}
	for _, m := range marks {
		switch m.Event {
		case "start":
			v.Runs++
			starts[m.JobID] = append(starts[m.JobID], m.At)
		case "double":
			bad("job %d started on %s at %s while another run of it held its lock", m.JobID, m.Host, m.At.Format(time.RFC3339Nano))
		}
		if _, ok := byID[m.JobID]; !ok {
			bad("job %d ran (%s on %s) but the cluster does not hold it", m.JobID, m.Event, m.Host)
		}
	}
	for _, op := range ops {
		if op.Kind != Cancel || op.Outcome != OK {
			continue
		}
		v.Cancelled++
		for _, at := range starts[op.JobID] {
			if at.After(op.Completed) {
				bad("job %d started at %s after its cancel was acknowledged at %s", op.JobID, at.Format(time.RFC3339Nano), op.Completed.Format(time.RFC3339Nano))
			}
		}
	}
	sort.Strings(v.Violations)
	return v
}
