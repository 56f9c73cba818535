package slurmconf

import (
	"fmt"
	"strconv"
	"strings"
)

// License is one entry of Licenses=: a name and how many there are.
type License struct {
	Name  string
	Count uint32
}

// ParseLicenses reads Licenses= ("fluent:10,matlab*2,sas"): a count after
// ':' (or the older '*'), 1 when none is given. A name given twice, an
// empty name or a count that is not a number is an error.
func ParseLicenses(s string) ([]License, error) {
	var out []License
	seen := map[string]bool{}
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		name, count, found := strings.Cut(e, ":")
		if !found {
			name, count, found = strings.Cut(e, "*")
		}
		l := License{Name: strings.TrimSpace(name), Count: 1}
		if l.Name == "" || strings.ContainsAny(l.Name, " \t:*") {
			return nil, fmt.Errorf("Licenses: invalid entry %q", e)
		}
		if found {
			n, err := strconv.ParseUint(strings.TrimSpace(count), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("Licenses: invalid count in %q", e)
			}
			l.Count = uint32(n)
		}
		if seen[l.Name] {
			return nil, fmt.Errorf("Licenses: %s given twice", l.Name)
		}
		seen[l.Name] = true
		out = append(out, l)
	}
	return out, nil
}
