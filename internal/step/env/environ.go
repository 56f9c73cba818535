package env

import (
	"slices"
	"strings"
)

// environ is an ordered environment as Slurm's env_array functions edit
// one: a name already present keeps its place when its value changes; a
// name that is new goes after every name of the base, the new ones sorted,
// so that the result does not depend on the order this package sets them.
type environ struct {
	keys  []string // base names, in base order (an unset one stays here, absent from vals)
	vals  map[string]string
	added []string            // names not in base, in the order they were first set
	known map[string]struct{} // every name in keys or added
}

// newEnviron reads "NAME=value" entries. A later duplicate replaces the
// value of an earlier one, in the earlier one's place; entries without '='
// or with an empty name are dropped, as execve's consumers ignore them.
func newEnviron(entries []string) *environ {
	e := &environ{vals: make(map[string]string, len(entries)+64), known: make(map[string]struct{}, len(entries)+64)}
	for _, kv := range entries {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, seen := e.known[k]; !seen {
			e.keys = append(e.keys, k)
			e.known[k] = struct{}{}
		}
		e.vals[k] = v
	}
	return e
}

// set overwrites name (env_array_overwrite).
func (e *environ) set(name, value string) {
	if _, ok := e.known[name]; !ok {
		e.added = append(e.added, name)
		e.known[name] = struct{}{}
	}
	e.vals[name] = value
}

// add sets name only when it is not set (env_array_append, or setenv
// behind a getenv check).
func (e *environ) add(name, value string) {
	if _, ok := e.vals[name]; !ok {
		e.set(name, value)
	}
}

// unset removes name (unsetenvp).
func (e *environ) unset(name string) { delete(e.vals, name) }

// get returns name's value and whether it is set.
func (e *environ) get(name string) (string, bool) {
	v, ok := e.vals[name]
	return v, ok
}

// list returns the environment: base names in base order, then new names
// sorted.
func (e *environ) list() []string {
	out := make([]string, 0, len(e.keys)+len(e.added))
	for _, k := range e.keys {
		if v, ok := e.vals[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	added := slices.Clone(e.added)
	slices.Sort(added)
	for _, k := range added {
		if v, ok := e.vals[k]; ok {
			out = append(out, k+"="+v)
		}
	}
	return out
}
