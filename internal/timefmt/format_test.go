package timefmt

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestFormatTimestamp(t *testing.T) {
	submit := at(2026, 11, 29, 14, 59, 45) // SubmitTime of job 128 in the captures
	tests := map[string]struct {
		t      time.Time
		format string
		want   string
	}{
		"standard by default":   {t: submit, want: "2026-11-29T14:59:45"},
		"standard by name":      {t: submit, format: "standard", want: "2026-11-29T14:59:45"},
		"zero time":             {t: time.Time{}, want: "N/A"},
		"zero time relative":    {t: time.Time{}, format: "relative", want: "N/A"},
		"relative today":        {t: at(2026, 11, 29, 12, 34, 56), format: "relative", want: "12:34:56"},
		"relative yesterday":    {t: at(2026, 11, 28, 12, 34, 0), format: "relative", want: "Ystday 12:34"},
		"relative tomorrow":     {t: at(2026, 11, 30, 9, 0, 0), format: "relative", want: "Tomorr 09:00"},
		"relative this week":    {t: at(2026, 12, 2, 2, 17, 0), format: "relative", want: "Wed 02:17"},
		"relative sixth day":    {t: at(2026, 12, 5, 2, 17, 0), format: "relative", want: "Sat 02:17"},
		"relative a week on":    {t: at(2026, 12, 6, 2, 17, 0), format: "relative", want: "6 Dec 02:17"},
		"relative days ago":     {t: at(2026, 11, 20, 8, 5, 0), format: "relative", want: "20 Nov 08:05"},
		"relative next year":    {t: at(2027, 1, 5, 12, 0, 0), format: "relative", want: "5 Jan 2027"},
		"relative far past":     {t: at(2025, 11, 1, 12, 0, 0), format: "relative", want: "1 Nov 2025"},
		"epoch seconds":         {t: submit, format: "%s", want: "1795964385"},
		"custom":                {t: submit, format: "%Y-%m-%d %H:%M", want: "2026-11-29 14:59"},
		"padded day":            {t: at(2026, 1, 5, 0, 0, 0), format: "%a %b %e", want: "Mon Jan  5"},
		"no percent is refused": {t: submit, format: "long", want: "2026-11-29T14:59:45"},
		"32 bytes is refused":   {t: submit, format: "%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y", want: "2026-11-29T14:59:45"},
		"31 bytes is taken":     {t: submit, format: "%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%Y%", want: "202620262026202620262026202620262026202620262026202620262026%"},
		"converted to now zone": {t: time.Date(2026, 11, 29, 9, 59, 45, 0, time.FixedZone("EST", -5*3600)), want: "2026-11-29T14:59:45"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := FormatTimestamp(tc.t, refNow, tc.format)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("FormatTimestamp(%v, %q) (-want +got):\n%s", tc.t, tc.format, diff)
			}
		})
	}
}

// TestRelativeNewYear pins Slurm's year*1000+yday distance: the last day of
// the year seen on New Year's Day is "far" and prints with its year.
func TestRelativeNewYear(t *testing.T) {
	now := at(2027, 1, 1, 10, 0, 0)
	got := FormatTimestamp(at(2026, 12, 31, 23, 0, 0), now, "relative")
	if diff := cmp.Diff("31 Dec 2026", got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFormatEpoch(t *testing.T) {
	tests := map[string]struct {
		epoch int64
		want  string
	}{
		"zero is unknown":     {epoch: 0, want: "Unknown"},
		"infinite is unknown": {epoch: EpochInfinite, want: "Unknown"},
		"no value is none":    {epoch: EpochNoVal, want: "None"},
		"a time":              {epoch: 1795964385, want: "2026-11-29T14:59:45"},
		"one second":          {epoch: 1, want: "1970-01-01T00:00:01"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, FormatEpoch(tc.epoch, refNow, "")); diff != "" {
				t.Errorf("FormatEpoch(%d) (-want +got):\n%s", tc.epoch, diff)
			}
		})
	}
}

func TestStrftime(t *testing.T) {
	ts := at(2026, 11, 29, 14, 59, 45)
	tests := map[string]struct {
		format string
		want   string
	}{
		"date and time":     {format: "%F %T", want: "2026-11-29 14:59:45"},
		"names":             {format: "%a %A %b %B %h", want: "Sun Sunday Nov November Nov"},
		"c locale":          {format: "%c", want: "Sun Nov 29 14:59:45 2026"},
		"composites":        {format: "%D %r %R %x %X", want: "11/29/26 02:59:45 PM 14:59 11/29/26 14:59:45"},
		"twelve hour":       {format: "%I %l %p %P", want: "02  2 PM pm"},
		"week numbers":      {format: "%j %U %W %V %G %g %u %w", want: "333 48 47 48 2026 26 7 0"},
		"century and years": {format: "%C %y %Y", want: "20 26 2026"},
		"space padded":      {format: "%e %k", want: "29 14"},
		"zone":              {format: "%z %Z", want: "+0000 UTC"},
		"flags":             {format: "%-d %_m %05Y %^a %#b %#p", want: "29 11 02026 SUN NOV pm"},
		"no pad":            {format: "%-m/%-d %-H", want: "11/29 14"},
		"width on text":     {format: "%10B|%-10a|%010a", want: "  November|       Sun|0000000Sun"},
		"literal percent":   {format: "100%% %5%", want: "100%     %"},
		"unknown copied":    {format: "%q %10q %Ey", want: "%q       %10q 26"},
		"refused modifier":  {format: "%Ea %OY %#Eh", want: "%Ea %OY %#EH"},
		"trailing percent":  {format: "x%", want: "x%"},
		"trailing flags":    {format: "x%-5", want: "x  %-5"},
		"tab and newline":   {format: "%t%n", want: "\t\n"},
		"no conversions":    {format: "plain", want: "plain"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Strftime(ts, tc.format)); diff != "" {
				t.Errorf("Strftime(%q) (-want +got):\n%s", tc.format, diff)
			}
		})
	}
}

// TestStrftimeVectors replays slurm_make_time_str answers recorded from
// Slurm with glibc's strftime.
func TestStrftimeVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/strftime.json")
	if err != nil {
		t.Fatal(err)
	}
	var groups []struct {
		TZ     string  `json:"tz"`
		Now    int64   `json:"now"`
		Epochs []int64 `json:"epochs"`
		Cases  [][]any `json:"cases"`
	}
	if err := json.Unmarshal(raw, &groups); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		loc, err := time.LoadLocation(g.TZ)
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(g.Now, 0).In(loc)
		for _, c := range g.Cases {
			format := c[0].(string)
			want := c[1].([]any)
			for i, e := range g.Epochs {
				got := FormatEpoch(e, now, format)
				if got != want[i].(string) {
					t.Errorf("%s SLURM_TIME_FORMAT=%q epoch %d: got %q, want %q", g.TZ, format, e, got, want[i])
				}
			}
		}
	}
}
