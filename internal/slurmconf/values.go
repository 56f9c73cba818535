package slurmconf

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
)

// keyKind is the type Slurm checks a key's value against.
type keyKind int

const (
	kindString keyKind = iota
	kindUint16
	kindUint32
	kindUint64
	kindBool
	// kindArray keys may be given several times; every value is kept
	// (Prolog, Epilog...).
	kindArray
	// kindRecord keys start a record that carries further pairs
	// (NodeName, PartitionName...) or may repeat (SlurmctldHost).
	kindRecord
	// kindDefunct keys are accepted with a warning and ignored.
	kindDefunct
)

// keyInfo is a known key: its spelling in Slurm's tables and its kind.
type keyInfo struct {
	name string
	kind keyKind
}

// keyTable lists lower-cased key names with their keyInfo, sorted by
// name (TestKeyTablesSorted). A sorted list is laid out by the compiler;
// a map would be built each time a program starts, and every command
// starts by reading slurm.conf.
type keyTable []keyEntry

type keyEntry struct {
	key  string
	info keyInfo
}

func (t keyTable) lookup(key string) (keyInfo, bool) {
	key = strings.ToLower(key)
	i, ok := slices.BinarySearchFunc(t, key, func(e keyEntry, k string) int { return strings.Compare(e.key, k) })
	if !ok {
		return keyInfo{}, false
	}
	return t[i].info, true
}

// Value errors, worded as Slurm's s_p_handle_* functions word them.
var (
	errLessThanZero = errors.New("is less than zero")
	errOutOfRange   = errors.New("is out of range")
)

// parseUint reads a number as Slurm's s_p_handle_uint16/32/64 do: C
// strtoul with base 0 (so "0x10" is 16 and "010" is 8), a "k"/"K" suffix
// multiplying by 1024 for 32 and 64 bits, and UNLIMITED or INFINITE for
// the largest value. inf reports UNLIMITED/INFINITE.
func parseUint(value string, bits int) (v uint64, inf bool, err error) {
	if strings.EqualFold(value, "UNLIMITED") || strings.EqualFold(value, "INFINITE") {
		if bits == 64 {
			return math.MaxUint64, true, nil
		}
		return 1<<bits - 1, true, nil
	}
	s := strings.TrimLeft(value, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	base := uint64(10)
	switch {
	case len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && hexVal(s[2]) >= 0:
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	digits := 0
	overflow := false
	for digits < len(s) {
		d := hexVal(s[digits])
		if d < 0 || uint64(d) >= base {
			break
		}
		if v > (math.MaxUint64-uint64(d))/base {
			overflow = true
		} else {
			v = v*base + uint64(d)
		}
		digits++
	}
	rest := s[digits:]
	if digits == 0 && base != 8 { // "0" alone was read as an octal prefix
		return 0, false, fmt.Errorf("%q is not a valid number", value)
	}
	if bits > 16 && (rest == "k" || rest == "K") {
		if v > math.MaxUint64/1024 {
			overflow = true
		}
		v *= 1024
		rest = ""
	}
	switch {
	case rest != "":
		return 0, false, fmt.Errorf("%q is not a valid number", value)
	case overflow:
		return 0, false, fmt.Errorf("%q %w", value, errOutOfRange)
	case neg:
		return 0, false, fmt.Errorf("%q %w", value, errLessThanZero)
	case bits < 64 && v > 1<<bits-1:
		return 0, false, fmt.Errorf("%q is greater than %d", value, uint64(1)<<bits-1)
	}
	return v, false, nil
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// parseBool reads a boolean as Slurm's s_p_handle_boolean does.
func parseBool(value string) (bool, error) {
	switch strings.ToLower(value) {
	case "yes", "up", "true", "1":
		return true, nil
	case "no", "down", "false", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a valid boolean (YES or NO)", value)
}

// checkValue verifies that value suits the key's kind, as Slurm does when
// it reads the line.
func checkValue(k keyInfo, value string) error {
	var err error
	switch k.kind {
	case kindUint16:
		_, _, err = parseUint(value, 16)
	case kindUint32:
		_, _, err = parseUint(value, 32)
	case kindUint64:
		_, _, err = parseUint(value, 64)
	case kindBool:
		_, err = parseBool(value)
	}
	return err
}

// splitList splits a comma-separated list, dropping empty items, but not
// on commas inside parentheses ("gpu:2(S:0,1)").
func splitList(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '(':
				depth++
				continue
			case ')':
				if depth > 0 {
					depth--
				}
				continue
			case ',':
				if depth > 0 {
					continue
				}
			default:
				continue
			}
		}
		if item := strings.TrimSpace(s[start:i]); item != "" {
			out = append(out, item)
		}
		start = i + 1
	}
	return out
}
