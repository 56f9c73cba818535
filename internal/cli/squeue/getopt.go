package squeue

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// optionalArg is the NoOptDefVal of flags whose argument is optional
// (getopt's "j::"): the callback sees it when the option came bare.
const optionalArg = "\x00"

// getoptError is a command-line error worded as glibc's getopt_long words
// it (without the program name).
type getoptError struct{ msg string }

func (e *getoptError) Error() string { return e.msg }

// internal/cli/scancel carries a copy of this file: both
// commands parse options with glibc's getopt_long rules on top of pflag.

// normalize rewrites args, written with GNU getopt_long conventions, into
// canonical "--name[=value]" tokens for pflag, followed by "--" and the
// operands. It implements what pflag does not: unique prefixes of long
// options ("--form" for "--format"), attached optional arguments ("-j123",
// where pflag would read "123" as more flags), and getopt's permutation of
// operands. aliases maps alternative long names to the one whose flag
// carries the callback (both must be defined), so that "--user" and
// "--users" do not make "--use" ambiguous.
//
// It stops at the first error, returning the tokens before it: getopt
// reports an error only when it reaches the bad option, after the options
// before it took effect.
func normalize(fs *pflag.FlagSet, args []string, aliases map[string]string) (tokens, operands []string, err *getoptError) {
	var longs []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !isShortOnly(f) {
			longs = append(longs, f.Name)
		}
	})
	sort.Strings(longs)
	canon := func(name string) string {
		if c, ok := aliases[name]; ok {
			return c
		}
		return name
	}
	emit := func(f *pflag.Flag, value string, has bool) {
		name := canon(f.Name)
		if has {
			tokens = append(tokens, "--"+name+"="+value)
		} else {
			tokens = append(tokens, "--"+name)
		}
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			operands = append(operands, args[i+1:]...)
			return tokens, operands, nil
		case strings.HasPrefix(a, "--"):
			name, value, hasValue := strings.Cut(a[2:], "=")
			f, gerr := lookupLong(fs, longs, name, canon)
			if gerr != nil {
				if gerr.msg == "" {
					gerr.msg = fmt.Sprintf("unrecognized option '%s'", a)
				}
				return tokens, operands, gerr
			}
			switch kind(f) {
			case argNone:
				if hasValue {
					return tokens, operands, &getoptError{fmt.Sprintf("option '--%s' doesn't allow an argument", f.Name)}
				}
				emit(f, "", false)
			case argOptional:
				emit(f, value, hasValue)
			default:
				if !hasValue {
					if i+1 >= len(args) {
						return tokens, operands, &getoptError{fmt.Sprintf("option '--%s' requires an argument", f.Name)}
					}
					i++
					value = args[i]
				}
				emit(f, value, true)
			}
		case len(a) > 1 && a[0] == '-':
			for k := 1; k < len(a); k++ {
				c := a[k]
				var f *pflag.Flag
				if c < 0x80 && c != '-' {
					// pflag panics on shorthands that are not one ASCII byte.
					f = fs.ShorthandLookup(string(rune(c)))
				}
				if f == nil {
					return tokens, operands, &getoptError{"invalid option -- '" + string([]byte{c}) + "'"}
				}
				rest := a[k+1:]
				switch kind(f) {
				case argNone:
					emit(f, "", false)
					continue
				case argOptional:
					emit(f, rest, rest != "")
				default:
					if rest == "" {
						if i+1 >= len(args) {
							return tokens, operands, &getoptError{"option requires an argument -- '" + string([]byte{c}) + "'"}
						}
						i++
						rest = args[i]
					}
					emit(f, rest, true)
				}
				break
			}
		default:
			operands = append(operands, a)
		}
	}
	return tokens, operands, nil
}

type argKind int

const (
	argRequired argKind = iota
	argNone
	argOptional
)

func kind(f *pflag.Flag) argKind {
	switch {
	case f.NoOptDefVal == optionalArg:
		return argOptional
	case f.NoOptDefVal != "":
		return argNone
	}
	return argRequired
}

// lookupLong resolves a long option name as getopt_long does: an exact
// match, else the only option it abbreviates (aliases of one option count
// once). An empty message in the error means "unrecognized".
func lookupLong(fs *pflag.FlagSet, longs []string, name string, canon func(string) string) (*pflag.Flag, *getoptError) {
	if f := fs.Lookup(name); f != nil && name != "" && !isShortOnly(f) {
		return f, nil
	}
	var cands []string
	targets := map[string]bool{}
	for _, l := range longs {
		if name != "" && strings.HasPrefix(l, name) {
			cands = append(cands, l)
			targets[canon(l)] = true
		}
	}
	switch {
	case len(cands) == 0:
		return nil, &getoptError{}
	case len(targets) > 1:
		var b strings.Builder
		fmt.Fprintf(&b, "option '--%s' is ambiguous; possibilities:", name)
		for _, c := range cands {
			fmt.Fprintf(&b, " '--%s'", c)
		}
		return nil, &getoptError{b.String()}
	}
	return fs.Lookup(cands[0]), nil
}

// shortOnlyKey marks flags that exist only as a letter (squeue's -U): pflag
// needs a long name for them, getopt must not accept it.
const shortOnlyKey = "getopt-short-only"

func markShortOnly(fs *pflag.FlagSet, name string) {
	_ = fs.SetAnnotation(name, shortOnlyKey, []string{"true"})
	fs.Lookup(name).Hidden = true
}

func isShortOnly(f *pflag.Flag) bool {
	_, ok := f.Annotations[shortOnlyKey]
	return ok
}
