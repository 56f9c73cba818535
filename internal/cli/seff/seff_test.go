package seff

import "testing"

func TestUnits(t *testing.T) {
	for kb, want := range map[float64]string{0: "0.00 MB", 500: "500.00 KB", 2048: "2.00 MB", 1536 * 1024: "1.50 GB"} {
		if got := kbytes(kb); got != want {
			t.Errorf("kbytes(%v) = %q, want %q", kb, got, want)
		}
	}
	for secs, want := range map[int64]string{0: "00:00:00", 75: "00:01:15", 90061: "1-01:01:01"} {
		if got := clock(secs); got != want {
			t.Errorf("clock(%d) = %q, want %q", secs, got, want)
		}
	}
}
