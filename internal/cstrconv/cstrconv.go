// Package cstrconv reads numbers as Slurm's C code reads them with
// strtol(3) in base 10: leading white space and a sign allowed, a prefix
// of digits taken, the rest left to the caller. Options, ids and format
// widths that Slurm reads this way accept what Go's strconv refuses
// ("12_" is job 12 and task 0 to scancel, "+5" is 5, " 7" is 7).
package cstrconv

import "math"

// Strtol reads the decimal prefix of s as strtol(s, &end, 10) does and
// returns it with the unread rest: all of s when there are no digits (0
// then). A value beyond int64 saturates at its bound, as strtol's does at
// LONG_MAX/LONG_MIN.
func Strtol(s string) (int64, string) {
	n, rest, _ := parse(s)
	return n, rest
}

// Atol reads s as strtol does when the whole string must be used: white
// space, a sign and at least one digit, nothing after; false for
// anything else or a value beyond int64 (strtol's ERANGE).
func Atol(s string) (int64, bool) {
	n, rest, over := parse(s)
	if rest != "" || over {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return n, true
		}
	}
	return 0, false // white space and a sign only
}

// parse is Strtol, also reporting overflow.
func parse(s string) (n int64, rest string, overflow bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var u uint64 // the magnitude, up to 2^63 for the most negative value
	limit := uint64(math.MaxInt64)
	if neg {
		limit++
	}
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		d := uint64(s[i] - '0')
		if !overflow && u > (limit-d)/10 {
			overflow = true
		}
		if !overflow {
			u = u*10 + d
		}
		i++
	}
	if i == start {
		return 0, s, false
	}
	switch {
	case overflow && neg:
		return math.MinInt64, s[i:], true
	case overflow:
		return math.MaxInt64, s[i:], true
	case neg:
		return -int64(u), s[i:], false // u <= 2^63: wraps to MinInt64 exactly there
	}
	return int64(u), s[i:], false
}
