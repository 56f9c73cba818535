package timefmt

import (
	"fmt"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/slurmerr"
)

// TimeError reports a time specification that ParseTime refuses. Its text
// is the line Slurm's parse_time writes to stderr before the command's own
// error ("Invalid time specification (pos=2): 25:00"), so a shim can print
// both lines as Slurm does. It matches slurmerr.InvalidTimeValue
// (ESLURM_INVALID_TIME_VALUE), the error Slurm sets.
type TimeError struct {
	// Input is the specification as given.
	Input string
	// Pos is the byte offset where parsing failed, as Slurm reports it
	// (it can be -1: Slurm backs up two bytes over a bad one-digit month).
	Pos int
	// NoTime reports input that parsed but named no time at all (empty,
	// blanks, "-"). Slurm prints no line for it; the command then reports
	// the option as invalid.
	NoTime bool
}

// Error implements error.
func (e *TimeError) Error() string {
	if e.NoTime {
		return fmt.Sprintf("Invalid time specification: %q names no time", e.Input)
	}
	return fmt.Sprintf("Invalid time specification (pos=%d): %s", e.Pos, e.Input)
}

// Unwrap lets slurmerr.CodeOf and errors.Is see ESLURM_INVALID_TIME_VALUE.
func (e *TimeError) Unwrap() error { return slurmerr.Sentinel(slurmerr.InvalidTimeValue) }

// ParseTime parses a point in time as sbatch --begin, scontrol
// StartTime= and the other "future" time options do (Slurm's parse_time
// with past=0), relative to now and in now's location:
//
//	HH:MM[:SS][ ][AM|PM]       today, or tomorrow when that time has passed
//	                           (seconds are ignored in that comparison)
//	MMDD[YY], MM/DD[/YY], MM.DD[.YY]
//	                           midnight of that day, this year or next
//	YYYY-MM-DD                 midnight of that day
//	date[-|T]time              e.g. 2026-11-29T14:00, 11/29-14:00:30
//	now[{+|-}count[unit]]      unit one of seconds (default), minutes,
//	                           hours, days, weeks (singular too)
//	today, tomorrow            midnight of that day
//	midnight, noon, elevenses, fika, teatime
//	                           00:00, 12:00, 11:00, 15:00, 16:00 (next one)
//	uts<epoch>                 seconds since 1970 (at least 1000000)
//
// Words may be combined with a date ("tomorrow noon", "today teatime"); a
// later part overrides an earlier one. "now" is meant to come first: Slurm
// misreads it anywhere else, where Drover reads it like any other part.
// Words match case-insensitively, except that a capital T where a part starts
// is taken as the date/time separator, so "Today" and "Teatime" are refused,
// as in Slurm. Parsing stops at a newline. Out-of-range days roll over into the
// next month (02/30 is March 2nd or 1st), as mktime does.
func ParseTime(s string, now time.Time) (time.Time, error) {
	return parseTime(s, now, false)
}

// ParseTimePast is ParseTime for options that look back (sacct
// --starttime/--endtime, sreport): a time of day without a date is today
// even when it has passed, and a date without a year is this year unless its
// month is later than the current one (then last year).
func ParseTimePast(s string, now time.Time) (time.Time, error) {
	return parseTime(s, now, true)
}

// maxDelta bounds the count of "now+count": beyond it Slurm's arithmetic
// overflows; about 34000 years of seconds is refused here instead.
const maxDelta = 1 << 40

// timeUnits are the units of "now+count<unit>", tried in this order (the
// longer spelling first), case-insensitively.
var timeUnits = []struct {
	name string
	secs int64
}{
	{"seconds", 1}, {"second", 1},
	{"minutes", 60}, {"minute", 60},
	{"hours", 3600}, {"hour", 3600},
	{"days", 86400}, {"day", 86400},
	{"weeks", 7 * 86400}, {"week", 7 * 86400},
}

// timeParser carries the state of one parse. Fields follow struct tm
// conventions (tmYear is years since 1900, month is 0-based) with -1 for
// "not given", because Slurm's defaulting rules are written in those terms.
type timeParser struct {
	s       string
	hour    int
	minute  int
	second  int
	month   int
	mday    int
	tmYear  int
	nowTm   tmFields
	nowUnix int64
	loc     *time.Location
}

type tmFields struct {
	year, month, mday, hour, minute, second int
}

func fieldsOf(t time.Time) tmFields {
	return tmFields{
		year:   t.Year() - 1900,
		month:  int(t.Month()) - 1,
		mday:   t.Day(),
		hour:   t.Hour(),
		minute: t.Minute(),
		second: t.Second(),
	}
}

// at returns the byte at i, or 0 past the end, so that look-ahead reads as
// it does on a NUL-terminated C string.
func (p *timeParser) at(i int) byte {
	if i < 0 || i >= len(p.s) {
		return 0
	}
	return p.s[i]
}

func (p *timeParser) hasWord(i int, word string) bool {
	return i <= len(p.s) && len(p.s)-i >= len(word) && strings.EqualFold(p.s[i:i+len(word)], word)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isBlank(c byte) bool { return c == ' ' || c == '\t' }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func parseTime(s string, now time.Time, past bool) (time.Time, error) {
	// The commands see C strings: nothing after a NUL byte exists for them.
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	loc := now.Location()
	if len(s) >= 3 && strings.EqualFold(s[:3], "uts") {
		return parseUTS(s, loc)
	}
	now = time.Unix(now.Unix(), 0).In(loc)
	p := &timeParser{
		s: s, hour: -1, minute: -1, month: -1, mday: -1, tmYear: -1,
		nowTm: fieldsOf(now), nowUnix: now.Unix(), loc: loc,
	}
	if pos, ok := p.scan(); !ok {
		return time.Time{}, &TimeError{Input: s, Pos: pos}
	}
	return p.resolve(past)
}

// parseUTS reads "uts<seconds since the epoch>" as strtol would, refusing
// values under 1000000 (they are surely typos) and trailing garbage.
func parseUTS(s string, loc *time.Location) (time.Time, error) {
	rest := strings.TrimLeft(s[3:], " \t\n\v\f\r")
	digits := strings.TrimLeft(rest, "+-")
	if len(rest)-len(digits) > 1 || digits == "" {
		return time.Time{}, &TimeError{Input: s, Pos: 0}
	}
	var v int64
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) || v > (1<<62)/10 {
			return time.Time{}, &TimeError{Input: s, Pos: 0}
		}
		v = v*10 + int64(digits[i]-'0')
	}
	if rest[0] == '-' || v < 1000000 {
		return time.Time{}, &TimeError{Input: s, Pos: 0}
	}
	return time.Unix(v, 0).In(loc), nil
}

// scan walks the input once, as parse_time does, recording the fields it
// finds. On failure it returns the position Slurm would report.
func (p *timeParser) scan() (int, bool) {
	for pos := 0; pos < len(p.s) && p.s[pos] != '\n'; pos++ {
		c := p.s[pos]
		if isBlank(c) || c == '-' || c == 'T' {
			continue
		}
		switch {
		case p.hasWord(pos, "today"):
			p.setDate(p.nowTm)
			pos += 4
			continue
		case p.hasWord(pos, "tomorrow"):
			p.setDate(p.tomorrow())
			pos += 7
			continue
		case p.hasWord(pos, "midnight"):
			p.setClock(0)
			pos += 7
			continue
		case p.hasWord(pos, "noon"):
			p.setClock(12)
			pos += 3
			continue
		case p.hasWord(pos, "elevenses"):
			p.setClock(11)
			pos += 8
			continue
		case p.hasWord(pos, "fika"):
			p.setClock(15)
			pos += 3
			continue
		case p.hasWord(pos, "teatime"):
			p.setClock(16)
			pos += 6
			continue
		case p.hasWord(pos, "now"):
			np, ok := p.scanNow(pos)
			if !ok {
				return np, false
			}
			pos = np
			continue
		}
		if !isDigit(c) {
			return pos, false
		}
		var np int
		var ok bool
		if p.at(pos+1) == ':' || p.at(pos+2) == ':' {
			np, ok = p.scanClock(pos)
		} else {
			np, ok = p.scanDate(pos)
		}
		if !ok {
			return np, false
		}
		pos = np
	}
	return 0, true
}

func (p *timeParser) setDate(f tmFields) {
	p.month, p.mday, p.tmYear = f.month, f.mday, f.year
}

func (p *timeParser) setClock(hour int) {
	p.hour, p.minute, p.second = hour, 0, 0
}

// tomorrow is "now plus 24 hours", not "the next calendar day": they differ
// on daylight saving changes, and Slurm uses the former.
func (p *timeParser) tomorrow() tmFields {
	return fieldsOf(time.Unix(p.nowUnix+24*60*60, 0).In(p.loc))
}

// scanNow handles "now[{+|-}count[unit]]" starting at pos (the 'n'), and
// returns the position of the last byte it consumed.
func (p *timeParser) scanNow(pos int) (int, bool) {
	var delta int64
	for i := pos + 3; ; i++ {
		c := p.at(i)
		if c == '+' || c == '-' {
			d, np, ok := p.scanDelta(i)
			if !ok {
				return np, false
			}
			if c == '-' {
				d = -d
			}
			delta, pos = d, np
			break
		}
		if isBlank(c) {
			continue
		}
		if c == 0 || c == '\n' {
			pos = i - 1
			break
		}
		return i, false
	}
	f := fieldsOf(time.Unix(p.nowUnix+delta, 0).In(p.loc))
	p.setDate(f)
	p.hour, p.minute, p.second = f.hour, f.minute, f.second
	return pos, true
}

// scanDelta reads "count[unit]" after the sign at pos, skipping white space;
// a unit ends it. It returns the count in seconds and the last position
// consumed.
func (p *timeParser) scanDelta(pos int) (int64, int, bool) {
	var cnt int64
	digits := 0
	off := pos + 1
scan:
	for ; off < len(p.s) && p.s[off] != '\n'; off++ {
		c := p.s[off]
		if isSpace(c) {
			continue
		}
		for _, u := range timeUnits {
			if p.hasWord(off, u.name) {
				off += len(u.name)
				cnt *= u.secs
				break scan
			}
		}
		if !isDigit(c) || cnt > maxDelta {
			return 0, off - 1, false
		}
		cnt = cnt*10 + int64(c-'0')
		digits++
	}
	if digits == 0 {
		return 0, pos, false
	}
	return cnt, off - 1, true
}

// scanClock reads "H[H]:MM[:SS][ ][am|pm]" at pos.
func (p *timeParser) scanClock(pos int) (int, bool) {
	off := pos
	two := func(limit int) (int, bool) {
		if !isDigit(p.at(off)) {
			return 0, false
		}
		v := int(p.at(off) - '0')
		off++
		if !isDigit(p.at(off)) {
			return 0, false
		}
		v = v*10 + int(p.at(off)-'0')
		off++
		if v > limit {
			off -= 2
			return 0, false
		}
		return v, true
	}

	if !isDigit(p.at(off)) {
		return off, false
	}
	hr := int(p.at(off) - '0')
	off++
	if p.at(off) != ':' {
		if !isDigit(p.at(off)) {
			return off, false
		}
		hr = hr*10 + int(p.at(off)-'0')
		off++
	}
	if hr > 23 {
		return off - 2, false
	}
	if p.at(off) != ':' {
		return off, false
	}
	off++
	min, ok := two(59)
	if !ok {
		return off, false
	}
	sec := 0
	if p.at(off) == ':' {
		off++
		if sec, ok = two(59); !ok {
			return off, false
		}
	}
	for isSpace(p.at(off)) {
		off++
	}
	switch {
	case p.hasWord(off, "pm"):
		hr += 12
		if hr > 23 {
			if hr != 24 {
				return off, false
			}
			hr = 12
		}
		off += 2
	case p.hasWord(off, "am"):
		if hr > 11 {
			if hr != 12 {
				return off, false
			}
			hr = 0
		}
		off += 2
	}
	p.hour, p.minute, p.second = hr, min, sec
	return off - 1, true
}

// scanDate reads "YYYY-MM-DD" or "MM[/.]DD[[/.]YY]" at pos.
func (p *timeParser) scanDate(pos int) (int, bool) {
	off := pos
	// oneOrTwo reads a 1-2 digit number whose first byte has already been
	// vetted (or, as in Slurm, not: the month of YYYY-MM-DD is not checked
	// for being a digit before the range check refuses it).
	oneOrTwo := func(lo, hi int) (int, bool) {
		v := int(p.at(off)) - '0'
		off++
		if isDigit(p.at(off)) {
			v = v*10 + int(p.at(off)-'0')
			off++
		}
		if v < lo || v > hi {
			off -= 2
			return 0, false
		}
		return v, true
	}

	if len(p.s) >= off+7 && p.at(off+4) == '-' && p.at(off+7) == '-' {
		yr := 0
		for range 4 {
			if !isDigit(p.at(off)) {
				return off, false
			}
			yr = yr*10 + int(p.at(off)-'0')
			off++
		}
		off++ // the '-'
		mon, ok := oneOrTwo(1, 12)
		if !ok {
			return off, false
		}
		off++ // the '-'
		if !isDigit(p.at(off)) {
			return off, false
		}
		day, ok := oneOrTwo(1, 31)
		if !ok {
			return off, false
		}
		p.month, p.mday, p.tmYear = mon-1, day, yr-1900
		return off - 1, true
	}

	mon, ok := oneOrTwo(1, 12)
	if !ok {
		return off, false
	}
	if c := p.at(off); c == '.' || c == '/' {
		off++
	}
	if !isDigit(p.at(off)) {
		return off, false
	}
	day, ok := oneOrTwo(1, 31)
	if !ok {
		return off, false
	}
	if c := p.at(off); c == '.' || c == '/' {
		off++
	}
	yr := 0
	if isDigit(p.at(off)) {
		yr = int(p.at(off) - '0')
		off++
		if !isDigit(p.at(off)) {
			return off, false
		}
		yr = yr*10 + int(p.at(off)-'0')
		off++
	}
	p.month, p.mday = mon-1, day
	// A two-digit year "00" reads as no year at all, as in Slurm.
	if yr != 0 {
		p.tmYear = yr + 100
	}
	return off - 1, true
}

// resolve fills in what the input left out, as parse_time does, and builds
// the time in the caller's location.
func (p *timeParser) resolve(past bool) (time.Time, error) {
	n := p.nowTm
	switch {
	case p.hour == -1 && p.month == -1:
		return time.Time{}, &TimeError{Input: p.s, Pos: len(p.s), NoTime: true}
	case p.hour == -1:
		// A date without a time means its midnight.
		p.hour, p.minute = 0, 0
	case p.month == -1:
		// A time without a date means its next occurrence (minutes
		// precision), or today when looking back.
		if past || p.hour > n.hour || (p.hour == n.hour && p.minute > n.minute) {
			p.setDate(n)
		} else {
			p.setDate(p.tomorrow())
		}
	}
	if p.tmYear == -1 {
		future := p.month > n.month ||
			(p.month == n.month && p.mday > n.mday) ||
			(p.month == n.month && p.mday == n.mday && p.hour > n.hour) ||
			(p.month == n.month && p.mday == n.mday && p.hour == n.hour && p.minute > n.minute)
		switch {
		case past && p.month > n.month:
			p.tmYear = n.year - 1
		case past, future:
			p.tmYear = n.year
		default:
			p.tmYear = n.year + 1
		}
	}
	return time.Date(p.tmYear+1900, time.Month(p.month+1), p.mday, p.hour, p.minute, p.second, 0, p.loc), nil
}
