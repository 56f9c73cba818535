package cstrconv

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestStrtol(t *testing.T) {
	for in, want := range map[string]struct {
		n    int64
		rest string
	}{
		"12":                    {12, ""},
		"12_3":                  {12, "_3"},
		"  +7x":                 {7, "x"},
		"\t-42":                 {-42, ""},
		"":                      {0, ""},
		"abc":                   {0, "abc"},
		"+":                     {0, "+"},
		" - 1":                  {0, " - 1"},
		"9223372036854775807":   {math.MaxInt64, ""},
		"9223372036854775808":   {math.MaxInt64, ""},
		"-9223372036854775808":  {math.MinInt64, ""},
		"-9223372036854775809":  {math.MinInt64, ""},
		"99999999999999999999x": {math.MaxInt64, "x"},
	} {
		n, rest := Strtol(in)
		if n != want.n || rest != want.rest {
			t.Errorf("Strtol(%q) = %d, %q; want %d, %q", in, n, rest, want.n, want.rest)
		}
	}
}

func TestAtol(t *testing.T) {
	for in, want := range map[string]struct {
		n  int64
		ok bool
	}{
		"12":                   {12, true},
		" +12":                 {12, true},
		"-3":                   {-3, true},
		"12 ":                  {0, false},
		"":                     {0, false},
		"  ":                   {0, false},
		"-":                    {0, false},
		"1e3":                  {0, false},
		"9223372036854775807":  {math.MaxInt64, true},
		"9223372036854775808":  {0, false},
		"-9223372036854775808": {math.MinInt64, true},
	} {
		n, ok := Atol(in)
		if n != want.n || ok != want.ok {
			t.Errorf("Atol(%q) = %d, %v; want %d, %v", in, n, ok, want.n, want.ok)
		}
	}
}

// Where Go's strconv reads a whole string, Atol agrees with it.
func FuzzStrtol(f *testing.F) {
	for _, s := range []string{"12", "-0", "+12_3", " 9223372036854775808", "-9223372036854775809", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, rest := Strtol(s)
		if !strings.HasSuffix(s, rest) {
			t.Fatalf("Strtol(%q): rest %q is not a suffix", s, rest)
		}
		// A sign and digits to the end: strconv reads it too.
		trimmed := strings.TrimLeft(s, " \t\n\v\f\r")
		digits := strings.TrimLeft(trimmed, "+-")
		if len(trimmed)-len(digits) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" {
			return
		}
		if want, err := strconv.ParseInt(strings.TrimPrefix(trimmed, "+"), 10, 64); err == nil {
			if rest != "" || n != want {
				t.Fatalf("Strtol(%q) = %d, %q; strconv reads %d", s, n, rest, want)
			}
			if m, ok := Atol(s); !ok || m != want {
				t.Fatalf("Atol(%q) = %d, %v; strconv reads %d", s, m, ok, want)
			}
		}
	})
}
