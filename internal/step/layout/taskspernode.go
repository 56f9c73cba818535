package layout

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxCompressedNodes bounds how many nodes ParseTasksPerNode expands, so a
// hostile "1(x4294967295)" cannot exhaust memory.
const MaxCompressedNodes = 1 << 16

// TasksPerNodeString writes counts as Slurm writes SLURM_TASKS_PER_NODE and
// SLURM_STEP_TASKS_PER_NODE (uint16_array_to_str in src/common/env.c): runs
// of equal neighbours become "N(xR)", separated by commas, so 5,1,1,1 is
// "5,1(x3)". No counts is "".
func TasksPerNodeString(counts []int) string {
	var b strings.Builder
	for i := 0; i < len(counts); {
		j := i + 1
		for j < len(counts) && counts[j] == counts[i] {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(counts[i]))
		if j-i > 1 {
			fmt.Fprintf(&b, "(x%d)", j-i)
		}
		i = j
	}
	return b.String()
}

// ParseTasksPerNode reads the compressed per-node form back (srun inside a
// job reads SLURM_TASKS_PER_NODE and SLURM_JOB_CPUS_PER_NODE this way):
// comma-separated "N" or "N(xR)" items, N ≥ 0 and R ≥ 1 in decimal. It
// refuses the empty string, signs, spaces and anything else, and more than
// MaxCompressedNodes nodes in all.
func ParseTasksPerNode(s string) ([]int, error) {
	if s == "" {
		return nil, fmt.Errorf("empty tasks-per-node list")
	}
	var counts []int
	for _, item := range strings.Split(s, ",") {
		val, reps := item, "1"
		if i := strings.IndexByte(item, '('); i >= 0 {
			r, ok := strings.CutPrefix(item[i:], "(x")
			if !ok || !strings.HasSuffix(r, ")") {
				return nil, fmt.Errorf("invalid tasks-per-node item %q in %q", item, s)
			}
			val, reps = item[:i], strings.TrimSuffix(r, ")")
		}
		n, err := decimal(val)
		if err != nil {
			return nil, fmt.Errorf("invalid tasks-per-node item %q in %q", item, s)
		}
		r, err := decimal(reps)
		if err != nil || r < 1 {
			return nil, fmt.Errorf("invalid repeat count in %q of %q", item, s)
		}
		if r > MaxCompressedNodes-len(counts) {
			return nil, fmt.Errorf("tasks-per-node list %q has more than %d nodes", s, MaxCompressedNodes)
		}
		counts = append(counts, slices.Repeat([]int{n}, r)...)
	}
	return counts, nil
}

// decimal is a non-negative decimal number of digits only.
func decimal(s string) (int, error) {
	if s == "" {
		return 0, fmt.Errorf("empty number")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("not a number: %q", s)
		}
	}
	return strconv.Atoi(s)
}
