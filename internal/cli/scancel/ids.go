package scancel

import (
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/cstrconv"
	"github.com/droverhq/drover/internal/hostlist"
)

// AllTasks is the task id of a "123_*" target: every task of the array
// (Slurm's INFINITE).
const AllTasks = readmodel.Infinite

// Target is one job (or array task, or step) named on scancel's command
// line.
type Target struct {
	JobID uint32
	// Task is the array task id, readmodel.NoVal for none, AllTasks for
	// "_*".
	Task uint32
	// Step is the step id when HasStep.
	Step    uint32
	HasStep bool
}

// String prints the target as scancel's messages do: "123", "123_4",
// "123_*", with ".step" when there is one.
func (t Target) String() string {
	s := strconv.FormatUint(uint64(t.JobID), 10)
	switch t.Task {
	case readmodel.NoVal:
	case AllTasks:
		s += "_*"
	default:
		s += "_" + strconv.FormatUint(uint64(t.Task), 10)
	}
	if t.HasStep {
		s += "." + strconv.FormatUint(uint64(t.Step), 10)
	}
	return s
}

// ParseTargets reads scancel's job operands as its _xlate_job_step_ids
// does. Each operand is "job[_task|_[tasks]|_*|+offset][.step]", and
// comma-separated lists split into several operands ("1,2_3"). Numbers are
// read as strtol(3) reads them, so "12_" is task 0 of job 12. It returns
// the targets, the operand strings as they will be sent to the controller
// (task ranges stay whole: "7_[1-3]"). The error is an *InvalidTargetError
// for the first operand that is not a valid job id.
func ParseTargets(args []string) (targets []Target, operands []string, err error) {
	queue := append([]string(nil), args...)
	for i := 0; i < len(queue); i++ {
		arg := queue[i]
		jobID, rest := strtol(arg)
		if jobID <= 0 || jobID > 0xffffffff {
			return nil, nil, &InvalidTargetError{Arg: arg}
		}
		t := Target{JobID: uint32(jobID), Task: readmodel.NoVal}
		switch {
		case strings.HasPrefix(rest, "_["):
			tasks, ok := bracketTasks(rest[1:])
			if !ok {
				return nil, nil, &InvalidTargetError{Arg: arg}
			}
			for _, task := range tasks {
				targets = append(targets, Target{JobID: t.JobID, Task: task})
			}
			operands = append(operands, arg)
			// A task range takes neither a step nor a list after it.
			continue
		case strings.HasPrefix(rest, "_*"):
			t.Task = AllTasks
			rest = rest[2:]
		case strings.HasPrefix(rest, "_"):
			var task int64
			task, rest = strtol(rest[1:])
			if task < 0 || task >= int64(readmodel.NoVal) {
				return nil, nil, &InvalidTargetError{Arg: arg}
			}
			t.Task = uint32(task)
		case strings.HasPrefix(rest, "+"):
			// A hetjob component: Slurm checks the offset and then
			// addresses the whole hetjob.
			var off int64
			off, rest = strtol(rest[1:])
			if off < 0 {
				return nil, nil, &InvalidTargetError{Arg: arg}
			}
		}
		if strings.HasPrefix(rest, ".") {
			var step int64
			step, rest = strtol(rest[1:])
			if step < 0 || step > 0xffffffff {
				return nil, nil, &InvalidTargetError{Arg: arg}
			}
			t.Step, t.HasStep = uint32(step), true
		}
		switch {
		case strings.HasPrefix(rest, ","):
			// The list's tail becomes the next operand; this one ends here.
			queue = append(queue[:i+1], append([]string{rest[1:]}, queue[i+1:]...)...)
			arg = arg[:len(arg)-len(rest)]
		case rest != "":
			return nil, nil, &InvalidTargetError{Arg: arg}
		}
		targets = append(targets, t)
		operands = append(operands, arg)
	}
	return targets, operands, nil
}

// InvalidTargetError reports an operand scancel cannot read as a job id.
type InvalidTargetError struct {
	// Arg is the operand, or the part of a comma list, that failed.
	Arg string
}

// Error words the problem as scancel does.
func (e *InvalidTargetError) Error() string { return "Invalid job id " + e.Arg }

// bracketTasks expands "[1-3,5]" (which must end the operand) with
// hostlist syntax, as scancel does.
func bracketTasks(s string) ([]uint32, bool) {
	end := strings.IndexByte(s, ']')
	if end < 0 || end != len(s)-1 {
		return nil, false
	}
	elems, err := hostlist.Expand(s)
	if err != nil || len(elems) == 0 {
		return nil, false
	}
	out := make([]uint32, 0, len(elems))
	for _, e := range elems {
		n, _ := strtol(e)
		if n < 0 || n >= int64(readmodel.NoVal) {
			return nil, false
		}
		out = append(out, uint32(n))
	}
	return out, true
}

// strtol reads a decimal prefix as strtol(3) does (cstrconv.Strtol).
func strtol(s string) (int64, string) { return cstrconv.Strtol(s) }
