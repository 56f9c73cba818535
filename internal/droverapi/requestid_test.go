package droverapi

import (
	"strings"
	"testing"
)

func TestValidRequestID(t *testing.T) {
	tests := map[string]struct {
		id   string
		want bool
	}{
		"uuid":              {"0f8fad5b-d9cb-469f-a165-70867728950e", true},
		"every class":       {"aZ09_-", true},
		"one character":     {"x", true},
		"64 characters":     {strings.Repeat("a", 64), true},
		"empty":             {"", false},
		"65 characters":     {strings.Repeat("a", 65), false},
		"space":             {"a b", false},
		"dot":               {"a.b", false},
		"slash":             {"a/b", false},
		"colon":             {"a:b", false},
		"non-ASCII letter":  {"ä", false},
		"control character": {"a\x00", false},
	}
	for name, tc := range tests {
		if got := ValidRequestID(tc.id); got != tc.want {
			t.Errorf("%s: ValidRequestID(%q) = %v, want %v", name, tc.id, got, tc.want)
		}
	}
}
