package timefmt

import (
	"strings"
	"time"
)

// StandardLayout is the strftime format Slurm prints timestamps in unless
// SLURM_TIME_FORMAT says otherwise ("%FT%T": 2026-11-29T14:59:45).
const StandardLayout = "%FT%T"

// maxTimeFormat is the size of Slurm's buffer for SLURM_TIME_FORMAT: a
// format of this length or longer is refused and the standard one used.
const maxTimeFormat = 32

// Special epoch values that Slurm prints as words rather than dates.
const (
	// EpochInfinite is Slurm's INFINITE seen as a time_t, printed "Unknown".
	EpochInfinite = 0xffffffff
	// EpochNoVal is Slurm's NO_VAL seen as a time_t, printed "None".
	EpochNoVal = 0xfffffffe
)

// FormatTimestamp prints t as Slurm's commands print timestamps
// (slurm_make_time_str), in now's location. format is the value of
// SLURM_TIME_FORMAT:
//
//   - "" or "standard": 2026-11-29T14:59:45;
//   - "relative": relative to now's date, as short as possible:
//     "14:59:45" (today), "Ystday 14:59", "Tomorr 09:00", "Sat 02:17"
//     (within the next six days), "5 Jan 12:00" (within a year either way),
//     "5 Jan 2027" (further);
//   - anything else containing a '%' and shorter than 32 bytes: a strftime
//     format (see Strftime). Other values fall back to the standard format,
//     as Slurm does after logging "invalid SLURM_TIME_FORMAT".
//
// The zero time prints "N/A", as squeue prints unset times; use FormatEpoch
// where the command prints "Unknown" and "None" instead (scontrol).
func FormatTimestamp(t time.Time, now time.Time, format string) string {
	if t.IsZero() {
		return "N/A"
	}
	t = t.In(now.Location())
	return Strftime(t, layoutFor(t, now, format))
}

// FormatEpoch prints a time given in seconds since the epoch as scontrol
// and the Slurm API's slurm_make_time_str do: 0 and INFINITE print
// "Unknown", NO_VAL prints "None", anything else as FormatTimestamp does
// (in now's location, honouring SLURM_TIME_FORMAT passed as format).
func FormatEpoch(epoch int64, now time.Time, format string) string {
	switch epoch {
	case 0, EpochInfinite:
		return "Unknown"
	case EpochNoVal:
		return "None"
	}
	t := time.Unix(epoch, 0).In(now.Location())
	return Strftime(t, layoutFor(t, now, format))
}

// layoutFor picks the strftime format slurm_make_time_str would use.
func layoutFor(t, now time.Time, format string) string {
	switch {
	case format == "" || format == "standard":
		return StandardLayout
	case format == "relative":
		return relativeLayout(t, now)
	case !strings.Contains(format, "%") || len(format) >= maxTimeFormat:
		return StandardLayout
	default:
		return format
	}
}

// relativeLayout chooses the relative format from the distance in days,
// measured as Slurm does: as the difference of year*1000+day-of-year
// numbers. Across a new year that difference jumps by several hundred, so
// Dec 31 seen on Jan 1 is "far" and prints with its year; Slurm does the
// same.
func relativeLayout(t, now time.Time) string {
	distance := (1000*t.Year() + t.YearDay() - 1) - (1000*now.Year() + now.YearDay() - 1)
	switch {
	case distance == -1:
		return "Ystday %H:%M"
	case distance == 0:
		return "%H:%M:%S"
	case distance == 1:
		return "Tomorr %H:%M"
	case distance < -365 || distance > 365:
		return "%-d %b %Y"
	case distance < -1 || distance > 6:
		return "%-d %b %H:%M"
	default:
		return "%a %H:%M"
	}
}
