package sprio

import (
	"bytes"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/priority"
)

func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{formatDefault, formatLong, formatNorm, "%i|%Y|%J|%N", "%.5", "%Z", "x%", "%99999i"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, format string) {
		fields, err := parseFormat(format)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "Invalid job format specification: ") {
				t.Fatalf("%q: %v", format, err)
			}
			return
		}
		var b bytes.Buffer
		printLine(&b, fields, func(f field) string { return "0123456789abcdef" })
		for _, fl := range fields {
			if fl.width > 1024 {
				t.Fatalf("%q: width %d", format, fl.width)
			}
		}
	})
}

func TestDropZeroWeights(t *testing.T) {
	got := dropZeroWeights(formatDefault, &priorityConfigForTest)
	if got != "%.15i %9r %.10Y %.10S %.10A %.10J %.10P" {
		t.Errorf("got %q", got)
	}
}

var priorityConfigForTest = priority.Config{WeightAge: 1, WeightJobSize: 1, WeightPartition: 1}
