package sinfo

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// expandLongOptions rewrites unambiguous abbreviations of long options
// ("--sum" for "--summarize") to their full names, as getopt_long accepts
// them; pflag would refuse them.
func expandLongOptions(args []string, names []string) ([]string, error) {
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
		full, err := matchLong(name, names)
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

// errAmbiguous is getopt's refusal of an abbreviation that fits several
// long options.
type errAmbiguous struct {
	name  string
	cands []string
}

func (e errAmbiguous) Error() string { return "ambiguous option --" + e.name }

// matchLong finds the long option name abbreviates (getopt matches case
// sensitively). Aliases of one option (cluster, clusters) do not make an
// abbreviation ambiguous.
func matchLong(name string, names []string) (string, error) {
	var cands []string
	seen := map[string]bool{}
	for _, n := range names {
		if n == name {
			return n, nil
		}
		if strings.HasPrefix(n, name) {
			id := n
			if a, ok := aliases[n]; ok {
				id = a
			}
			if !seen[id] {
				seen[id] = true
				cands = append(cands, n)
			}
		}
	}
	switch len(cands) {
	case 0:
		return "", nil
	case 1:
		return cands[0], nil
	}
	return "", errAmbiguous{name: name, cands: cands}
}

// getoptMessage words a parse error as glibc's getopt_long does.
func getoptMessage(prog string, err error) string {
	var ne *pflag.NotExistError
	var vr *pflag.ValueRequiredError
	var amb errAmbiguous
	var iv *pflag.InvalidValueError
	switch {
	case errors.As(err, &amb):
		var b strings.Builder
		fmt.Fprintf(&b, "%s: option '--%s' is ambiguous; possibilities:", prog, amb.name)
		for _, c := range amb.cands {
			fmt.Fprintf(&b, " '--%s'", c)
		}
		return b.String()
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
