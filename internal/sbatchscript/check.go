// Package sbatchscript reads batch scripts the way sbatch does: it checks
// that a script is something slurmctld will accept (Check) and extracts the
// options of its "#SBATCH" directives (Scan, Directives).
//
// The rules are re-implemented from sbatch's documented and observed
// behaviour (Slurm 25.11): only the comment block at the top of the script is
// read, a directive is "#SBATCH" at the very start of a line followed by
// options split like a shell would split them, quotes group words, a
// backslash escapes the next character and an unquoted '#' starts a comment.
package sbatchscript

import (
	"bytes"
	"strings"
)

// ScriptError is a reason sbatch refuses a script before submitting it. Its
// Lines are the messages sbatch prints, one "sbatch: error: " line each; the
// fixed values below are the only ones Check returns, so callers can compare
// with errors.Is or ==.
type ScriptError struct {
	lines []string
}

// Lines returns the message lines, without the "sbatch: error: " prefix.
func (e *ScriptError) Lines() []string {
	return append([]string(nil), e.lines...)
}

// Error joins the lines with a space, for logs.
func (e *ScriptError) Error() string {
	return strings.Join(e.lines, " ")
}

// The refusals of Check, worded as sbatch prints them.
var (
	// ErrEmpty is returned for a script of zero bytes.
	ErrEmpty = &ScriptError{lines: []string{"Batch script is empty!"}}
	// ErrWhitespace is returned for a script made only of blanks.
	ErrWhitespace = &ScriptError{lines: []string{"Batch script contains only whitespace!"}}
	// ErrNoShebang is returned when the script does not start with "#!".
	ErrNoShebang = &ScriptError{lines: []string{
		"This does not look like a batch script.  The first",
		"line must start with #! followed by the path to an interpreter.",
		"For instance: #!/bin/sh",
	}}
	// ErrNUL is returned for a script holding a NUL byte, which slurmctld
	// cannot store (it keeps scripts as C strings).
	ErrNUL = &ScriptError{lines: []string{
		"The Slurm controller does not allow scripts that",
		"contain a NULL character '\\0'.",
	}}
	// ErrDOSLineBreaks is returned for a script with "\r\n" line ends, which
	// would make the interpreter see a stray '\r' on every line.
	ErrDOSLineBreaks = &ScriptError{lines: []string{
		"Batch script contains DOS line breaks (\\r\\n)",
		"instead of expected UNIX line breaks (\\n).",
	}}
)

// Check applies sbatch's sanity checks to a whole script, in sbatch's
// order: empty, only whitespace, no "#!" on the first line, a NUL byte, DOS
// line breaks. It returns nil or one of the ScriptError values above.
func Check(script []byte) error {
	switch {
	case len(script) == 0:
		return ErrEmpty
	case isBlank(script):
		return ErrWhitespace
	case !bytes.HasPrefix(script, []byte("#!")):
		return ErrNoShebang
	case bytes.IndexByte(script, 0) >= 0:
		return ErrNUL
	case bytes.Contains(script, []byte("\r\n")):
		return ErrDOSLineBreaks
	}
	return nil
}

// isBlank reports whether script holds only C-locale white space. As sbatch
// looks at the script as a C string, a NUL ends it.
func isBlank(script []byte) bool {
	for _, c := range script {
		if c == 0 {
			break
		}
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// isSpace is C's isspace in the "C" locale.
func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}
