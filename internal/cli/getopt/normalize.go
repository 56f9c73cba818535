package getopt

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// OptionalArg is the NoOptDefVal to give flags whose argument is optional
// (getopt's "j::"): Normalize passes it to pflag when the option came bare,
// so the flag's callback can tell "-j" from "-j123" and "--jobs=".
const OptionalArg = "\x00"

// shortOnlyKey is the annotation MarkShortOnly sets.
const shortOnlyKey = "getopt-short-only"

// MarkShortOnly marks the flag called name, which must be defined, as one
// that exists only as a letter (squeue's -U): pflag needs a long name for
// every flag, but Normalize must not accept that name on the command line.
// The flag is hidden from pflag's usage text too.
func MarkShortOnly(fs *pflag.FlagSet, name string) {
	_ = fs.SetAnnotation(name, shortOnlyKey, []string{"true"})
	fs.Lookup(name).Hidden = true
}

func isShortOnly(f *pflag.Flag) bool {
	_, ok := f.Annotations[shortOnlyKey]
	return ok
}

// DefineAliases defines each key of aliases as one more long name of the
// flag its value names, which must be defined: the alias shares the flag's
// value (so its callback) and its argument kind. Normalize, given the same
// map, then treats both names as one option.
func DefineAliases(fs *pflag.FlagSet, aliases map[string]string) {
	for alias, target := range aliases {
		t := fs.Lookup(target)
		f := fs.VarPF(t.Value, alias, "", "")
		f.NoOptDefVal = t.NoOptDefVal
	}
}

// Normalize rewrites args, written with GNU getopt_long conventions, into
// canonical "--name[=value]" tokens for pflag, and returns the operands
// apart. It implements what pflag does not: unique prefixes of long options
// ("--form" for "--format"), attached optional arguments ("-j123", where
// pflag would read "123" as more flags), letters without a long name
// (MarkShortOnly) and getopt's permutation of operands, which may come
// anywhere; "--" ends the options. aliases maps alternative long names to
// the one whose flag carries the callback (both defined, see DefineAliases),
// so that "--user" and "--users" do not make "--use" ambiguous; tokens
// always use the latter.
//
// A flag's argument kind comes from its NoOptDefVal: empty means required,
// OptionalArg optional, anything else none.
//
// It stops at the first error, an *Error, returning the tokens before it:
// getopt reports an error only when it reaches the bad option, after the
// options before it took effect, so the caller parses the tokens first and
// reports the error after.
func Normalize(fs *pflag.FlagSet, args []string, aliases map[string]string) (tokens, operands []string, err error) {
	var longs []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !isShortOnly(f) {
			longs = append(longs, f.Name)
		}
	})
	sort.Strings(longs)
	emit := func(f *pflag.Flag, value string, has bool) {
		name := canonical(f.Name, aliases)
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
			f, gerr := lookupLong(fs, longs, name, aliases)
			if gerr != nil {
				return tokens, operands, gerr
			}
			if f == nil {
				return tokens, operands, &Error{fmt.Sprintf("unrecognized option '%s'", a)}
			}
			switch kind(f) {
			case argNone:
				if hasValue {
					return tokens, operands, &Error{fmt.Sprintf("option '--%s' doesn't allow an argument", f.Name)}
				}
				emit(f, "", false)
			case argOptional:
				emit(f, value, hasValue)
			default:
				if !hasValue {
					if i+1 >= len(args) {
						return tokens, operands, &Error{fmt.Sprintf("option '--%s' requires an argument", f.Name)}
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
					return tokens, operands, &Error{"invalid option -- '" + string([]byte{c}) + "'"}
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
							return tokens, operands, &Error{"option requires an argument -- '" + string([]byte{c}) + "'"}
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

// argKind is getopt_long's has_arg.
type argKind int

const (
	argRequired argKind = iota
	argNone
	argOptional
)

func kind(f *pflag.Flag) argKind {
	switch {
	case f.NoOptDefVal == OptionalArg:
		return argOptional
	case f.NoOptDefVal != "":
		return argNone
	}
	return argRequired
}

// lookupLong resolves a long option name as getopt_long does: an exact
// match, else the only option it abbreviates (aliases of one option count
// once). It returns neither flag nor error when nothing matches, and lists
// every matching name, aliases included, when several options do.
func lookupLong(fs *pflag.FlagSet, longs []string, name string, aliases map[string]string) (*pflag.Flag, *Error) {
	if name == "" {
		return nil, nil
	}
	if f := fs.Lookup(name); f != nil && !isShortOnly(f) {
		return f, nil
	}
	matches, options := abbreviations(longs, name, aliases)
	switch {
	case len(matches) == 0:
		return nil, nil
	case len(options) > 1:
		return nil, ambiguous(name, matches)
	}
	return fs.Lookup(matches[0]), nil
}
