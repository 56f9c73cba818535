package getopt

import "strings"

// SplitList reads a comma-separated option value ("-u alice, bob"): items
// trimmed of spaces, empty ones dropped.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
