package layout

import (
	"fmt"
	"strings"

	"github.com/droverhq/drover/internal/slurmerr"
)

// Slurm error numbers a step can be refused with that internal/slurmerr
// does not carry (slurm_errno.h, 22.05 numbering).
const (
	// CodeBadDist is ESLURM_BAD_DIST: slurmctld's step_create refuses a
	// distribution it does not know.
	CodeBadDist slurmerr.Code = 2023
	// CodeBadTaskCount is ESLURM_BAD_TASK_COUNT: more tasks than
	// MaxTasksPerNode on every step node (step_create).
	CodeBadTaskCount slurmerr.Code = 2025
)

// localMessages are slurm_strerror's texts for the codes above.
var localMessages = map[slurmerr.Code]string{
	CodeBadDist:      "Task distribution specification invalid",
	CodeBadTaskCount: "Task count specification invalid",
}

// Message is slurm_strerror(code) for every code Place can return.
func Message(code slurmerr.Code) string {
	if m, ok := localMessages[code]; ok {
		return m
	}
	return code.Message()
}

// Error is a step Slurm would not lay out. Code is Slurm's error number when
// slurmctld refuses the step (srun then prints "srun: error: Unable to
// create step for job N: " and the message; ESLURM_NODES_BUSY is the one
// srun retries); it is zero when srun itself refuses before asking
// slurmctld, and exits 1. Lines are what srun prints, each after
// "srun: error: ", in order.
//
// Error unwraps to a *slurmerr.Error carrying Code, so slurmerr.CodeOf and
// errors.Is(err, slurmerr.Sentinel(code)) work on it.
type Error struct {
	Code  slurmerr.Code
	Lines []string
}

// Error implements error: the lines joined with "; ".
func (e *Error) Error() string { return strings.Join(e.Lines, "; ") }

// Unwrap returns the *slurmerr.Error for Code, or nil for srun's own
// refusals.
func (e *Error) Unwrap() error {
	if e.Code == slurmerr.NoError {
		return nil
	}
	return slurmerr.Sentinel(e.Code)
}

// ctldError is slurmctld refusing the step with code.
func ctldError(code slurmerr.Code) *Error {
	return &Error{Code: code, Lines: []string{Message(code)}}
}

// srunError is srun refusing the request before it reaches slurmctld.
func srunError(lines ...string) *Error {
	return &Error{Lines: lines}
}

func srunErrorf(format string, args ...any) *Error {
	return srunError(fmt.Sprintf(format, args...))
}
