// Package outpattern expands the file name patterns of sbatch, srun and
// salloc's --output, --error and --input options (%j, %A_%a, %N...), as
// Slurm's expand_stdio_fields does for slurmd, slurmstepd, srun, scontrol
// (StdOut=) and slurmrestd (stdout_expanded).
//
// A pattern is read left to right. "%%" is a literal '%'. "%" followed by
// one of the letters below is replaced by its value; decimal digits between
// the '%' and the letter zero-pad numeric values to that width (at most 10:
// "%4j" gives 0128). A '%' before any other character is kept along with
// that character ("%q" stays "%q", "%5q" stays "%5q"), and a '%' at the very
// end of the pattern is dropped. If the pattern contains a backslash
// anywhere, nothing is expanded at all and every backslash is removed
// ("\%j.out" names the file "%j.out").
//
//	%A  array master job id (the job id for a job that is not an array)
//	%a  array task id (4294967294 when the job is not an array task)
//	%b  array task id modulo 10
//	%J  job id, plus ".step" unless the step is the batch script
//	%j  job id
//	%N  short host name of the node (the first node of the job for batch)
//	%n  node id relative to the job
//	%r  restart count
//	%S  SLUID
//	%s  step id ("batch" for the batch script)
//	%t  task id (rank)
//	%u  user name
//	%x  job name
package outpattern

import (
	"strconv"
	"strings"
)

// Values that Slurm uses in place of real ids.
const (
	// NoArrayTask is the array task id of a job that is not an array task
	// (Slurm's NO_VAL); it is what "%a" prints for such jobs, for example
	// in slurmrestd's stdout_expanded of a pending array's meta record.
	NoArrayTask uint32 = 0xfffffffe
	// BatchStep is the step id of a batch script (SLURM_BATCH_SCRIPT):
	// "%s" prints "batch" and "%J" prints the bare job id for it.
	BatchStep uint32 = 0xfffffffb
	// ExternStep is the step id of the extern step (SLURM_EXTERN_CONT).
	ExternStep uint32 = 0xfffffffc
	// InteractiveStep is the step id of salloc's interactive step.
	InteractiveStep uint32 = 0xfffffffa
)

// Default names of a batch job's output when neither --output nor --error
// is given, as slurmctld fills them in at submission.
const (
	DefaultPattern      = "slurm-%j.out"
	DefaultArrayPattern = "slurm-%A_%a.out"
)

// maxPadding is the widest zero padding a pattern may ask for.
const maxPadding = 10

// Values are what a pattern's wildcards expand to. Set ArrayTaskID to
// NoArrayTask and StepID to BatchStep where Slurm would, since their zero
// values are real ids.
type Values struct {
	// JobID is the job's own id (%j, %J).
	JobID uint32
	// ArrayJobID is the array's master job id (%A); 0 means "not an
	// array", and %A then prints JobID.
	ArrayJobID uint32
	// ArrayTaskID is the array task id (%a, %b), NoArrayTask if none.
	ArrayTaskID uint32
	// StepID is the step id (%s, %J), BatchStep for the batch script.
	StepID uint32
	// NodeName is the short host name (%N): the node running the task,
	// or for batch output the job's first node (its batch host).
	NodeName string
	// NodeID is the node's index within the job (%n).
	NodeID uint32
	// TaskID is the task's rank within the step (%t).
	TaskID uint32
	// User is the job owner's user name (%u).
	User string
	// JobName is the job's name (%x).
	JobName string
	// RestartCount is how many times the job was requeued (%r).
	RestartCount uint32
	// SLUID is the job's Slurm unique id in its printed form (%S).
	SLUID string
	// Srun marks expansion on the srun client: %N, %n, %t and %u are then
	// left in place (padding included) for the node side to expand, as
	// srun does before it ships the pattern to slurmstepd.
	Srun bool
}

// Expand returns pattern with its wildcards replaced by v. It does not make
// the result absolute; see Path and Resolve.
func Expand(pattern string, v Values) string {
	var b strings.Builder
	expandTo(&b, pattern, v)
	return b.String()
}

// Path returns what Slurm opens for pattern: Expand's result, prefixed with
// workdir and a '/' unless the pattern starts with '/', as
// expand_stdio_fields does on the node side and for scontrol's StdOut= and
// slurmrestd's stdout_expanded. The decision looks at the pattern, not at
// the expansion: "%x" with a job name of "/tmp/x" still lands under
// workdir. An empty workdir, or v.Srun, adds no prefix (srun leaves that
// to the node). An empty pattern names no file and gives "".
func Path(workdir, pattern string, v Values) string {
	if pattern == "" {
		return ""
	}
	var b strings.Builder
	if !v.Srun && workdir != "" && !strings.HasPrefix(pattern, "/") {
		b.WriteString(workdir)
		if !strings.HasSuffix(workdir, "/") {
			b.WriteByte('/')
		}
	}
	expandTo(&b, pattern, v)
	return b.String()
}

// Resolve makes an already expanded file name absolute against the job's
// working directory, the way Slurm joins them: a plain concatenation with
// a single '/', no cleaning of "." or "..". Absolute names and an empty
// workdir leave expanded unchanged.
func Resolve(workdir, expanded string) string {
	if workdir == "" || strings.HasPrefix(expanded, "/") {
		return expanded
	}
	if strings.HasSuffix(workdir, "/") {
		return workdir + expanded
	}
	return workdir + "/" + expanded
}

// Default returns the pattern slurmctld gives a batch job's standard output
// when the user names none: DefaultArrayPattern for job arrays,
// DefaultPattern otherwise.
func Default(isArray bool) string {
	if isArray {
		return DefaultArrayPattern
	}
	return DefaultPattern
}

// PerTask reports whether srun must open pattern separately on every node
// or for every task (Slurm's IO_PER_TASK): it holds a %N, %n, %t or %u
// wildcard that the node side expands. A pattern with a backslash expands
// nothing, so it is never per task.
func PerTask(pattern string) bool {
	if strings.Contains(pattern, `\`) {
		return false
	}
	for i := 0; i < len(pattern); i++ {
		if pattern[i] != '%' {
			continue
		}
		j := i + 1
		if j < len(pattern) && pattern[j] == '%' {
			i = j
			continue
		}
		for j < len(pattern) && isDigit(pattern[j]) {
			j++
		}
		if j < len(pattern) && isNodeWildcard(pattern[j]) {
			return true
		}
		i = j
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isNodeWildcard reports the wildcards whose values differ between the
// nodes and tasks of a step, which srun leaves to slurmstepd.
func isNodeWildcard(c byte) bool {
	return c == 'N' || c == 'n' || c == 't' || c == 'u'
}

// isWildcard reports whether c is a wildcard letter to expand now.
func (v *Values) isWildcard(c byte) bool {
	switch c {
	case 'A', 'a', 'b', 'J', 'j', 'r', 'S', 's', 'x':
		return true
	case 'N', 'n', 't', 'u':
		return !v.Srun
	}
	return false
}

func expandTo(b *strings.Builder, pattern string, v Values) {
	if strings.Contains(pattern, `\`) {
		// A backslash anywhere turns expansion off for the whole pattern;
		// the backslashes themselves are dropped.
		b.WriteString(strings.ReplaceAll(pattern, `\`, ""))
		return
	}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(pattern) {
			// A trailing '%' vanishes.
			return
		}
		if pattern[i] == '%' {
			b.WriteByte('%')
			continue
		}
		start := i
		for i < len(pattern) && isDigit(pattern[i]) {
			i++
		}
		digits := pattern[start:i]
		if i >= len(pattern) {
			// "%12" at the end is kept as written.
			b.WriteByte('%')
			b.WriteString(digits)
			return
		}
		if !v.isWildcard(pattern[i]) {
			b.WriteByte('%')
			b.WriteString(digits)
			b.WriteByte(pattern[i])
			continue
		}
		v.expandOne(b, pattern[i], padding(digits))
	}
}

// padding converts the digits between '%' and the letter, capped at
// maxPadding as Slurm caps it.
func padding(digits string) int {
	if len(digits) > 2 {
		// Anything with three or more digits is over the cap, possibly
		// after dropping leading zeros; check the value.
		trimmed := strings.TrimLeft(digits, "0")
		if len(trimmed) > 2 {
			return maxPadding
		}
		digits = trimmed
	}
	if digits == "" {
		return 0
	}
	n, _ := strconv.Atoi(digits)
	if n > 9 {
		return maxPadding
	}
	return n
}

func (v *Values) expandOne(b *strings.Builder, c byte, pad int) {
	num := func(n uint32) {
		s := strconv.FormatUint(uint64(n), 10)
		if len(s) < pad {
			b.WriteString(strings.Repeat("0", pad-len(s)))
		}
		b.WriteString(s)
	}
	switch c {
	case 'A':
		if v.ArrayJobID != 0 {
			num(v.ArrayJobID)
		} else {
			num(v.JobID)
		}
	case 'a':
		num(v.ArrayTaskID)
	case 'b':
		num(v.ArrayTaskID % 10)
	case 'J', 'j':
		num(v.JobID)
		if c == 'J' && v.StepID != BatchStep {
			// Slurm prints the step signed here, so the special steps
			// come out negative (extern is "-4").
			b.WriteByte('.')
			b.WriteString(strconv.Itoa(int(int32(v.StepID))))
		}
	case 'N':
		b.WriteString(v.NodeName)
	case 'n':
		num(v.NodeID)
	case 'r':
		num(v.RestartCount)
	case 'S':
		b.WriteString(v.SLUID)
	case 's':
		if v.StepID == BatchStep {
			b.WriteString("batch")
		} else {
			num(v.StepID)
		}
	case 't':
		num(v.TaskID)
	case 'u':
		b.WriteString(v.User)
	case 'x':
		b.WriteString(v.JobName)
	}
}
