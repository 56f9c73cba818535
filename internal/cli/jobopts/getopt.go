package jobopts

import (
	"fmt"
	"strings"
)

// argKind says whether an option takes an argument, as getopt_long's has_arg.
type argKind int

const (
	noArgument argKind = iota
	requiredArgument
	optionalArgument
)

// spec is what the scanner needs to know about one option.
type spec struct {
	long  string
	short byte
	arg   argKind
	// id names the option's behaviour; aliases ("tasks-per-node" for
	// "ntasks-per-node") share it, which is also how getopt_long decides
	// that two abbreviation matches are not ambiguous.
	id string
}

// item is one element getopt_long returned: an option with its argument, or
// an error (getopt's '?').
type item struct {
	spec     *spec
	value    string
	hasValue bool
	// err is getopt's message without the program name ("unrecognized
	// option '--x'"), set when the element is an error.
	err string
}

// scanner re-implements glibc's getopt_long in REQUIRE_ORDER mode (Slurm's
// option strings start with '+'): options stop at the first non-option
// argument, "--" ends them, a lone "-" is an argument, long options may be
// abbreviated to any unambiguous prefix and take their argument after '=' or
// as the next word, short options may be grouped ("-Hv") and take their
// argument attached ("-N2") or as the next word. pflag differs from getopt
// on abbreviations, on grouped options with optional arguments and on its
// messages, which is why the scanning is done here. internal/cli/getopt,
// which squeue, scancel, sinfo and scontrol use, does not fit sbatch: it
// permutes operands, stops at the first error, and lists ambiguous
// possibilities by name rather than by behaviour.
type scanner struct {
	longs  []*spec
	shorts map[byte]*spec
}

func newScanner(specs []*spec) *scanner {
	s := &scanner{shorts: map[byte]*spec{}}
	for _, sp := range specs {
		if sp.long != "" {
			s.longs = append(s.longs, sp)
		}
		if sp.short != 0 {
			s.shorts[sp.short] = sp
		}
	}
	return s
}

// scan parses args (without the program name) and returns the options in
// order, errors included where getopt would have reported them, and the
// index of the first argument that is not an option (len(args) if none).
// Like getopt it carries on after an error.
func (s *scanner) scan(args []string) (items []item, optind int) {
	i := 0
	for i < len(args) {
		a := args[i]
		if a == "--" {
			return items, i + 1
		}
		if len(a) < 2 || a[0] != '-' {
			return items, i
		}
		if strings.HasPrefix(a, "--") {
			it, next := s.long(args, i)
			items = append(items, it)
			i = next
			continue
		}
		var next int
		items, next = s.shortGroup(args, i, items)
		i = next
	}
	return items, i
}

// long handles args[i], which starts with "--".
func (s *scanner) long(args []string, i int) (item, int) {
	body := args[i][2:]
	name, value, hasEq := strings.Cut(body, "=")
	found, ambiguous := s.lookupLong(name)
	switch {
	case found == nil && len(ambiguous) == 0:
		return item{err: fmt.Sprintf("unrecognized option '--%s'", body)}, i + 1
	case len(ambiguous) > 0:
		var b strings.Builder
		fmt.Fprintf(&b, "option '--%s' is ambiguous; possibilities:", body)
		for _, sp := range ambiguous {
			fmt.Fprintf(&b, " '--%s'", sp.long)
		}
		return item{err: b.String()}, i + 1
	}
	it := item{spec: found}
	switch found.arg {
	case noArgument:
		if hasEq {
			return item{err: fmt.Sprintf("option '--%s' doesn't allow an argument", found.long)}, i + 1
		}
	case requiredArgument:
		switch {
		case hasEq:
			it.value, it.hasValue = value, true
		case i+1 < len(args):
			it.value, it.hasValue = args[i+1], true
			return it, i + 2
		default:
			return item{err: fmt.Sprintf("option '--%s' requires an argument", found.long)}, i + 1
		}
	case optionalArgument:
		if hasEq {
			it.value, it.hasValue = value, true
		}
	}
	return it, i + 1
}

// lookupLong finds the option name designates: an exact match, or the only
// option it abbreviates. Several abbreviated matches with different
// behaviour are ambiguous; they are returned in table order, as getopt lists
// them.
func (s *scanner) lookupLong(name string) (found *spec, ambiguous []*spec) {
	for _, sp := range s.longs {
		if sp.long == name {
			return sp, nil
		}
	}
	var matches []*spec
	for _, sp := range s.longs {
		if strings.HasPrefix(sp.long, name) {
			matches = append(matches, sp)
		}
	}
	if len(matches) == 0 {
		return nil, nil
	}
	// getopt lists the first match and every later one that behaves
	// differently from it.
	list := []*spec{matches[0]}
	for _, sp := range matches[1:] {
		if sp.id != matches[0].id || sp.arg != matches[0].arg {
			list = append(list, sp)
		}
	}
	if len(list) > 1 {
		return nil, list
	}
	return matches[0], nil
}

// shortGroup handles args[i], a group of short options ("-Hv", "-N2").
func (s *scanner) shortGroup(args []string, i int, items []item) ([]item, int) {
	a := args[i]
	for j := 1; j < len(a); j++ {
		c := a[j]
		sp, ok := s.shorts[c]
		if !ok {
			items = append(items, item{err: fmt.Sprintf("invalid option -- '%c'", c)})
			continue
		}
		rest := a[j+1:]
		switch sp.arg {
		case noArgument:
			items = append(items, item{spec: sp})
			continue
		case optionalArgument:
			it := item{spec: sp}
			if rest != "" {
				it.value, it.hasValue = rest, true
			}
			return append(items, it), i + 1
		default:
			switch {
			case rest != "":
				return append(items, item{spec: sp, value: rest, hasValue: true}), i + 1
			case i+1 < len(args):
				return append(items, item{spec: sp, value: args[i+1], hasValue: true}), i + 2
			default:
				return append(items, item{err: fmt.Sprintf("option requires an argument -- '%c'", c)}), i + 1
			}
		}
	}
	return items, i + 1
}
