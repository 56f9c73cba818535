package seff

import "testing"

func TestUnits(t *testing.T) {
	for kb, want := range map[float64]string{0: "0.00 MB", 500: "500.00 KB", 2048: "2.00 MB", 1536 * 1024: "1.50 GB"} {
		if got := kbytes(kb); got != want {
			t.Errorf("kbytes(%v) = %q, want %q", kb, got, want)
		}
	}
}
