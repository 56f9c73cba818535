// Package arrayspec parses and prints job array index expressions: the
// argument of sbatch --array ("0-99", "1,3,5-7", "0-99:3", "0-9%2") and the
// pending-task strings squeue (%K, "131_[2-9%2]") and slurmrestd
// (array_task_string) show.
//
// Parsing follows slurmctld's validation of a submitted array
// (slurm_parse_array_tok over the comma-separated tokens), which is where
// Slurm rejects a bad --array: sbatch itself passes the text through. Every
// failure carries Slurm's single error for it, ESLURM_INVALID_ARRAY
// ("Invalid job array specification"); Slurm has no separate "index too
// large" error.
package arrayspec

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/slurmerr"
)

// DefaultMaxArraySize is slurm.conf's MaxArraySize default: task ids must
// be below it.
const DefaultMaxArraySize = 1001

// DefaultBitstrLen is how many bytes of a pending-task list Slurm's
// commands print unless SLURM_BITSTR_LEN says otherwise.
const DefaultBitstrLen = 64

// maxBitstrLen is the most SLURM_BITSTR_LEN may ask for.
const maxBitstrLen = 4096

// Spec is a parsed --array expression.
type Spec struct {
	// Tasks are the array task ids, sorted, without duplicates.
	Tasks []uint32
	// MaxRunning is the "%N" throttle: at most this many tasks run at
	// once; 0 means no limit.
	MaxRunning uint32
}

// Error reports an array expression slurmctld would refuse. It matches
// slurmerr.InvalidArray with errors.Is and slurmerr.CodeOf, so the shim
// and the REST envelope print Slurm's "Invalid job array specification";
// Error() adds the reason, for logs.
type Error struct {
	// Spec is the expression as given.
	Spec string
	// Reason says what is wrong with it.
	Reason string
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("invalid job array specification %q: %s", e.Spec, e.Reason)
}

// Unwrap exposes the Slurm error code.
func (e *Error) Unwrap() error { return slurmerr.Sentinel(slurmerr.InvalidArray) }

// Parse parses an --array expression. Indices must be below maxArraySize
// (slurm.conf MaxArraySize, DefaultMaxArraySize when unset); a step must be
// positive and below it too. As in Slurm, empty comma-separated items are
// skipped, each item may be wrapped in brackets ("[1-3]"), a '%' ends the
// item it appears in, and the throttle is read from the first '%' on
// (leading digits; "%0" or no digits mean no limit).
//
// Parse is stricter than Slurm in refusing white space and signs
// ("1, 3", "+5", "-0"), which Slurm's strtol happens to skip over, and a
// '%' or bracket with no index before it ("%4" alone), which Slurm reads as
// task 0. An empty expression is an error: callers treat "no --array" before
// calling Parse.
func Parse(s string, maxArraySize uint32) (Spec, error) {
	fail := func(format string, args ...any) (Spec, error) {
		return Spec{}, &Error{Spec: s, Reason: fmt.Sprintf(format, args...)}
	}
	if maxArraySize == 0 {
		return fail("job arrays are disabled (MaxArraySize=0)")
	}
	if i := strings.IndexAny(s, " \t\n\v\f\r"); i >= 0 {
		return fail("white space at offset %d", i)
	}
	type span struct{ first, last, step uint32 }
	var spans []span
	top := uint32(0)
	for tok := range strings.SplitSeq(s, ",") {
		if tok == "" {
			continue
		}
		first, last, step, err := parseToken(tok, maxArraySize)
		if err != "" {
			return fail("%s", err)
		}
		spans = append(spans, span{first, last, step})
		top = max(top, last)
	}
	if len(spans) == 0 {
		return fail("no indices")
	}
	// A bitmap up to the highest index, not up to MaxArraySize: the
	// result is sorted and unique for free, and "1" costs nothing even
	// under a huge MaxArraySize.
	set := make([]uint64, uint64(top)/64+1)
	for _, sp := range spans {
		for i := uint64(sp.first); i <= uint64(sp.last); i += uint64(sp.step) {
			set[i/64] |= 1 << (i % 64)
		}
	}
	maxRunning, err := throttle(s)
	if err != "" {
		return fail("%s", err)
	}
	spec := Spec{MaxRunning: maxRunning}
	for w, word := range set {
		for word != 0 {
			b := bits.TrailingZeros64(word)
			spec.Tasks = append(spec.Tasks, uint32(w*64+b))
			word &^= 1 << b
		}
	}
	return spec, nil
}

// parseToken reads one comma-separated item: "[N[-M[:S]]]" followed by
// nothing or by '%' and anything. It returns a non-empty reason on error.
func parseToken(tok string, limit uint32) (first, last, step uint32, reason string) {
	p := strings.TrimPrefix(tok, "[")
	num := func() (uint32, bool) {
		n := 0
		var v uint64
		for n < len(p) && p[n] >= '0' && p[n] <= '9' {
			if v <= uint64(limit) {
				v = v*10 + uint64(p[n]-'0')
			}
			n++
		}
		if n == 0 {
			return 0, false
		}
		p = strings.TrimPrefix(p[n:], "]")
		if v > uint64(limit) {
			// Anything this large is refused below; saturate rather
			// than overflow.
			v = uint64(limit)
		}
		return uint32(v), true
	}
	ended := func() bool { return p == "" || p[0] == '%' }

	var ok bool
	if first, ok = num(); !ok {
		return 0, 0, 0, fmt.Sprintf("%q: index expected", tok)
	}
	last, step = first, 1
	if strings.HasPrefix(p, "-") {
		p = p[1:]
		if last, ok = num(); !ok {
			return 0, 0, 0, fmt.Sprintf("%q: range end expected", tok)
		}
		if strings.HasPrefix(p, ":") {
			p = p[1:]
			if step, ok = num(); !ok {
				return 0, 0, 0, fmt.Sprintf("%q: step expected", tok)
			}
			if step == 0 || step >= limit {
				return 0, 0, 0, fmt.Sprintf("%q: step must be between 1 and %d", tok, limit-1)
			}
		}
		if last < first {
			return 0, 0, 0, fmt.Sprintf("%q: range end below its start", tok)
		}
	}
	if !ended() {
		return 0, 0, 0, fmt.Sprintf("%q: unexpected %q", tok, p)
	}
	if last >= limit {
		return 0, 0, 0, fmt.Sprintf("%q: index too large (MaxArraySize=%d)", tok, limit)
	}
	return first, last, step, ""
}

// throttle reads the number after the first '%' as Slurm's atoi does
// (optional sign, leading digits; nothing or a negative number means no
// throttle).
func throttle(s string) (uint32, string) {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return 0, ""
	}
	rest := s[i+1:]
	switch {
	case strings.HasPrefix(rest, "-"):
		// A negative throttle is no throttle.
		return 0, ""
	case strings.HasPrefix(rest, "+"):
		rest = rest[1:]
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 {
		return 0, ""
	}
	v, err := strconv.ParseUint(rest[:n], 10, 31)
	if err != nil {
		return 0, fmt.Sprintf("throttle %q too large", rest[:n])
	}
	return uint32(v), ""
}

// String prints the spec as Format does.
func (s Spec) String() string { return Format(s.Tasks, s.MaxRunning) }

// Format prints task ids as Slurm's commands print an array's pending
// tasks (squeue %K, scontrol ArrayTaskId=, slurmrestd array_task_string):
// ranges and single ids joined by commas ("1,3,5-7"), or "first-last:step"
// when the ids form one arithmetic progression spanning more than 10 with
// more than 5 ids and a gap after the first ("0-30:3"; "0,3,6" is too short
// for that), then "%N" when maxRunning is set ("2-9%2"). tasks need not be
// sorted or unique. No tasks print "". Parse reads the result back.
//
// Format prints everything; Slurm's commands cut long lists, see
// FormatLimited.
func Format(tasks []uint32, maxRunning uint32) string {
	return FormatLimited(tasks, maxRunning, 0)
}

// FormatLimited is Format with Slurm's cut of long lists: with bitstrLen
// above zero (DefaultBitstrLen unless SLURM_BITSTR_LEN says otherwise, see
// BitstrLen), a list longer than bitstrLen-3 bytes keeps its first
// bitstrLen-4 bytes followed by "..." (the "%N" throttle is appended after
// that). Step notation is never cut. Widths below 4 are taken as 4.
func FormatLimited(tasks []uint32, maxRunning uint32, bitstrLen int) string {
	ids := slices.Clone(tasks)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) == 0 {
		return ""
	}
	var b strings.Builder
	if step, ok := progression(ids); ok {
		fmt.Fprintf(&b, "%d-%d:%d", ids[0], ids[len(ids)-1], step)
	} else {
		b.WriteString(ranges(ids))
		if bitstrLen > 0 {
			bitstrLen = max(bitstrLen, 4)
			if out := b.String(); len(out) > bitstrLen-3 {
				b.Reset()
				b.WriteString(out[:bitstrLen-4])
				b.WriteString("...")
			}
		}
	}
	if maxRunning != 0 {
		fmt.Fprintf(&b, "%%%d", maxRunning)
	}
	return b.String()
}

// progression reports whether sorted, unique ids qualify for Slurm's
// "first-last:step" notation, and the step.
func progression(ids []uint32) (uint32, bool) {
	first, last := ids[0], ids[len(ids)-1]
	if last-first <= 10 || len(ids) <= 5 || ids[1] == first+1 {
		return 0, false
	}
	step := ids[1] - ids[0]
	for i := 2; i < len(ids); i++ {
		if ids[i]-ids[i-1] != step {
			return 0, false
		}
	}
	return step, true
}

// ranges prints sorted, unique ids as bit_fmt does: runs of consecutive ids
// as "a-b" (two ids too), single ids alone, joined by commas.
func ranges(ids []uint32) string {
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatUint(uint64(ids[i]), 10))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(uint64(ids[j]), 10))
		}
		i = j + 1
	}
	return b.String()
}

// BitstrLen returns the list width Slurm's commands use given the
// SLURM_BITSTR_LEN environment variable (set reports whether it is set):
// DefaultBitstrLen when unset or negative, 0 (no cut) for 0 or a value that
// is not a number, at most 4096.
func BitstrLen(value string, set bool) int {
	if !set {
		return DefaultBitstrLen
	}
	n := atoi(value)
	switch {
	case n < 0:
		return DefaultBitstrLen
	case n > maxBitstrLen:
		return maxBitstrLen
	default:
		return n
	}
}

// atoi reads a leading, optionally signed decimal number as C's atoi does,
// saturating instead of overflowing.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	n := 0
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n < 1<<30 {
			n = n*10 + int(s[i]-'0')
		}
	}
	if neg {
		return -n
	}
	return n
}
