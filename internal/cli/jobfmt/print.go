package jobfmt

import (
	"fmt"
	"strconv"
	"strings"
)

// cell is one value ready to be laid out in a column.
type cell struct {
	text string
	// null marks a NULL C string: glibc prints "(null)" for it, or nothing
	// when a precision below 6 truncates it.
	null bool
	// cut truncates right-justified text to the column width; Slurm skips
	// that for node lists and elapsed times, which then overflow.
	cut bool
	// omit prints nothing at all, not even padding (exit codes of jobs that
	// have not ended).
	omit bool
}

func str(s string) cell   { return cell{text: s, null: s == "", cut: true} }
func text(s string) cell  { return cell{text: s, cut: true} }
func whole(s string) cell { return cell{text: s} }

// layout places c in a column as squeue's _print_str does: a positive width
// pads (left or right) and, for left-justified columns, truncates; a zero
// width prints the text as is; a negative one appends a blank.
func layout(c cell, width int, right bool) string {
	var b strings.Builder
	writeLayout(&b, c, width, right)
	return b.String()
}

// writeLayout is layout written straight into a row: a listing of
// thousands of rows makes no string per cell.
func writeLayout(b *strings.Builder, c cell, width int, right bool) {
	if c.omit {
		return
	}
	s := c.text
	if c.null {
		// printf("%.Ns", NULL) prints nothing for N < 6 in glibc.
		if width > 0 && width < 6 && !right {
			s = ""
		} else {
			s = "(null)"
		}
	}
	switch {
	case width < 0:
		b.WriteString(s)
		b.WriteByte(' ')
	case width == 0:
		b.WriteString(s)
	case right:
		switch {
		case len(s) < width:
			pad(b, width-len(s))
			b.WriteString(s)
		case c.cut && len(s) > width:
			b.WriteString(s[:width])
		default:
			b.WriteString(s)
		}
	default:
		if len(s) > width {
			s = s[:width]
		}
		b.WriteString(s)
		pad(b, width-len(s))
	}
}

const blanks = "                                                                "

// pad writes n blanks.
func pad(b *strings.Builder, n int) {
	for n > len(blanks) {
		b.WriteString(blanks)
		n -= len(blanks)
	}
	b.WriteString(blanks[:n])
}

func utoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }

// Unit is a power of 1024 for ConvertNumUnit, as Slurm's UNIT_* constants.
type Unit int

// Units, in Slurm's order.
const (
	UnitNone Unit = iota
	UnitKilo
	UnitMega
	UnitGiga
	UnitTera
	UnitPeta
	unitUnknown
)

// Convert selects how ConvertNumUnit scales.
type Convert int

const (
	// ConvertExact scales while no precision is lost (half units count as
	// exact), squeue's default: 2048M prints 2G, 1536M prints 1536M.
	ConvertExact Convert = iota
	// ConvertNone keeps the original unit (squeue --noconvert).
	ConvertNone
)

// ConvertNumUnit prints num, given in unit orig, as Slurm's
// convert_num_unit does: scaled by 1024 per step, with a K/M/G/T/P suffix
// and two decimals when the scaled value is not whole. bufSize mirrors the
// C buffer the caller prints into: longer results are cut to bufSize-1
// bytes, as snprintf would.
func ConvertNumUnit(num float64, orig Unit, mode Convert, bufSize int) string {
	const units = "\x00KMGTP?"
	var out string
	if int64(num) == 0 {
		out = "0"
	} else {
		if mode == ConvertExact {
			for num >= 1024 && uint64(num)%512 == 0 {
				num /= 1024
				orig++
			}
		}
		if orig < UnitNone || orig > UnitPeta {
			orig = unitUnknown
		}
		suffix := ""
		if orig != UnitNone {
			suffix = string(units[orig])
		}
		if i := uint64(num); float64(i) == num {
			out = strconv.FormatUint(i, 10) + suffix
		} else {
			out = fmt.Sprintf("%.2f", num) + suffix
		}
	}
	if bufSize > 0 && len(out) > bufSize-1 {
		out = out[:bufSize-1]
	}
	return out
}
