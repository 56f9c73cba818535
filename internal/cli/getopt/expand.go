package getopt

import (
	"slices"
	"strings"
)

// ExpandLong rewrites unambiguous abbreviations of long options ("--sum"
// for "--summarize") to their full names, as getopt_long accepts them and
// pflag would refuse them, leaving every other argument, and all from "--"
// on, as it is for pflag to parse. names lists the long options in the
// order getopt lists ambiguous possibilities; aliases maps alternative names
// to the one they stand for, so that "--cluster" and "--clusters" do not
// make "--clu" ambiguous. Names that match nothing pass through for pflag to
// refuse; an ambiguous one is an *Error.
func ExpandLong(args, names []string, aliases map[string]string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			out = append(out, args[i:]...)
			break
		}
		if !strings.HasPrefix(a, "--") || len(a) == 2 {
			out = append(out, a)
			continue
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		full, err := matchLong(name, names, aliases)
		if err != nil {
			return nil, err
		}
		if full == "" {
			out = append(out, a)
			continue
		}
		if hasValue {
			out = append(out, "--"+full+"="+value)
		} else {
			out = append(out, "--"+full)
		}
	}
	return out, nil
}

// matchLong finds the long option name designates, matching case
// sensitively as getopt does: an exact match, else the only option it
// abbreviates, else "" when nothing matches. Several options are an error
// that lists the first name of each.
func matchLong(name string, names []string, aliases map[string]string) (string, error) {
	if slices.Contains(names, name) {
		return name, nil
	}
	_, options := abbreviations(names, name, aliases)
	switch len(options) {
	case 0:
		return "", nil
	case 1:
		return options[0], nil
	}
	return "", ambiguous(name, options)
}
