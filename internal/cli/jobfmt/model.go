package jobfmt

import "github.com/droverhq/drover/internal/cli/readmodel"

// The formats print the read model's job record: squeue fills one per
// streamed record and scontrol reads the same, so a field means the same
// in both. These are its names inside this package, as the printers use
// them; other packages name readmodel's.
type (
	// Job is readmodel.Job.
	Job = readmodel.Job
	// State is readmodel.State.
	State = readmodel.State
	// ExitCode is readmodel.ExitCode.
	ExitCode = readmodel.ExitCode
)

// Slurm's sentinels, as the read model keeps them.
const (
	NoVal      = readmodel.NoVal
	Infinite   = readmodel.Infinite
	NoVal16    = readmodel.NoVal16
	Infinite16 = readmodel.Infinite16
)

// The job states and flags the printers test.
const (
	StatePending     = readmodel.StatePending
	StateRunning     = readmodel.StateRunning
	StateSuspended   = readmodel.StateSuspended
	StateCompleted   = readmodel.StateCompleted
	StateFailed      = readmodel.StateFailed
	StateTimeout     = readmodel.StateTimeout
	StateDeadline    = readmodel.StateDeadline
	StateOutOfMemory = readmodel.StateOutOfMemory
	FlagCompleting   = readmodel.FlagCompleting
	coreSpecThread   = readmodel.CoreSpecThread
)

// zeroIfUnset prints NO_VAL as 0, as squeue prints the counters the
// model keeps unset (num_tasks of a job that asked for none).
func zeroIfUnset(v uint32) uint32 {
	if v == NoVal {
		return 0
	}
	return v
}
