// Package depend parses job dependencies as sbatch --dependency gives them
// and decides, from the jobs they name, whether they are satisfied, still
// waiting or can never be satisfied, as slurmctld's test_job_dependency
// does. It is pure: the controller and the simulator call it with their
// own view of the jobs.
package depend

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/job"
)

// Type is a dependency type.
type Type string

// Dependency types Slurm accepts (afterburstbuffer is refused: Drover has
// no burst buffers).
const (
	After      Type = "after"
	AfterAny   Type = "afterany"
	AfterOK    Type = "afterok"
	AfterNotOK Type = "afternotok"
	AfterCorr  Type = "aftercorr"
	Singleton  Type = "singleton"
)

// Cond is one condition on one job (or array task).
type Cond struct {
	Type  Type
	JobID job.ID
	// Task is an array task (afterok:12_3), job.NoTask for the whole job.
	Task uint32
	// Delay is after's "+time": the job may start that long after the
	// other started.
	Delay time.Duration
}

// Spec is a parsed dependency list: every condition must hold (",") or
// any one of them (Or, "?").
type Spec struct {
	Conds []Cond
	Or    bool
}

// ErrSyntax is wrapped by every parse failure.
var ErrSyntax = errors.New("invalid dependency")

// MaxConds bounds the conditions one specification may carry.
const MaxConds = 1000

// Parse reads a --dependency value: "afterok:12:13,afterany:14",
// "afterok:12?afternotok:13", "after:12+10", "afterok:12_3", "singleton".
// An empty value is no dependency.
func Parse(s string) (Spec, error) {
	var spec Spec
	if s == "" {
		return spec, nil
	}
	sep := ","
	if strings.Contains(s, "?") {
		if strings.Contains(s, ",") {
			return Spec{}, fmt.Errorf("%w %q: \",\" and \"?\" cannot be mixed", ErrSyntax, s)
		}
		sep, spec.Or = "?", true
	}
	for _, part := range strings.Split(s, sep) {
		typ, ids, _ := strings.Cut(part, ":")
		t := Type(strings.ToLower(typ))
		switch t {
		case Singleton:
			if ids != "" {
				return Spec{}, fmt.Errorf("%w %q: singleton takes no job id", ErrSyntax, part)
			}
			spec.Conds = append(spec.Conds, Cond{Type: Singleton, Task: job.NoTask})
			continue
		case After, AfterAny, AfterOK, AfterNotOK, AfterCorr:
		case "afterburstbuffer":
			return Spec{}, fmt.Errorf("%w %q: burst buffers are not supported", ErrSyntax, part)
		default:
			return Spec{}, fmt.Errorf("%w %q: unknown dependency type %q", ErrSyntax, part, typ)
		}
		if ids == "" {
			return Spec{}, fmt.Errorf("%w %q: no job id", ErrSyntax, part)
		}
		for _, id := range strings.Split(ids, ":") {
			c, err := parseCond(t, id)
			if err != nil {
				return Spec{}, fmt.Errorf("%w %q: %v", ErrSyntax, part, err)
			}
			spec.Conds = append(spec.Conds, c)
			if len(spec.Conds) > MaxConds {
				return Spec{}, fmt.Errorf("%w: more than %d conditions", ErrSyntax, MaxConds)
			}
		}
	}
	return spec, nil
}

func parseCond(t Type, s string) (Cond, error) {
	c := Cond{Type: t, Task: job.NoTask}
	if id, delay, ok := strings.Cut(s, "+"); ok {
		if t != After {
			return c, fmt.Errorf("a +time offset is only allowed with after")
		}
		m, err := strconv.ParseUint(delay, 10, 32)
		if err != nil {
			return c, fmt.Errorf("invalid time offset %q", delay)
		}
		c.Delay = time.Duration(m) * time.Minute
		s = id
	}
	id, task, isTask := strings.Cut(s, "_")
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil || n == 0 {
		return c, fmt.Errorf("invalid job id %q", s)
	}
	c.JobID = job.ID(n)
	if isTask {
		if task == "*" {
			return c, nil
		}
		t, err := strconv.ParseUint(task, 10, 32)
		if err != nil || uint32(t) >= job.NoTask {
			return c, fmt.Errorf("invalid array task %q", s)
		}
		c.Task = uint32(t)
	}
	return c, nil
}

// String writes the specification back in sbatch's syntax.
func (s Spec) String() string {
	sep := ","
	if s.Or {
		sep = "?"
	}
	parts := make([]string, 0, len(s.Conds))
	for _, c := range s.Conds {
		parts = append(parts, c.String())
	}
	return strings.Join(parts, sep)
}

// String writes one condition ("afterok:12_3", "after:12+10").
func (c Cond) String() string {
	if c.Type == Singleton {
		return string(Singleton)
	}
	s := string(c.Type) + ":" + strconv.FormatUint(uint64(c.JobID), 10)
	if c.Task != job.NoTask {
		s += "_" + strconv.FormatUint(uint64(c.Task), 10)
	}
	if c.Delay > 0 {
		s += "+" + strconv.FormatInt(int64(c.Delay/time.Minute), 10)
	}
	return s
}

// Status is where a dependency stands.
type Status int

// Statuses.
const (
	Satisfied Status = iota
	Waiting
	Never
)

// Jobs is what Evaluate needs to know of other jobs.
type Jobs interface {
	// Records returns the records that make up job id (a job, or an
	// array's task records and its meta-record of pending tasks), or
	// those of one task; ok is false when the controller no longer knows
	// the job, which satisfies a condition on it, as in slurmctld.
	Records(id job.ID, task uint32) (recs []*job.Job, ok bool)
	// SingletonBlocked reports whether another job of j's user and name
	// runs, or waits ahead of j.
	SingletonBlocked(j *job.Job) bool
}

// Evaluate decides the dependency of job j at now.
func Evaluate(spec Spec, j *job.Job, jobs Jobs, now time.Time) Status {
	st, _ := Assess(spec, j, jobs, now)
	return st
}

func evaluate(c Cond, j *job.Job, jobs Jobs, now time.Time) Status {
	if c.Type == Singleton {
		if jobs.SingletonBlocked(j) {
			return Waiting
		}
		return Satisfied
	}
	task := c.Task
	if c.Type == AfterCorr && task == job.NoTask && j.IsArray() && !j.IsArrayMeta() {
		// Each task waits for the task of the same index.
		task = j.ArrayTaskID
	}
	recs, ok := jobs.Records(c.JobID, task)
	if !ok {
		return Satisfied
	}
	status := Satisfied
	for _, r := range recs {
		st := evaluateRecord(c.Type, c.Delay, r, now)
		if st == Never {
			return Never
		}
		if st == Waiting {
			status = Waiting
		}
	}
	return status
}

func evaluateRecord(t Type, delay time.Duration, r *job.Job, now time.Time) Status {
	ended := r.State.Terminal() && !r.Completing
	switch t {
	case After:
		switch {
		case r.State == job.Pending:
			return Waiting
		case r.State.Terminal() && r.StartTime.IsZero():
			return Satisfied // cancelled before it started
		case now.Before(r.StartTime.Add(delay)):
			return Waiting
		}
		return Satisfied
	case AfterAny:
		if ended {
			return Satisfied
		}
		return Waiting
	case AfterOK, AfterCorr:
		switch {
		case !ended:
			return Waiting
		case r.State == job.Completed:
			return Satisfied
		}
		return Never
	case AfterNotOK:
		switch {
		case !ended:
			return Waiting
		case r.State == job.Completed:
			return Never
		}
		return Satisfied
	}
	return Never
}

// Assess decides the dependency of job j at now, and writes it as squeue
// %E and scontrol show Slurm's: the conditions not yet satisfied, each
// with "(unfulfilled)" or "(failed)", array jobs as "N_*"; "" once nothing
// is left, or when a "?" list has a satisfied condition. A "," list holds
// when all its conditions do and never when one never will; a "?" list
// the other way round.
func Assess(spec Spec, j *job.Job, jobs Jobs, now time.Time) (Status, string) {
	if len(spec.Conds) == 0 {
		return Satisfied, ""
	}
	sep, status := ",", Satisfied
	if spec.Or {
		sep, status = "?", Never
	}
	var b strings.Builder
	for _, c := range spec.Conds {
		st := evaluate(c, j, jobs, now)
		switch {
		case st == Satisfied && spec.Or:
			return Satisfied, ""
		case st == Satisfied:
			continue
		case st == Waiting && (spec.Or || status != Never):
			status = Waiting
		case st == Never && !spec.Or:
			status = Never
		}
		if b.Len() > 0 {
			b.WriteString(sep)
		}
		b.WriteString(c.describe(jobs))
		if st == Never {
			b.WriteString("(failed)")
		} else {
			b.WriteString("(unfulfilled)")
		}
	}
	return status, b.String()
}

// Unevaluated writes the dependency as Slurm shows it before it was
// evaluated: every condition unfulfilled.
func Unevaluated(spec Spec) string {
	sep := ","
	if spec.Or {
		sep = "?"
	}
	parts := make([]string, 0, len(spec.Conds))
	for _, c := range spec.Conds {
		parts = append(parts, c.String()+"(unfulfilled)")
	}
	return strings.Join(parts, sep)
}

// describe is String with "_*" for a whole array job.
func (c Cond) describe(jobs Jobs) string {
	if c.Type == Singleton || c.Task != job.NoTask || jobs == nil {
		return c.String()
	}
	recs, ok := jobs.Records(c.JobID, job.NoTask)
	if !ok || len(recs) == 0 || !recs[0].IsArray() {
		return c.String()
	}
	s := string(c.Type) + ":" + strconv.FormatUint(uint64(c.JobID), 10) + "_*"
	if c.Delay > 0 {
		s += "+" + strconv.FormatInt(int64(c.Delay/time.Minute), 10)
	}
	return s
}
