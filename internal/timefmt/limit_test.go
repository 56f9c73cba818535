package timefmt

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseLimit(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Limit
		wantErr bool
	}{
		"minutes":               {in: "60", want: Limit{Minutes: 60}},
		"zero stays zero":       {in: "0", want: Limit{Minutes: 0}},
		"minutes and seconds":   {in: "30:00", want: Limit{Minutes: 30}},
		"seconds round up":      {in: "0:1", want: Limit{Minutes: 1}},
		"seconds round up more": {in: "1:30", want: Limit{Minutes: 2}},
		"hours":                 {in: "1:00:00", want: Limit{Minutes: 60}},
		"hours round up":        {in: "1:00:01", want: Limit{Minutes: 61}},
		"days and hours":        {in: "1-0", want: Limit{Minutes: 1440}},
		"days hours minutes":    {in: "2-3:04", want: Limit{Minutes: 2*1440 + 3*60 + 4}},
		"days full":             {in: "2-03:04:05", want: Limit{Minutes: 2*1440 + 3*60 + 5}},
		"days only":             {in: "3-", want: Limit{Minutes: 3 * 1440}},
		"fields not checked":    {in: "1:90", want: Limit{Minutes: 3}},
		"leading zeros":         {in: "007", want: Limit{Minutes: 7}},
		"minus zero":            {in: "-0", want: Limit{Minutes: 0}},
		"UNLIMITED":             {in: "UNLIMITED", want: Unlimited},
		"unlimited lower case":  {in: "unlimited", want: Unlimited},
		"INFINITE":              {in: "Infinite", want: Unlimited},
		"minus one":             {in: "-1", want: Unlimited},
		"largest":               {in: "35791393", want: Limit{Minutes: 35791393}},
		"empty":                 {in: "", wantErr: true},
		"word":                  {in: "abc", wantErr: true},
		"space":                 {in: " 5", wantErr: true},
		"plus":                  {in: "+5", wantErr: true},
		"negative days":         {in: "-5", wantErr: true},
		"three colons":          {in: "1:2:3:4", wantErr: true},
		"two dashes":            {in: "1-2-3", wantErr: true},
		"dash after colon":      {in: "1:2-3", wantErr: true},
		"trailing colon":        {in: "5:", wantErr: true},
		"leading colon":         {in: ":5", wantErr: true},
		"missing hours":         {in: "1-:30", wantErr: true},
		"missing field":         {in: "1::2", wantErr: true},
		"overflow":              {in: "35791394", wantErr: true},
		"huge":                  {in: "99999999999999999999", wantErr: true},
		"unlimited with space":  {in: "UNLIMITED ", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseLimit(tc.in)
			if tc.wantErr {
				if !errors.Is(err, ErrInvalidLimit) {
					t.Fatalf("ParseLimit(%q) = %v, %v; want ErrInvalidLimit", tc.in, got, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseLimit(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseLimit(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestParseTimeOption(t *testing.T) {
	tests := map[string]struct {
		in   string
		want Limit
	}{
		"zero means no limit": {in: "0", want: Unlimited},
		"zero seconds":        {in: "0:0", want: Unlimited},
		"one second":          {in: "0:1", want: Limit{Minutes: 1}},
		"sixty":               {in: "60", want: Limit{Minutes: 60}},
		"unlimited":           {in: "UNLIMITED", want: Unlimited},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTimeOption(tc.in)
			if err != nil {
				t.Fatalf("ParseTimeOption(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseTimeOption(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
	if _, err := ParseTimeOption("abc"); !errors.Is(err, ErrInvalidLimit) {
		t.Errorf("ParseTimeOption(abc) error = %v, want ErrInvalidLimit", err)
	}
}

func TestParseSeconds(t *testing.T) {
	type result struct {
		Secs     int64
		Infinite bool
	}
	tests := map[string]struct {
		in   string
		want result
	}{
		"minutes":          {in: "2", want: result{Secs: 120}},
		"minutes seconds":  {in: "2:05", want: result{Secs: 125}},
		"hours":            {in: "1:00:01", want: result{Secs: 3601}},
		"days":             {in: "1-00:00:01", want: result{Secs: 86401}},
		"days hours":       {in: "1-2", want: result{Secs: 86400 + 7200}},
		"infinite":         {in: "INFINITE", want: result{Infinite: true}},
		"largest accepted": {in: "24855-3:14:07", want: result{Secs: 2147483647}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			secs, inf, err := ParseSeconds(tc.in)
			if err != nil {
				t.Fatalf("ParseSeconds(%q): %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, result{Secs: secs, Infinite: inf}); diff != "" {
				t.Errorf("ParseSeconds(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
	if _, _, err := ParseSeconds("24855-3:14:08"); !errors.Is(err, ErrInvalidLimit) {
		t.Errorf("ParseSeconds over INT_MAX: error = %v, want ErrInvalidLimit", err)
	}
}

// TestLimitVectors replays time_str2mins answers recorded from Slurm.
func TestLimitVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/limits.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		In            string  `json:"in"`
		Minutes       *uint32 `json:"minutes"`
		Infinite      bool    `json:"infinite"`
		Invalid       bool    `json:"invalid"`
		SlurmNegative bool    `json:"slurm_negative"`
		SlurmOverflow bool    `json:"slurm_overflow"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	for _, v := range vectors {
		got, err := ParseLimit(v.In)
		switch {
		case v.Invalid || v.SlurmNegative || v.SlurmOverflow:
			// Slurm refuses these, or computes a negative or overflowed
			// limit from them that Drover refuses.
			if err == nil {
				t.Errorf("ParseLimit(%q) = %v, want an error", v.In, got)
			}
		case v.Infinite:
			if err != nil || !got.Infinite {
				t.Errorf("ParseLimit(%q) = %v, %v; want UNLIMITED", v.In, got, err)
			}
		case v.Minutes != nil:
			if err != nil || got != (Limit{Minutes: *v.Minutes}) {
				t.Errorf("ParseLimit(%q) = %v, %v; want %d minutes", v.In, got, err, *v.Minutes)
			}
		default:
			t.Fatalf("vector %q has no expectation", v.In)
		}
	}
}

func TestLimitString(t *testing.T) {
	tests := map[string]struct {
		in         Limit
		wantString string
		wantPadded string
	}{
		"unlimited":    {in: Unlimited, wantString: "UNLIMITED", wantPadded: "UNLIMITED"},
		"zero":         {in: Limit{}, wantString: "0:00", wantPadded: "00:00:00"},
		"half hour":    {in: Limit{Minutes: 30}, wantString: "30:00", wantPadded: "00:30:00"},
		"one hour":     {in: Limit{Minutes: 60}, wantString: "1:00:00", wantPadded: "01:00:00"},
		"one day":      {in: Limit{Minutes: 1440}, wantString: "1-00:00:00", wantPadded: "1-00:00:00"},
		"days hours":   {in: Limit{Minutes: 2*1440 + 3*60 + 4}, wantString: "2-03:04:00", wantPadded: "2-03:04:00"},
		"over a year":  {in: Limit{Minutes: 400 * 1440}, wantString: "400-00:00:00", wantPadded: "400-00:00:00"},
		"23h59":        {in: Limit{Minutes: 1439}, wantString: "23:59:00", wantPadded: "23:59:00"},
		"infinite won": {in: Limit{Minutes: 5, Infinite: true}, wantString: "UNLIMITED", wantPadded: "UNLIMITED"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantString, tc.in.String()); diff != "" {
				t.Errorf("String() (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPadded, tc.in.Padded()); diff != "" {
				t.Errorf("Padded() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFormatDuration checks the squeue and scontrol renderings, including
// the values in the reference captures (squeue_default, squeue_o_many,
// scontrol_show_job_running).
func TestFormatDuration(t *testing.T) {
	tests := map[string]struct {
		secs       int64
		wantSqueue string
		wantPadded string
	}{
		"zero":            {secs: 0, wantSqueue: "0:00", wantPadded: "00:00:00"},
		"squeue running":  {secs: 75, wantSqueue: "1:15", wantPadded: "00:01:15"},
		"time left":       {secs: 58*60 + 45, wantSqueue: "58:45", wantPadded: "00:58:45"},
		"one second":      {secs: 1, wantSqueue: "0:01", wantPadded: "00:00:01"},
		"one hour":        {secs: 3600, wantSqueue: "1:00:00", wantPadded: "01:00:00"},
		"days":            {secs: 2*86400 + 3*3600 + 4*60 + 5, wantSqueue: "2-03:04:05", wantPadded: "2-03:04:05"},
		"a year":          {secs: 365 * 86400, wantSqueue: "365-00:00:00", wantPadded: "365-00:00:00"},
		"over a year":     {secs: 365*86400 + 1, wantSqueue: "INVALID", wantPadded: "365-00:00:01"},
		"negative":        {secs: -1, wantSqueue: "INVALID", wantPadded: "INVALID"},
		"slurm INFINITE":  {secs: 0xffffffff, wantSqueue: "INVALID", wantPadded: "UNLIMITED"},
		"just below that": {secs: 0xfffffffe, wantSqueue: "INVALID", wantPadded: "49710-06:28:14"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantSqueue, FormatDuration(tc.secs)); diff != "" {
				t.Errorf("FormatDuration(%d) (-want +got):\n%s", tc.secs, diff)
			}
			if diff := cmp.Diff(tc.wantPadded, FormatDurationPadded(tc.secs)); diff != "" {
				t.Errorf("FormatDurationPadded(%d) (-want +got):\n%s", tc.secs, diff)
			}
		})
	}
}
