package gres

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// MaxID bounds the CPU, core and socket ids that ParseIDList accepts. Slurm
// sizes its CPU bitmaps the same way (MAX_CPUS is far below this); the bound
// keeps a hostile "0-4000000000" from allocating gigabytes.
const MaxID = 1<<20 - 1

// ParseIDList parses a Slurm id list such as "0-15,32-47" or "0,2" (the
// Cores= of gres.conf, the S: of a node GRES string) into sorted, distinct
// ids. Ranges must be ascending; ids are decimal and at most MaxID.
func ParseIDList(s string) ([]int, error) {
	if s == "" {
		return nil, fmt.Errorf("empty id list")
	}
	var ids []int
	for part := range strings.SplitSeq(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := parseID(lo)
		if err != nil {
			return nil, fmt.Errorf("id list %q: %w", s, err)
		}
		b := a
		if isRange {
			if b, err = parseID(hi); err != nil {
				return nil, fmt.Errorf("id list %q: %w", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("id list %q: descending range %q", s, part)
			}
		}
		for id := a; id <= b; id++ {
			ids = append(ids, id)
		}
		if len(ids) > MaxID+1 {
			return nil, fmt.Errorf("id list %q: more than %d ids", s, MaxID+1)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func parseID(s string) (int, error) {
	if s == "" || len(s) > 7 {
		return 0, fmt.Errorf("invalid id %q", s)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("invalid id %q", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxID {
		return 0, fmt.Errorf("invalid id %q", s)
	}
	return n, nil
}

// FormatIDList writes ids as Slurm's bit_fmt does: ascending, runs of two or
// more consecutive ids as "a-b", joined by commas ("0-15,32"). Duplicates are
// dropped; negative ids are ignored. No ids give "".
func FormatIDList(ids []int) string {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	var b strings.Builder
	for i := 0; i < len(sorted); {
		if sorted[i] < 0 {
			i++
			continue
		}
		j := i
		for j+1 < len(sorted) && sorted[j+1] == sorted[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(sorted[i]))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(sorted[j]))
		}
		i = j + 1
	}
	return b.String()
}
