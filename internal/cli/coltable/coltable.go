// Package coltable prints the column tables of the accounting commands
// (sacct, sstat): a header and a dashed rule, then cells padded or cut
// to each column's width (a cut value ends in "+"), or with -p/-P the
// cells joined by a delimiter.
package coltable

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Column is one column: its title, width, and whether its values are
// aligned left (only the JobID's are).
type Column struct {
	Name  string
	Width int
	Left  bool
}

// Style is how the table is printed.
type Style struct {
	NoHeader bool
	// Parsable is -p (a delimiter after every cell), Parsable2 -P (only
	// between cells).
	Parsable, Parsable2 bool
	Delimiter           string
	// CutHeaders cuts a title longer than its column without the "+"
	// (sreport's "Allocate" for Allocated).
	CutHeaders bool
}

// Print writes the header (unless NoHeader) and every row.
func Print(w io.Writer, cols []Column, rows [][]string, st Style) {
	var b strings.Builder
	parsable := st.Parsable || st.Parsable2
	line := func(cells []string) {
		for i, cell := range cells {
			if parsable {
				b.WriteString(cell)
				if i < len(cells)-1 || st.Parsable {
					b.WriteString(st.Delimiter)
				}
				continue
			}
			b.WriteString(Fit(cell, cols[i].Width, cols[i].Left))
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	if !st.NoHeader {
		names := make([]string, len(cols))
		for i, c := range cols {
			names[i] = c.Name
			if st.CutHeaders && !parsable && len(c.Name) > c.Width {
				names[i] = c.Name[:max(c.Width, 0)]
			}
		}
		line(names)
		if !parsable {
			for _, c := range cols {
				b.WriteString(strings.Repeat("-", max(c.Width, 0)) + " ")
			}
			b.WriteByte('\n')
		}
	}
	for _, r := range rows {
		line(r)
	}
	io.WriteString(w, b.String())
}

// Fit pads or cuts a value to a column's width.
func Fit(s string, width int, left bool) string {
	if len(s) > width {
		if width <= 0 {
			return ""
		}
		return s[:width-1] + "+"
	}
	if left {
		return s + strings.Repeat(" ", width-len(s))
	}
	return strings.Repeat(" ", width-len(s)) + s
}

// Spec is a field a format list names, with the width asked for (or the
// field's own).
type Spec[F any] struct {
	Field F
	Width int
}

// ParseFormat reads a format list (-o "JobID,JobName%30"): lookup finds a
// field by name, in any case, with its default width.
func ParseFormat[F any](s string, lookup func(name string) (F, int, bool)) ([]Spec[F], error) {
	var out []Spec[F]
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, width, hasWidth := strings.Cut(item, "%")
		f, w, ok := lookup(strings.ToLower(name))
		if !ok {
			return nil, fmt.Errorf("Invalid field requested: \"%s\"", name)
		}
		if hasWidth {
			n, err := strconv.Atoi(width)
			if err != nil {
				return nil, fmt.Errorf("Invalid field requested: \"%s\"", item)
			}
			w = n
		}
		out = append(out, Spec[F]{Field: f, Width: w})
	}
	return out, nil
}

// ExactSize prints a size in bytes as sacct and sstat print memory: in
// KiB, moved to a larger unit only while the value divides exactly
// (convert_num_unit with CONVERT_NUM_UNIT_EXACT): "64592K", "2M".
func ExactSize(bytes float64) string {
	v := int64(bytes/1024 + 0.5)
	units := "KMGTPE"
	i := 0
	for v >= 1024 && v%1024 == 0 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return strconv.FormatInt(v, 10) + units[i:i+1]
}
