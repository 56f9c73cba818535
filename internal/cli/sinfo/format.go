package sinfo

import (
	"strconv"
	"strings"
)

// maxWidth bounds column widths: Slurm reads them into a C int and prints
// that many blanks; a hostile format must not make sinfo allocate without
// limit.
const maxWidth = 1 << 16

// defaultLongWidth is the width of a -O field given without ":width".
const defaultLongWidth = 20

// column is one element of a parsed output format.
type column struct {
	// field is nil for literal text (a -o prefix or an unknown field),
	// which prints suffix only.
	field  *field
	width  int
	right  bool
	suffix string
}

// format is a parsed -o/--format or -O/--Format specification.
type format struct {
	columns []column
	// flags are the match flags of the fields used.
	flags matchFlags
}

// parseShort parses a -o/--format specification ("%P %.5a %10l") as
// sinfo's _parse_format does: text before the first '%' prints as is, each
// "%[.][width]<letter>" selects a field, and text up to the next '%' is
// the field's suffix. Unknown letters print their specification verbatim;
// their messages ("Invalid node format specification: Q") are returned.
func parseShort(spec string) (format, []string) {
	var f format
	var errs []string
	all := strings.EqualFold(spec, "%all")
	if all {
		var b strings.Builder
		b.WriteString("%a")
		for c := byte('b'); c <= 'z'; c++ {
			b.WriteString("|%" + string(c))
		}
		for c := byte('A'); c <= 'Z'; c++ {
			b.WriteString("|%" + string(c) + " ")
		}
		spec = b.String()
	}
	if i := strings.IndexByte(spec, '%'); i != 0 {
		if i < 0 {
			i = len(spec)
		}
		if i > 0 {
			f.columns = append(f.columns, column{suffix: spec[:i]})
		}
		spec = spec[i:]
	}
	for _, tok := range strings.Split(spec, "%") {
		if tok == "" {
			continue
		}
		i := 0
		right := false
		if tok[i] == '.' {
			right = true
			i++
		}
		width := 0
		for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
			width = min(width*10+int(tok[i]-'0'), maxWidth)
			i++
		}
		var letter byte
		if i < len(tok) {
			letter = tok[i]
			i++
		}
		suffix := tok[i:]
		fd := lookupLetter(letter)
		switch {
		case fd != nil:
			f.flags |= fd.flags
			f.columns = append(f.columns, column{field: fd, width: width, right: right, suffix: suffix})
		case all:
		default:
			f.columns = append(f.columns, column{width: width, right: right, suffix: "%" + tok})
			errs = append(errs, "Invalid node format specification: "+letterString(letter))
		}
	}
	return f, errs
}

func letterString(c byte) string {
	if c == 0 {
		return ""
	}
	return string(c)
}

// parseLong parses a -O/--Format specification ("NodeList:20,CPUs:.4 ")
// as sinfo's _parse_long_format does: comma-separated field names, each
// optionally followed by ":[.]width[suffix]". Unknown names add an empty
// column; their messages ("Invalid job format specification: X") are
// returned.
func parseLong(spec string) (format, []string) {
	var f format
	var errs []string
	for _, tok := range strings.Split(spec, ",") {
		if tok == "" {
			continue
		}
		name, rest, hasWidth := strings.Cut(tok, ":")
		col := column{width: defaultLongWidth}
		if hasWidth {
			if strings.HasPrefix(rest, ".") {
				col.right = true
				rest = rest[1:]
			}
			col.width, col.suffix = leadingInt(rest)
		}
		if strings.EqualFold(name, "all") {
			all, _ := parseShort("%all")
			f.columns = append(f.columns, all.columns...)
			f.flags |= all.flags
		}
		fd := lookupName(name)
		if fd == nil {
			// As in Slurm, "all" itself is also reported as invalid.
			f.columns = append(f.columns, column{width: col.width, right: col.right, suffix: col.suffix})
			errs = append(errs, "Invalid job format specification: "+name)
			continue
		}
		col.field = fd
		f.flags |= fd.flags
		f.columns = append(f.columns, col)
	}
	return f, errs
}

// leadingInt splits "12abc" into 12 and "abc" as strtol does (a missing
// number is 0), bounding the number by maxWidth.
func leadingInt(s string) (int, string) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == i {
		return 0, s
	}
	n, err := strconv.Atoi(s[:j])
	if err != nil || n > maxWidth {
		n = maxWidth
	}
	if n < -maxWidth {
		n = -maxWidth
	}
	return n, s[j:]
}

// printStr is sinfo's _print_str: right-justified or left-justified in
// width (0: as is), truncated to width when cut (left-justified values are
// always truncated, as "%.*s" does).
func printStr(b *strings.Builder, s string, width int, right, cut bool) {
	if width <= 0 {
		b.WriteString(s)
		return
	}
	if len(s) > width && (cut || !right) {
		s = s[:width]
	}
	if right {
		b.WriteString(strings.Repeat(" ", max(width-len(s), 0)))
		b.WriteString(s)
		return
	}
	b.WriteString(s)
	b.WriteString(strings.Repeat(" ", max(width-len(s), 0)))
}

// text prints the column for a record, or its title when r is nil.
func (col column) text(b *strings.Builder, r *record, c *printCtx) {
	fd := col.field
	if fd == nil {
		b.WriteString(col.suffix)
		return
	}
	width := col.width
	if fd.partWidth && c.usePartW {
		width = c.partWidth
	}
	if fd.nodeWidth && c.useNodeW {
		width = c.nodeWidth
	}
	if r == nil {
		printStr(b, fd.title, width, col.right, !fd.uncutTitle)
		b.WriteString(col.suffix)
		return
	}
	v := fd.value(r, c)
	if fd.name == "Partition" && r.part != nil && r.part.isDefault {
		// sinfo marks the default partition with '*', overwriting the
		// last character when the name fills the column.
		if len(v) < width || width == 0 {
			v += "*"
		} else if width > 0 {
			v = v[:width-1] + "*"
		}
	}
	printStr(b, v, width, col.right, true)
	b.WriteString(col.suffix)
}
