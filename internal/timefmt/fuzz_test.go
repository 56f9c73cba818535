package timefmt

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzParseLimit checks that every accepted limit prints back to itself in
// both display formats, and that the seconds parser agrees with it.
func FuzzParseLimit(f *testing.F) {
	for _, s := range []string{
		"0", "60", "30:00", "0:1", "1:00:00", "1-0", "2-03:04:05", "3-", "-0", "-1", "-5",
		"UNLIMITED", "infinite", "", "abc", "1:2:3:4", "1:90", "35791393", "35791394",
		"24855-3:14:07", "1-:30", "5:", "::", "0000000000000000000001",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLimit(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidLimit) {
				t.Fatalf("ParseLimit(%q) error %v does not match ErrInvalidLimit", s, err)
			}
			return
		}
		for _, out := range []string{l.String(), l.Padded()} {
			back, err := ParseLimit(out)
			if err != nil {
				t.Fatalf("ParseLimit(%q) = %+v prints %q, which does not parse: %v", s, l, out, err)
			}
			if back != l {
				t.Fatalf("ParseLimit(%q) = %+v prints %q, which parses to %+v", s, l, out, back)
			}
		}
		secs, inf, err := ParseSeconds(s)
		if err != nil || inf != l.Infinite || (!inf && uint32((secs+59)/60) != l.Minutes) {
			t.Fatalf("ParseSeconds(%q) = %d, %v, %v; disagrees with ParseLimit's %+v", s, secs, inf, err, l)
		}
		opt, err := ParseTimeOption(s)
		if err != nil || (!opt.Infinite && opt.Minutes == 0) {
			t.Fatalf("ParseTimeOption(%q) = %+v, %v; want a non-zero limit", s, opt, err)
		}
	})
}

// FuzzParseTime checks that no input panics either parser, that results
// stay in the caller's location, and that refusals carry a sensible
// position.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{
		"10:00", "4:00 pm", "12:30am", "2026-12-01T10:00:30", "2027-02-30", "1225", "010228", "12/25/27",
		"12.25.27", "11/30-14:00", "now", "now+1hour", "now - 2 weeks", "NOW+1DAYS", "today", "tomorrow noon",
		"todayTteatime", "midnight", "elevenses", "fika", "uts1800000000", "25:00", "0p/12", "now+", "now 10",
		"", " -T", "Today", "16:00\nx", "2026-1x-05", "9999-12-31T23:59:59", "now+99999999999999999999weeks",
	} {
		f.Add(s, int64(1795964385))
	}
	f.Add("tomorrow", int64(1774737000))
	f.Add("now-1", int64(-1))
	f.Fuzz(func(t *testing.T, s string, nowUnix int64) {
		// Keep "now" within years Slurm can represent; the parser itself
		// must cope with whatever the input asks for.
		nowUnix %= 1 << 36
		loc := time.FixedZone("X", int(nowUnix%(14*3600)))
		now := time.Unix(nowUnix, 0).In(loc)
		for _, parse := range []func(string, time.Time) (time.Time, error){ParseTime, ParseTimePast} {
			got, err := parse(s, now)
			if err != nil {
				var te *TimeError
				if !errors.As(err, &te) {
					t.Fatalf("%q: error %v is not a *TimeError", s, err)
				}
				if !te.NoTime && (te.Pos < -1 || te.Pos > len(s)) {
					t.Fatalf("%q: error position %d outside the input", s, te.Pos)
				}
				if !strings.Contains(te.Error(), "Invalid time specification") {
					t.Fatalf("%q: error text %q", s, te.Error())
				}
				continue
			}
			if got.Location() != loc {
				t.Fatalf("%q: result in %v, want %v", s, got.Location(), loc)
			}
		}
	})
}

// FuzzStrftime checks that no format panics the formatter and that text
// without conversions passes through.
func FuzzStrftime(f *testing.F) {
	for _, s := range []string{
		"%FT%T", "%s", "%Y-%m-%d %H:%M", "%a %b %e", "%c", "%-d %_m %05Y %^a %#b %#p", "%10q", "%",
		"%99999999999d", "%Ez%Oa%EY", "plain", "relative", "standard", "%z%Z%%", "%0_-^#5j",
	} {
		f.Add(s, int64(1795964385))
	}
	f.Fuzz(func(t *testing.T, format string, epoch int64) {
		epoch %= 1 << 40
		tm := time.Unix(epoch, 0).UTC()
		out := Strftime(tm, format)
		if !strings.Contains(format, "%") && out != format {
			t.Fatalf("Strftime(%q) = %q, want the format unchanged", format, out)
		}
		if got := FormatEpoch(epoch, tm, format); got == "" && out != "" && layoutFor(tm, tm, format) == format {
			t.Fatalf("FormatEpoch(%d, %q) is empty, Strftime gave %q", epoch, format, out)
		}
	})
}
