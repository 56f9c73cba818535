package outpattern

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// referenceWildcard finds what Expand consumes after a '%': optional digits
// and the next character, if any.
var referenceWildcard = regexp.MustCompile(`(?s)%([0-9]*)(.?)`)

// referenceExpand is an independent, regexp-based reading of Slurm's
// rules, used to check Expand.
func referenceExpand(pattern string, v Values) string {
	if strings.Contains(pattern, `\`) {
		return strings.ReplaceAll(pattern, `\`, "")
	}
	return referenceWildcard.ReplaceAllStringFunc(pattern, func(m string) string {
		sub := referenceWildcard.FindStringSubmatch(m)
		digits, c := sub[1], sub[2]
		switch {
		case c == "" && digits == "":
			return "" // trailing '%'
		case c == "":
			return m // trailing "%12"
		case c == "%" && digits == "":
			return "%"
		}
		pad := 0
		if digits != "" {
			n, err := strconv.ParseUint(digits, 10, 64)
			if err != nil || n > 9 {
				n = 10
			}
			pad = int(n)
		}
		num := func(n uint64) string {
			s := strconv.FormatUint(n, 10)
			for len(s) < pad {
				s = "0" + s
			}
			return s
		}
		node := !v.Srun
		switch {
		case c == "A" && v.ArrayJobID != 0:
			return num(uint64(v.ArrayJobID))
		case c == "A", c == "j":
			return num(uint64(v.JobID))
		case c == "J" && v.StepID == BatchStep:
			return num(uint64(v.JobID))
		case c == "J":
			return num(uint64(v.JobID)) + "." + strconv.Itoa(int(int32(v.StepID)))
		case c == "a":
			return num(uint64(v.ArrayTaskID))
		case c == "b":
			return num(uint64(v.ArrayTaskID % 10))
		case c == "r":
			return num(uint64(v.RestartCount))
		case c == "S":
			return v.SLUID
		case c == "s" && v.StepID == BatchStep:
			return "batch"
		case c == "s":
			return num(uint64(v.StepID))
		case c == "x":
			return v.JobName
		case c == "N" && node:
			return v.NodeName
		case c == "n" && node:
			return num(uint64(v.NodeID))
		case c == "t" && node:
			return num(uint64(v.TaskID))
		case c == "u" && node:
			return v.User
		}
		return m
	})
}

// FuzzExpand checks Expand against the regexp reading of the rules, that
// nothing it should consume survives, and that PerTask agrees with what
// actually varies between nodes.
func FuzzExpand(f *testing.F) {
	for _, s := range []string{
		"slurm-%j.out", "slurm-%A_%a.out", "%J-%s-%x-%N-%n-%t-%u-%r-%b-%S", `\%j`, "%%j", "%5%j",
		"%010j", "%99999999999999999999j", "out%", "out%12", "%q%5q", "ö%ü%j", "%", "%%%t", `a\\b`,
	} {
		f.Add(s, false, uint32(4294967291))
	}
	f.Add("%j-%N-%4t", true, uint32(0))
	f.Fuzz(func(t *testing.T, pattern string, srun bool, step uint32) {
		v := Values{
			JobID: 131, ArrayJobID: 130, ArrayTaskID: 17, StepID: step, NodeName: "rc1", NodeID: 3,
			TaskID: 5, User: "root", JobName: "job", RestartCount: 2, SLUID: "sl", Srun: srun,
		}
		got := Expand(pattern, v)
		if want := referenceExpand(pattern, v); got != want {
			t.Fatalf("Expand(%q) = %q, reference says %q", pattern, got, want)
		}
		// Doubling every '%' of backslash-free text must give it back:
		// nothing is left unconsumed and nothing is expanded.
		if !strings.Contains(pattern, `\`) {
			if back := Expand(strings.ReplaceAll(pattern, "%", "%%"), v); back != pattern {
				t.Fatalf("Expand of %q with every %% doubled = %q", pattern, back)
			}
		}
		// With no '%' that could start a wildcard, a plain pattern has
		// no "%j"-style sequence left in its expansion.
		if !strings.Contains(pattern, `\`) && !strings.Contains(pattern, "%%") && !regexp.MustCompile(`%[0-9]*%`).MatchString(pattern) {
			rest := "AabJjrSsx"
			if !srun {
				rest += "Nntu"
			}
			if regexp.MustCompile(`%[0-9]*[` + rest + `]`).MatchString(got) {
				t.Fatalf("Expand(%q) = %q still holds a wildcard", pattern, got)
			}
		}
		a, b := v, v
		a.Srun, b.Srun = false, false
		b.NodeName, b.NodeID, b.TaskID, b.User = "rc2", 4, 6, "alice"
		if differs := Expand(pattern, a) != Expand(pattern, b); differs != PerTask(pattern) {
			t.Fatalf("PerTask(%q) = %v, but node values change the expansion: %v", pattern, PerTask(pattern), differs)
		}
		if p := Path("/w", pattern, v); pattern != "" && !srun && !strings.HasPrefix(pattern, "/") && !strings.HasPrefix(p, "/w/") {
			t.Fatalf("Path(/w, %q) = %q lacks the working directory", pattern, p)
		}
	})
}
