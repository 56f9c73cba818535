// Package hostlist expands and compresses Slurm hostlist expressions such as
// "n[1-3,7],login1" or "r[1-2]n[001-010]".
//
// It mirrors the behaviour of Slurm's hostlist functions as seen through
// `scontrol show hostnames`, `scontrol show hostlist` and
// `scontrol show hostlistsorted`:
//
//   - Items are separated by commas, spaces, tabs or newlines; separators
//     inside brackets do not split, and empty items are skipped.
//   - A bracket holds a comma-separated list of numbers and ranges "lo-hi";
//     the zero-padding width of a range comes from its first number, so
//     "n[001-010]" yields n001..n010 and "n[1-010]" yields n1..n10.
//   - Several bracket groups in one item form a cartesian product with the
//     leftmost group outermost: "r[1-2]n[1-2]" is r1n1,r1n2,r2n1,r2n2.
//   - Order and duplicates are kept.
//
// Where Slurm is lenient in ways that look like accidents, this package is
// strict and says why: an unclosed '[' is an error (Slurm silently appends a
// ']'), text after the last ']' is an error (as in Slurm), a stray ']' or a
// nested '[' is an error, and signs or letters inside brackets are errors.
// Blanks around numbers inside brackets are ignored, so "n[1, 3]" is n1,n3
// (Slurm would produce n1,n03 there, taking the blank as part of the width).
//
// Expansion is bounded (see MaxRange, MaxHosts and MaxBytes) so that hostile
// or fuzzed input cannot exhaust memory.
package hostlist

import (
	"errors"
	"fmt"
)

const (
	// MaxRange is the largest number of hosts a single "lo-hi" range may
	// describe. It is Slurm's MAX_RANGE (64K): Slurm refuses larger ranges
	// with "Too many hosts in range", and so do we.
	MaxRange = 64 * 1024

	// MaxHosts is the largest number of host names one expression may
	// expand to. Slurm bounds each range (MaxRange) and the product of
	// bracket groups, but not the whole list; we also bound the total so
	// that "n[0-65535],n[0-65535],..." cannot grow without limit. 1Mi names
	// is 16 times MaxRange and far above the node count of any Slurm
	// cluster (or any job's node list), while the names themselves stay in
	// the tens of megabytes.
	MaxHosts = 1 << 20

	// MaxBytes bounds the total length of the expanded names, so that a
	// long prefix multiplied by a large range ("<4 KiB of text>[0-65535]")
	// is refused before it is built. 64 MiB allows MaxHosts names of 64
	// bytes each, which covers fully qualified host names.
	MaxBytes = 64 << 20

	// maxDigits is the longest numeric field handled as a number: 18
	// decimal digits always fit in a uint64, with room for hi+1. A host
	// name whose trailing digit run is longer is treated as a name without
	// a numeric suffix; inside brackets such a number is an error.
	maxDigits = 18
)

var (
	// ErrInvalid is matched (with errors.Is) by every syntax error: the
	// expression is not a valid hostlist.
	ErrInvalid = errors.New("invalid hostlist")

	// ErrTooLarge is matched by errors about expressions that are valid
	// but expand beyond MaxRange, MaxHosts or MaxBytes.
	ErrTooLarge = errors.New("hostlist too large")
)

// Error describes why an expression was refused. Its Error text is
// "invalid hostlist: <reason> in "<item>"" (or starts with "hostlist too
// large"), short enough for callers to prefix with their own context, as
// slurmconf does with file and line.
type Error struct {
	// Item is the comma-separated item of the expression that was refused
	// (for size limits on the whole list, the item that crossed the limit).
	Item string
	// Reason says what is wrong, in words.
	Reason string
	// Kind is ErrInvalid or ErrTooLarge.
	Kind error
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e.Item == "" {
		return fmt.Sprintf("%v: %s", e.Kind, e.Reason)
	}
	return fmt.Sprintf("%v: %s in %q", e.Kind, e.Reason, e.Item)
}

// Unwrap returns Kind, so that errors.Is(err, ErrInvalid) works.
func (e *Error) Unwrap() error { return e.Kind }

// Expand returns the host names described by expr, in order and with
// duplicates kept, as `scontrol show hostnames` prints them. An empty or
// blank expression yields an empty list and no error.
func Expand(expr string) ([]string, error) {
	items, total, err := parse(expr, true)
	if err != nil {
		return nil, err
	}
	if total.hosts == 0 {
		return nil, nil
	}
	out := make([]string, 0, total.hosts)
	var buf []byte
	for i := range items {
		out = items[i].expand(out, buf[:0])
	}
	return out, nil
}

// Count returns the number of host names expr expands to, without building
// them. It accepts and refuses exactly the expressions Expand does.
func Count(expr string) (int, error) {
	_, total, err := parse(expr, false)
	if err != nil {
		return 0, err
	}
	return int(total.hosts), nil
}

// Intersects reports whether any of names is in the host list expr, as
// the -w/--nodelist filters of squeue and scancel test a job's nodes. An
// empty or malformed list holds no host.
func Intersects(names []string, expr string) bool {
	if expr == "" || len(names) == 0 {
		return false
	}
	have, err := Expand(expr)
	if err != nil {
		return false
	}
	set := make(map[string]bool, len(have))
	for _, h := range have {
		set[h] = true
	}
	for _, n := range names {
		if set[n] {
			return true
		}
	}
	return false
}
