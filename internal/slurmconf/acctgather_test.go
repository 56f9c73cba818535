package slurmconf

import (
	"testing"
	"time"
)

func TestParseAcctGatherFrequency(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"30": 30 * time.Second, "0": 0, "task=5": 5 * time.Second,
		"energy=60,task=10": 10 * time.Second, "network=0": DefaultJobAcctGatherFrequency,
	} {
		got, err := ParseAcctGatherFrequency(in)
		if err != nil || got != want {
			t.Errorf("ParseAcctGatherFrequency(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "task", "task=x", "gpu=3", "70000"} {
		if _, err := ParseAcctGatherFrequency(in); err == nil {
			t.Errorf("ParseAcctGatherFrequency(%q) succeeded", in)
		}
	}
}

func FuzzParseAcctGatherFrequency(f *testing.F) {
	for _, s := range []string{"30", "task=5,energy=60", "x=", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAcctGatherFrequency(s)
		if err == nil && (d < 0 || d > 65535*time.Second) {
			t.Fatalf("%q: %v", s, d)
		}
	})
}
