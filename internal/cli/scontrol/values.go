package scontrol

import (
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/wireval"
	"github.com/droverhq/drover/internal/timefmt"
)

// Slurm's sentinel values, as the read model and the v0.0.44 number
// structs hold them.
const (
	noVal      = wireval.NoVal
	infinite   = wireval.Infinite
	noVal16    = wireval.NoVal16
	infinite16 = wireval.Infinite16
	noVal64    = wireval.NoVal64
	infinite64 = wireval.Infinite64
)

// orNull prints a string the way C's printf("%s") prints Slurm's NULL
// strings: slurmrestd writes unset strings as "", which the C commands saw
// as NULL and printed "(null)".
func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

// timeStr prints an epoch as slurm_make_time_str does, honouring
// SLURM_TIME_FORMAT, in the location of the command's clock.
func (c *cmd) timeStr(t int64) string {
	return timefmt.FormatEpoch(t, c.now(), c.getenv("SLURM_TIME_FORMAT"))
}

func (c *cmd) now() time.Time {
	if c.env.Now != nil {
		return c.env.Now()
	}
	return time.Now()
}

func (c *cmd) getenv(k string) string {
	if c.env.Getenv == nil {
		return ""
	}
	return c.env.Getenv(k)
}

// secs2time prints a duration as Slurm's secs2time_str does
// ("00:01:15", "1-00:00:00", "UNLIMITED" for INFINITE).
func secs2time(secs int64) string {
	return timefmt.FormatDurationPadded(secs)
}

// mins2time prints a limit in minutes as mins2time_str does.
func mins2time(mins uint64) string {
	switch mins {
	case infinite:
		return "UNLIMITED"
	case noVal:
		return "Partition_Limit"
	}
	return timefmt.Limit{Minutes: uint32(mins)}.Padded()
}

// convertNumUnitExact prints a count of base-unit values the way Slurm's
// convert_num_unit does with CONVERT_NUM_UNIT_EXACT: the value is divided
// by 1024 while it divides exactly, and the unit letter of the result
// follows ("100M", "4G", "1500M", "0").
func convertNumUnitExact(v uint64, unit int) string {
	const units = "\x00KMGTPE"
	if v == 0 {
		return "0"
	}
	for v%1024 == 0 && unit < len(units)-1 {
		v /= 1024
		unit++
	}
	s := strconv.FormatUint(v, 10)
	if unit > 0 {
		s += string(units[unit])
	}
	return s
}

// unitMega is convert_num_unit's UNIT_MEGA: values in megabytes.
const unitMega = 2

// bitFmt formats a set of non-negative integers as Slurm's bit_fmt does:
// ascending, with runs collapsed ("0-3,5").
func bitFmt(ids []int) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return b.String()
}
