// Package getopt gives the drop-in commands glibc's getopt_long command-line
// rules, which Slurm's commands are built on, on top of pflag: pflag refuses
// abbreviated long options, reads "-j123" as more flags when -j takes an
// optional argument, and words its errors differently.
//
// It offers two mechanisms, because the commands that use them were matched
// against Slurm with different parsers and must keep their exact behaviour:
//
//   - Normalize rewrites a whole argument vector into canonical tokens for
//     pflag and reports getopt's errors itself (squeue, scancel). It handles
//     abbreviations, grouped short options, optional arguments, options that
//     exist only as a letter (MarkShortOnly) and operand permutation.
//   - ExpandLong only expands abbreviated long options and leaves the rest to
//     pflag, whose errors Message then words as getopt does (sinfo, scontrol).
//
// Both report errors as *Error, and Message words any of them for stderr.
package getopt

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// Error is a command-line error worded as glibc's getopt_long words it,
// without the program name ("unrecognized option '--x'").
type Error struct{ msg string }

// Error returns getopt's message.
func (e *Error) Error() string { return e.msg }

// Message words err, returned by Normalize, ExpandLong or pflag's Parse, as
// glibc's getopt_long prints it: "prog: " and getopt's text, which Slurm's
// commands follow with their "Try ... --help" hint. Any other error, such
// as a flag's refusal of its value, follows the program name as it is.
func Message(prog string, err error) string {
	var ge *Error
	var ne *pflag.NotExistError
	var vr *pflag.ValueRequiredError
	var iv *pflag.InvalidValueError
	switch {
	case errors.As(err, &ge):
		return prog + ": " + ge.msg
	case errors.As(err, &ne):
		if ne.GetSpecifiedShortnames() != "" {
			return fmt.Sprintf("%s: invalid option -- '%s'", prog, ne.GetSpecifiedName())
		}
		return fmt.Sprintf("%s: unrecognized option '--%s'", prog, ne.GetSpecifiedName())
	case errors.As(err, &vr):
		if vr.GetSpecifiedShortnames() != "" {
			return fmt.Sprintf("%s: option requires an argument -- '%s'", prog, vr.GetSpecifiedName())
		}
		return fmt.Sprintf("%s: option '--%s' requires an argument", prog, vr.GetSpecifiedName())
	case errors.As(err, &iv) && iv.GetFlag().Value.Type() == "bool":
		// Only "--flag=value" reaches a boolean flag with a value.
		return fmt.Sprintf("%s: option '--%s' doesn't allow an argument", prog, iv.GetFlag().Name)
	}
	return fmt.Sprintf("%s: %v", prog, err)
}

// abbreviations returns the names that prefix abbreviates, in the order of
// names, and among them the first name of each distinct option: aliases maps
// an alternative name to the one it stands for, so that "--user" and
// "--users" count once, as getopt_long counts entries that share a
// behaviour.
func abbreviations(names []string, prefix string, aliases map[string]string) (matches, options []string) {
	seen := map[string]bool{}
	for _, n := range names {
		if !strings.HasPrefix(n, prefix) {
			continue
		}
		matches = append(matches, n)
		if id := canonical(n, aliases); !seen[id] {
			seen[id] = true
			options = append(options, n)
		}
	}
	return matches, options
}

// canonical is the option name stands for.
func canonical(name string, aliases map[string]string) string {
	if c, ok := aliases[name]; ok {
		return c
	}
	return name
}

// ambiguous is getopt's refusal of an abbreviation that fits several
// options, listing the possibilities in the order given.
func ambiguous(name string, possibilities []string) *Error {
	var b strings.Builder
	fmt.Fprintf(&b, "option '--%s' is ambiguous; possibilities:", name)
	for _, p := range possibilities {
		fmt.Fprintf(&b, " '--%s'", p)
	}
	return &Error{b.String()}
}
