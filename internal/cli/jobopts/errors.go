package jobopts

import (
	"fmt"
	"strings"
)

// Exit ends a command early: an option error to print, or the output of
// --help, --usage or --version. Stdout and Stderr are complete, with the
// program name and trailing newlines; Code is the exit status.
type Exit struct {
	Code   int
	Stdout string
	Stderr string
}

// Error implements error with the stderr text.
func (e *Exit) Error() string {
	if e.Stderr != "" {
		return strings.TrimRight(e.Stderr, "\n")
	}
	return fmt.Sprintf("exit %d", e.Code)
}

// Exit statuses Slurm's commands use for option problems.
const (
	// ExitOptionError is exit(-1): an unknown option or an invalid value.
	ExitOptionError = 255
	// ExitFatal is what fatal() and parse_int's failures exit with.
	ExitFatal = 1
)

// failure is an option error before the program name is known to it: the
// lines Slurm logs ("error: ...", or getopt's text) and how it exits.
type failure struct {
	lines []string
	code  int
	// errorExit defers the code to the command's SLURM_EXIT_ERROR.
	errorExit bool
	// stdout is printed before exiting (srun's --cpu-bind=help text).
	stdout string
}

func (f *failure) Error() string { return strings.Join(f.lines, "; ") }

// optErrorf is error() followed by exit(-1), the fate of an invalid option
// value.
func optErrorf(format string, args ...any) *failure {
	return &failure{lines: []string{"error: " + fmt.Sprintf(format, args...)}, code: ExitOptionError}
}

// fatalf is fatal(): exit status 1.
func fatalf(format string, args ...any) *failure {
	return &failure{lines: []string{"fatal: " + fmt.Sprintf(format, args...)}, code: ExitFatal}
}

// intErrorf is error() followed by exit(1), as parse_int does.
func intErrorf(format string, args ...any) *failure {
	return &failure{lines: []string{"error: " + fmt.Sprintf(format, args...)}, code: ExitFatal}
}

// verifyErrorf is an error found when checking the options as a whole; the
// command exits with its error exit code (SLURM_EXIT_ERROR, default 1).
func verifyErrorf(format string, args ...any) *failure {
	return &failure{lines: []string{"error: " + fmt.Sprintf(format, args...)}, errorExit: true}
}

// unsupportedf refuses an option Slurm has but Drover does not implement,
// clearly rather than by ignoring it.
func unsupportedf(format string, args ...any) *failure {
	return optErrorf(format+" is not supported by Drover", args...)
}
