package timefmt

import (
	"strconv"
	"strings"
	"time"
)

var (
	shortDays   = [...]string{"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"}
	longDays    = [...]string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	shortMonths = [...]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	longMonths  = [...]string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// Strftime formats t with a C strftime(3) format as glibc does in the C
// locale, because Slurm hands SLURM_TIME_FORMAT to the C library's strftime.
//
// Conversions: %a %A %b %B %c %C %d %D %e %F %g %G %h %H %I %j %k %l %m %M
// %n %p %P %r %R %s %S %t %T %u %U %V %w %W %x %X %y %Y %z %Z %%. GNU flags:
// '_' (pad with spaces), '-' (do not pad numbers), '0' (pad with zeros), '^'
// (upper case), '#' (swap case: upper-case names, lower-case %p and %Z); a
// field width ("%10Y"); the E and O modifiers where glibc accepts them (no
// effect in the C locale). Anything else, including a modifier glibc
// refuses, is copied through as written, as glibc does.
func Strftime(t time.Time, format string) string {
	b := &strings.Builder{}
	strftimeTo(b, t, format)
	return b.String()
}

// convSpec is what sits between a '%' and its conversion letter.
type convSpec struct {
	pad        byte // '_', '-', '0' or 0, the last one given
	upper      bool // '^'
	changeCase bool // '#'
	lower      bool // set by %P, %p and %Z under '#'
	width      int  // -1 when not given
	modifier   byte // 'E', 'O' or 0
}

func strftimeTo(b *strings.Builder, t time.Time, format string) {
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		start := i
		s := convSpec{width: -1}
		j := i + 1
	flags:
		for ; j < len(format); j++ {
			switch c := format[j]; c {
			case '_', '-', '0':
				s.pad = c
			case '^':
				s.upper = true
			case '#':
				s.changeCase = true
			default:
				break flags
			}
		}
		if j < len(format) && isDigit(format[j]) {
			s.width = 0
			for ; j < len(format) && isDigit(format[j]); j++ {
				// glibc saturates at INT_MAX; nothing prints that wide,
				// so cap at something that still fits in memory.
				if s.width < 1<<12 {
					s.width = s.width*10 + int(format[j]-'0')
				}
			}
			if s.width > 1<<12 {
				s.width = 1 << 12
			}
		}
		if j < len(format) && (format[j] == 'E' || format[j] == 'O') {
			s.modifier = format[j]
			j++
		}
		if j >= len(format) {
			// '%' (with flags) at the very end: copied as written.
			s.text(b, format[start:])
			return
		}
		if !s.convert(b, t, format[j]) {
			s.text(b, format[start:j+1])
		}
		i = j
	}
}

// add writes v right-aligned in the field width, padding with zeros under
// the '0' flag and spaces otherwise (glibc's add()).
func (s *convSpec) add(b *strings.Builder, v string) {
	if d := s.width - len(v); d > 0 {
		fill := " "
		if s.pad == '0' {
			fill = "0"
		}
		b.WriteString(strings.Repeat(fill, d))
	}
	b.WriteString(v)
}

// text writes v after the case conversions (lower wins over upper, as in
// glibc's cpy()).
func (s *convSpec) text(b *strings.Builder, v string) {
	switch {
	case s.lower:
		v = strings.ToLower(v)
	case s.upper:
		v = strings.ToUpper(v)
	}
	s.add(b, v)
}

// name writes a day or month name, which '#' turns to upper case.
func (s *convSpec) name(b *strings.Builder, v string) {
	if s.changeCase {
		s.upper, s.lower = true, false
	}
	s.text(b, v)
}

// sub expands a composite conversion (%c, %D, %T...) as a format of its
// own, then pads it and applies '^' to it.
func (s *convSpec) sub(b *strings.Builder, t time.Time, format string) {
	inner := &strings.Builder{}
	strftimeTo(inner, t, format)
	v := inner.String()
	if s.upper {
		v = strings.ToUpper(v)
	}
	s.add(b, v)
}

// number writes a numeric conversion of natural width digits; spacePad
// marks the conversions padded with spaces by default (%e %k %l).
func (s *convSpec) number(b *strings.Builder, v int64, digits int, spacePad bool) {
	if digits < s.width {
		digits = s.width
	}
	if spacePad && s.pad != '0' && s.pad != '-' {
		s.pad = '_'
	}
	s.signed(b, v, digits)
}

// signed writes v padded to digits as glibc's do_number_sign_and_padding
// does: padding goes between sign and digits with zeros, before the sign
// with spaces, and whatever field width is left pads the result again.
func (s *convSpec) signed(b *strings.Builder, v int64, digits int) {
	neg := v < 0
	abs := strconv.FormatUint(absU(v), 10)
	str := abs
	if neg {
		str = "-" + abs
	}
	if s.pad != '-' {
		if padding := digits - len(str); padding > 0 {
			if s.pad == '_' {
				b.WriteString(strings.Repeat(" ", padding))
				if s.width > padding {
					s.width -= padding
				} else {
					s.width = 0
				}
			} else {
				if neg {
					b.WriteByte('-')
					str = abs
				}
				b.WriteString(strings.Repeat("0", padding))
				s.width = 0
			}
		}
	}
	s.text(b, str)
}

func absU(v int64) uint64 {
	if v < 0 {
		return uint64(-(v + 1)) + 1
	}
	return uint64(v)
}

// convert expands one conversion letter; false means glibc would copy the
// conversion through as written.
func (s *convSpec) convert(b *strings.Builder, t time.Time, conv byte) bool {
	noE := s.modifier != 'E'
	noO := s.modifier != 'O'
	switch conv {
	case '%':
		s.add(b, "%")
	case 'a':
		if s.modifier != 0 {
			return false
		}
		s.name(b, shortDays[t.Weekday()])
	case 'A':
		if s.modifier != 0 {
			return false
		}
		s.name(b, longDays[t.Weekday()])
	case 'b', 'h':
		if !noE {
			// glibc applies '#' here before refusing the modifier, so
			// the refused text comes out in upper case.
			if s.changeCase {
				s.upper, s.lower = true, false
			}
			return false
		}
		s.name(b, shortMonths[t.Month()-1])
	case 'B':
		if !noE {
			return false
		}
		s.name(b, longMonths[t.Month()-1])
	case 'c':
		if !noO {
			return false
		}
		s.sub(b, t, "%a %b %e %H:%M:%S %Y")
	case 'C':
		y := t.Year()
		c := y / 100
		if y%100 < 0 {
			c--
		}
		s.number(b, int64(c), 1, false)
	case 'x':
		if !noO {
			return false
		}
		s.sub(b, t, "%m/%d/%y")
	case 'D':
		if s.modifier != 0 {
			return false
		}
		s.sub(b, t, "%m/%d/%y")
	case 'd':
		if !noE {
			return false
		}
		s.number(b, int64(t.Day()), 2, false)
	case 'e':
		if !noE {
			return false
		}
		s.number(b, int64(t.Day()), 2, true)
	case 'F':
		if s.modifier != 0 {
			return false
		}
		s.sub(b, t, "%Y-%m-%d")
	case 'H':
		if !noE {
			return false
		}
		s.number(b, int64(t.Hour()), 2, false)
	case 'I':
		if !noE {
			return false
		}
		s.number(b, int64(hour12(t)), 2, false)
	case 'k':
		if !noE {
			return false
		}
		s.number(b, int64(t.Hour()), 2, true)
	case 'l':
		if !noE {
			return false
		}
		s.number(b, int64(hour12(t)), 2, true)
	case 'j':
		if !noE {
			return false
		}
		s.number(b, int64(t.YearDay()), 3, false)
	case 'M':
		if !noE {
			return false
		}
		s.number(b, int64(t.Minute()), 2, false)
	case 'm':
		if !noE {
			return false
		}
		s.number(b, int64(t.Month()), 2, false)
	case 'n':
		s.add(b, "\n")
	case 't':
		s.add(b, "\t")
	case 'P', 'p':
		if conv == 'P' || s.changeCase {
			s.upper, s.lower = false, true
		}
		if conv == 'P' {
			// %P lower-cases even under '^'.
			s.upper = false
		}
		if t.Hour() > 11 {
			s.text(b, "PM")
		} else {
			s.text(b, "AM")
		}
	case 'R':
		s.sub(b, t, "%H:%M")
	case 'r':
		s.sub(b, t, "%I:%M:%S %p")
	case 'S':
		if !noE {
			return false
		}
		s.number(b, int64(t.Second()), 2, false)
	case 's':
		// Seconds since the epoch are padded only up to the field width.
		s.signed(b, t.Unix(), 1)
	case 'X':
		if !noO {
			return false
		}
		s.sub(b, t, "%H:%M:%S")
	case 'T':
		s.sub(b, t, "%H:%M:%S")
	case 'u':
		s.number(b, int64((int(t.Weekday())+6)%7+1), 1, false)
	case 'U':
		if !noE {
			return false
		}
		s.number(b, int64((t.YearDay()-1-int(t.Weekday())+7)/7), 2, false)
	case 'V', 'g', 'G':
		if !noE {
			return false
		}
		year, week := t.ISOWeek()
		switch conv {
		case 'g':
			s.number(b, int64((year%100+100)%100), 2, false)
		case 'G':
			s.number(b, int64(year), 1, false)
		default:
			s.number(b, int64(week), 2, false)
		}
	case 'W':
		if !noE {
			return false
		}
		s.number(b, int64((t.YearDay()-1-(int(t.Weekday())+6)%7+7)/7), 2, false)
	case 'w':
		if !noE {
			return false
		}
		s.number(b, int64(t.Weekday()), 1, false)
	case 'Y':
		if !noO {
			return false
		}
		s.number(b, int64(t.Year()), 1, false)
	case 'y':
		s.number(b, int64((t.Year()%100+100)%100), 2, false)
	case 'Z':
		if s.changeCase {
			s.upper, s.lower = false, true
		}
		name, _ := t.Zone()
		s.text(b, name)
	case 'z':
		_, off := t.Zone()
		sign := "+"
		if off < 0 {
			sign, off = "-", -off
		}
		s.add(b, sign)
		off /= 60
		s.number(b, int64(off/60*100+off%60), 4, false)
	default:
		return false
	}
	return true
}

func hour12(t time.Time) int {
	h := t.Hour() % 12
	if h == 0 {
		return 12
	}
	return h
}
