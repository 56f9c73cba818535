package slurmconf

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// CgroupConf is what Drover reads of cgroup.conf: the task/cgroup
// constraints. Keys Drover does not act on (CgroupPlugin,
// ConstrainRAMSpace...) are accepted and kept in Other, so that a site's
// file loads unchanged.
type CgroupConf struct {
	// ConstrainDevices confines a step's tasks to the GRES devices it was
	// given: the node's other GPU device files cannot be opened.
	ConstrainDevices bool
	// Other holds every other key, by its name as written.
	Other map[string]string
}

// LoadCgroupConf reads cgroup.conf; a missing file is the defaults (no
// constraint), as in Slurm.
func LoadCgroupConf(path string) (*CgroupConf, error) {
	data, err := readLimited(path)
	if errors.Is(err, os.ErrNotExist) {
		return &CgroupConf{Other: map[string]string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseCgroupConf(data, path)
}

// ParseCgroupConf parses cgroup.conf's key=value lines. A line that is not
// key=value, or a yes/no key with another value, is an error naming the
// file and line.
func ParseCgroupConf(data []byte, filename string) (*CgroupConf, error) {
	pairs, err := ParsePairs(data, filename)
	if err != nil {
		return nil, err
	}
	c := &CgroupConf{Other: map[string]string{}}
	for _, kv := range pairs {
		switch {
		case strings.EqualFold(kv.Key, "ConstrainDevices"):
			v, err := yesNo(kv.Value)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: ConstrainDevices: %w", filename, kv.Line, err)
			}
			c.ConstrainDevices = v
		default:
			c.Other[kv.Key] = kv.Value
		}
	}
	return c, nil
}

// Pair is one key=value of a flat configuration file (cgroup.conf,
// oci.conf), with the line it is on.
type Pair struct {
	Key, Value string
	Line       int
}

// ParsePairs reads a file of key=value pairs with slurm.conf's rules
// (comments, continuations, escapes, quoted values); a word that is not
// key=value is an error naming the file and line.
func ParsePairs(data []byte, filename string) ([]Pair, error) {
	var out []Pair
	for _, l := range logicalLines(data) {
		rest := l.text
		for !isBlank(rest) {
			kv, r, ok := nextPair(rest)
			if !ok || kv.op != 0 {
				return nil, fmt.Errorf("%s:%d: Parse error: %q is not key=value", filename, l.line, strings.TrimSpace(rest))
			}
			rest = r
			out = append(out, Pair{Key: kv.key, Value: kv.value, Line: l.line})
		}
	}
	return out, nil
}

// yesNo reads a cgroup.conf boolean as s_p_get_boolean does.
func yesNo(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "yes", "up", "true", "1":
		return true, nil
	case "no", "down", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("invalid boolean value %q", s)
}
