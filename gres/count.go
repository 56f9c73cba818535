package gres

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// errBadCount is wrapped by count parsing errors; callers turn it into their
// own context ("invalid count in ...").
var errBadCount = errors.New("invalid count")

// suffixMultiplier returns the multiplier of a count suffix the way Slurm's
// suffix_mult() reads it: k/m/g/t/p (and kib..pib) are powers of 1024, kb..pb
// powers of 1000, case-insensitive; "" is 1. ok is false for anything else.
func suffixMultiplier(suffix string) (mult uint64, ok bool) {
	s := strings.ToLower(suffix)
	if s == "" {
		return 1, true
	}
	var exp int
	switch s[0] {
	case 'k':
		exp = 1
	case 'm':
		exp = 2
	case 'g':
		exp = 3
	case 't':
		exp = 4
	case 'p':
		exp = 5
	default:
		return 0, false
	}
	base := uint64(1024)
	switch s[1:] {
	case "", "ib":
	case "b":
		base = 1000
	default:
		return 0, false
	}
	mult = 1
	for range exp {
		mult *= base
	}
	return mult, true
}

// ParseCount reads a GRES count as Slurm does for --gres, slurm.conf's
// Gres= and gres.conf's Count=: decimal digits followed by an optional
// suffix, k/m/g/t/p (and kib..pib) for powers of 1024 and kb..pb for powers
// of 1000, in any case ("2", "4k", "10G", "1MB"). It refuses values that
// overflow uint64 and the all-ones NO_VAL64 that Slurm reserves.
func ParseCount(s string) (uint64, error) {
	return parseCount(s)
}

func parseCount(s string) (uint64, error) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, errBadCount
	}
	n, err := strconv.ParseUint(s[:i], 10, 64)
	if err != nil {
		return 0, errBadCount
	}
	mult, ok := suffixMultiplier(s[i:])
	if !ok {
		return 0, errBadCount
	}
	hi, lo := bits.Mul64(n, mult)
	if hi != 0 || lo == math.MaxUint64 {
		return 0, errBadCount
	}
	return lo, nil
}

// isCountToken reports whether s starts like a count: Slurm decides between
// "type" and "count" in "gpu:x" by the first character alone.
func isCountToken(s string) bool {
	return s != "" && s[0] >= '0' && s[0] <= '9'
}

// formatCountSuffix writes n with the largest power-of-1024 suffix that
// divides it exactly (4096 -> "4K"), as slurmctld does for node GRES strings.
// Zero stays "0".
func formatCountSuffix(n uint64) string {
	if n == 0 {
		return "0"
	}
	suffixes := []string{"P", "T", "G", "M", "K"}
	for i, suf := range suffixes {
		unit := uint64(1) << (10 * uint(len(suffixes)-i))
		if n%unit == 0 {
			return strconv.FormatUint(n/unit, 10) + suf
		}
	}
	return strconv.FormatUint(n, 10)
}
