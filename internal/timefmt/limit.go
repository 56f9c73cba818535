package timefmt

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ErrInvalidLimit is matched (errors.Is) by every error ParseLimit,
// ParseTimeOption and ParseSeconds return. Callers print Slurm's own wording
// for the option at hand ("sbatch: error: Invalid --time specification",
// "Invalid TimeLimit value"), which depends on the option, not on the input.
var ErrInvalidLimit = errors.New("invalid time limit")

// Limit is a time limit in whole minutes, or no limit at all. It is what
// Slurm keeps in a job's, step's or partition's time_limit (minutes, with
// INFINITE for "UNLIMITED").
type Limit struct {
	// Minutes is the limit in minutes; meaningless when Infinite is set.
	Minutes uint32
	// Infinite marks the absence of a limit (UNLIMITED, INFINITE, -1).
	Infinite bool
}

// Unlimited is the Limit Slurm prints as UNLIMITED.
var Unlimited = Limit{Infinite: true}

// maxLimitSeconds bounds accepted limits: Slurm computes them in a C int of
// seconds, so anything larger overflows there and is refused here.
const maxLimitSeconds = math.MaxInt32

// yearSeconds is Slurm's YEAR_SECONDS: squeue prints longer durations as
// INVALID.
const yearSeconds = 365 * 24 * 60 * 60

// infiniteSeconds is Slurm's INFINITE seen through a time_t, which
// secs2time_str prints as UNLIMITED.
const infiniteSeconds = 0xffffffff

// ParseLimit parses a time limit as Slurm's time_str2mins does: "M", "M:S",
// "H:M:S", "D-H", "D-H:M", "D-H:M:S" (and "D-" for whole days), or one of
// "UNLIMITED", "INFINITE" and "-1" in any case. Seconds round up to the next
// minute ("0:1" is one minute). Fields are not range checked ("1:90" is 150
// seconds, so 3 minutes), as in Slurm. Zero stays a zero-minute limit: that
// is what scontrol and slurm.conf (MaxTime=0) mean by it; use
// ParseTimeOption for the --time options of sbatch, srun and salloc.
func ParseLimit(s string) (Limit, error) {
	secs, inf, err := ParseSeconds(s)
	if err != nil {
		return Limit{}, err
	}
	if inf {
		return Unlimited, nil
	}
	if secs > maxLimitSeconds-59 {
		// Slurm's rounding overflows its C int here.
		return Limit{}, fmt.Errorf("%w %q: too large", ErrInvalidLimit, s)
	}
	// ROUNDUP(secs, 60): a partial minute counts as a whole one.
	return Limit{Minutes: uint32((secs + 59) / 60)}, nil
}

// ParseTimeOption parses the argument of sbatch/srun/salloc --time and
// --time-min. It is ParseLimit, except that a limit of zero means no limit,
// as those options document ("A time limit of zero requests that no time
// limit be imposed").
func ParseTimeOption(s string) (Limit, error) {
	l, err := ParseLimit(s)
	if err != nil {
		return Limit{}, err
	}
	if !l.Infinite && l.Minutes == 0 {
		return Unlimited, nil
	}
	return l, nil
}

// ParseSeconds parses the formats of ParseLimit without rounding to minutes,
// as Slurm's time_str2secs does (scontrol's TimeLimit=+/- deltas,
// reservation durations, slurmrestd time strings). infinite reports
// "UNLIMITED", "INFINITE" or "-1"; secs is then zero.
func ParseSeconds(s string) (secs int64, infinite bool, err error) {
	if s == "" {
		return 0, false, fmt.Errorf("%w: empty", ErrInvalidLimit)
	}
	if s == "-1" || strings.EqualFold(s, "INFINITE") || strings.EqualFold(s, "UNLIMITED") {
		return 0, true, nil
	}
	if !validTimespec(s) {
		return 0, false, fmt.Errorf("%w %q: not one of M, M:S, H:M:S, D-H, D-H:M, D-H:M:S", ErrInvalidLimit, s)
	}
	var days, hours, mins, rest int64
	if before, after, found := strings.Cut(s, "-"); found {
		if before == "" {
			// "-N" (the shape check allows nothing else here): Slurm reads
			// a negative day count and ends up with a negative limit, which
			// no job can have. Only "-0" means something (zero).
			n, err := limitField(s, after)
			if err != nil {
				return 0, false, err
			}
			if n != 0 {
				return 0, false, fmt.Errorf("%w %q: negative", ErrInvalidLimit, s)
			}
			return 0, false, nil
		}
		// days-[hours[:minutes[:seconds]]]; the shape check guarantees
		// that every colon comes after the dash.
		if days, err = limitField(s, before); err != nil {
			return 0, false, err
		}
		if after != "" {
			var vals [3]int64
			for i, part := range strings.Split(after, ":") {
				if vals[i], err = limitField(s, part); err != nil {
					return 0, false, err
				}
			}
			hours, mins, rest = vals[0], vals[1], vals[2]
		}
	} else {
		f := strings.Split(s, ":")
		vals := make([]int64, len(f))
		for i, part := range f {
			if vals[i], err = limitField(s, part); err != nil {
				return 0, false, err
			}
		}
		switch len(vals) {
		case 3: // hours:minutes:seconds
			hours, mins, rest = vals[0], vals[1], vals[2]
		case 2: // minutes:seconds
			mins, rest = vals[0], vals[1]
		default: // minutes
			mins = vals[0]
		}
	}
	total := days*86400 + hours*3600 + mins*60 + rest
	if total > maxLimitSeconds {
		return 0, false, fmt.Errorf("%w %q: too large", ErrInvalidLimit, s)
	}
	return total, false, nil
}

// limitField converts one numeric field of a time limit. Fields are bounded
// so that the sum cannot overflow; anything that large is refused anyway.
func limitField(s, field string) (int64, error) {
	if field == "" {
		return 0, nil
	}
	v, err := strconv.ParseInt(field, 10, 64)
	if err != nil || v > maxLimitSeconds {
		return 0, fmt.Errorf("%w %q: field %q out of range", ErrInvalidLimit, s, field)
	}
	return v, nil
}

// validTimespec mirrors the shape check Slurm applies before reading a time
// limit: only digits, at most one dash (never after a colon), at most two
// colons, and enough digit groups for the separators used.
func validTimespec(s string) bool {
	digits, dashes, colons := 0, 0, 0
	inDigits := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if !inDigits {
				digits++
				inDigits = true
			}
		case c == '-':
			inDigits = false
			dashes++
			if colons > 0 {
				return false
			}
		case c == ':':
			inDigits = false
			colons++
		default:
			return false
		}
	}
	if digits == 0 || dashes > 1 || colons > 2 {
		return false
	}
	if dashes > 0 {
		return !(colons == 1 && digits < 3) && !(colons == 2 && digits < 4)
	}
	return !(colons == 1 && digits < 2) && !(colons == 2 && digits < 3)
}

// String prints the limit as squeue's %l does: "UNLIMITED", "30:00",
// "1:00:00", "1-00:00:00". ParseLimit reads it back to the same Limit.
// (squeue itself prints limits over a year as INVALID; FormatDuration
// reproduces that for callers that need it.)
func (l Limit) String() string {
	if l.Infinite {
		return "UNLIMITED"
	}
	return compact(int64(l.Minutes) * 60)
}

// Padded prints the limit as scontrol's TimeLimit= and sacct's Timelimit
// do (mins2time_str): "UNLIMITED", "00:30:00", "01:00:00", "1-00:00:00".
func (l Limit) Padded() string {
	if l.Infinite {
		return "UNLIMITED"
	}
	return padded(int64(l.Minutes) * 60)
}

// FormatDuration prints an elapsed time in seconds as squeue's TIME (%M) and
// TIME_LEFT (%L) columns do: "0:00", "1:05", "1:00:00", "2-03:04:05", and
// "INVALID" for negative durations or ones over a year.
func FormatDuration(seconds int64) string {
	if seconds < 0 || seconds > yearSeconds {
		return "INVALID"
	}
	return compact(seconds)
}

// FormatDurationPadded prints an elapsed time in seconds as scontrol's
// RunTime= and sacct's Elapsed do (secs2time_str): "00:00:00", "00:01:15",
// "2-03:04:05"; "INVALID" when negative and "UNLIMITED" for Slurm's
// INFINITE (0xffffffff).
func FormatDurationPadded(seconds int64) string {
	if seconds == infiniteSeconds {
		return "UNLIMITED"
	}
	if seconds < 0 {
		return "INVALID"
	}
	return padded(seconds)
}

func compact(secs int64) string {
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	switch {
	case d > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	default:
		return fmt.Sprintf("%d:%02d", m, s)
	}
}

func padded(secs int64) string {
	d, h, m, s := secs/86400, secs/3600%24, secs/60%60, secs%60
	if d > 0 {
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	}
	return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
}
