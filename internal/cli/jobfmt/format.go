package jobfmt

import (
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cstrconv"
)

// MaxWidth bounds column widths. Slurm reads widths into a C int with no
// check; beyond a few thousand columns the output is useless anyway, and an
// unbounded width would let one option allocate gigabytes.
const MaxWidth = 1 << 16

// DefaultLongWidth is the width of a -O field given without ":width".
const DefaultLongWidth = 20

// Column is one element of a parsed format: a field with its width,
// justification and trailing text, or (Field nil) literal text alone, which
// is what a format's prefix and an unknown field print.
type Column struct {
	// Field is nil for literal text and for unknown fields.
	Field *Field
	// Name is the field as the specification named it: the -O name as
	// written, or the -o letter; empty for literal text.
	Name   string
	Width  int
	Right  bool
	Suffix string
}

// Format is a parsed -o/--format or -O/--Format specification.
type Format struct {
	// Long is true for a -O specification.
	Long    bool
	Columns []Column
}

// ParseFormat parses a -o/--format specification ("%.18i %.9P %j") as
// squeue does: text before the first '%' is printed as is; each '%' starts
// a field "[.][width]letter" whose following text up to the next '%' is
// printed after it. "%all" selects every field, '|'-separated. It never
// fails: unknown letters are returned in invalid (squeue logs "Invalid job
// format specification: X" for each) and print as the literal text "%"
// followed by the rest of their specification.
func ParseFormat(spec string) (f Format, invalid []string) {
	rest := spec
	if i := strings.IndexByte(spec, '%'); i != 0 {
		if i < 0 {
			i = len(spec)
		}
		if i > 0 {
			f.Columns = append(f.Columns, Column{Suffix: spec[:i]})
		}
		rest = spec[i:]
	}
	all := strings.EqualFold(rest, "%all")
	if all {
		var b strings.Builder
		b.WriteString("%a")
		for c := 'b'; c <= 'z'; c++ {
			b.WriteString("|%" + string(c))
		}
		for c := 'A'; c <= 'Z'; c++ {
			b.WriteString("|%" + string(c))
		}
		rest = b.String()
	}
	// strtok(3) semantics: runs of '%' separate tokens, empty tokens vanish.
	for _, tok := range strings.FieldsFunc(rest, func(r rune) bool { return r == '%' }) {
		col, letter := parseToken(tok)
		if fd, ok := LookupLetter(letter); ok {
			col.Field, col.Name = fd, string(letter)
			f.Columns = append(f.Columns, col)
			continue
		}
		if all {
			continue
		}
		// An unknown code prints its whole specification back.
		f.Columns = append(f.Columns, Column{Width: col.Width, Right: col.Right, Suffix: "%" + tok})
		if letter == 0 {
			invalid = append(invalid, "")
		} else {
			invalid = append(invalid, string(letter))
		}
	}
	return f, invalid
}

// parseToken splits "[.][digits]letter[suffix]".
func parseToken(tok string) (Column, byte) {
	var col Column
	i := 0
	if i < len(tok) && tok[i] == '.' {
		col.Right = true
		i++
	}
	for i < len(tok) && tok[i] >= '0' && tok[i] <= '9' {
		col.Width = min(col.Width*10+int(tok[i]-'0'), MaxWidth)
		i++
	}
	if i >= len(tok) {
		return col, 0
	}
	letter := tok[i]
	col.Suffix = tok[i+1:]
	return col, letter
}

// ParseLongFormat parses a -O/--Format specification
// ("JobID:.10 ,Name:20,State") as squeue does: comma-separated field names,
// each optionally followed by ":[.]width" and then text printed after the
// field. A name without ":" is 20 columns wide, left-justified. Unknown
// names are returned in invalid (squeue logs "Invalid job format
// specification: NAME"); they still take their place and print only their
// trailing text.
func ParseLongFormat(spec string) (f Format, invalid []string) {
	f.Long = true
	for _, tok := range strings.FieldsFunc(spec, func(r rune) bool { return r == ',' }) {
		name, col := parseLongToken(tok)
		col.Name = name
		if fd, ok := LookupName(name); ok {
			col.Field = fd
		} else {
			invalid = append(invalid, name)
		}
		f.Columns = append(f.Columns, col)
	}
	return f, invalid
}

// parseLongToken splits "name[:[.]width[suffix]]". The width is read as
// strtol(3) reads it: leading blanks and a sign are allowed, and anything
// after the digits becomes the suffix.
func parseLongToken(tok string) (string, Column) {
	name, mod, ok := strings.Cut(tok, ":")
	if !ok {
		return tok, Column{Width: DefaultLongWidth}
	}
	var col Column
	if strings.HasPrefix(mod, ".") {
		col.Right = true
		mod = mod[1:]
	}
	width, rest := strtol(mod)
	col.Width = width
	col.Suffix = rest
	return name, col
}

// strtol reads a decimal integer prefix as strtol(3) with base 10 does
// (cstrconv.Strtol) and returns it with the unread rest, clamped to
// ±MaxWidth.
func strtol(s string) (int, string) {
	n, rest := cstrconv.Strtol(s)
	return int(min(max(n, -MaxWidth), MaxWidth)), rest
}

// Spec writes the format back as a specification that parses to the same
// columns: "%[.]width" codes for -o, "name:[.]width" entries for -O.
func (f Format) Spec() string {
	var b strings.Builder
	prefix := 0
	for i, col := range f.Columns {
		if !f.Long {
			if i == 0 && col.Field == nil && !strings.HasPrefix(col.Suffix, "%") {
				prefix = len(col.Suffix)
			}
			if col.Field != nil {
				b.WriteByte('%')
				if col.Right {
					b.WriteByte('.')
				}
				if col.Width != 0 {
					b.WriteString(strconv.Itoa(col.Width))
				}
				b.WriteString(col.Name)
			}
			b.WriteString(col.Suffix)
			continue
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(col.Name)
		b.WriteByte(':')
		if col.Right {
			b.WriteByte('.')
		}
		b.WriteString(strconv.Itoa(col.Width))
		b.WriteString(col.Suffix)
	}
	out := b.String()
	// A lone "%All" field with suffix "l" must not read back as %all; a
	// trailing '%' is an empty token and changes nothing else.
	if !f.Long && strings.EqualFold(out[prefix:], "%all") {
		out += "%"
	}
	return out
}

// Header renders the title line (without its newline).
func (f Format) Header() string {
	var b strings.Builder
	for _, col := range f.Columns {
		if col.Field != nil {
			c := text(col.Field.Header)
			c.cut = !col.Field.headerWhole
			b.WriteString(layout(c, col.Width, col.Right))
		}
		b.WriteString(col.Suffix)
	}
	return b.String()
}

// Row renders one job (without its newline).
func (f Format) Row(j *Job, ctx *Context) string {
	var b strings.Builder
	f.WriteRow(&b, j, ctx)
	return b.String()
}

// WriteRow is Row written into b.
func (f Format) WriteRow(b *strings.Builder, j *Job, ctx *Context) {
	for _, col := range f.Columns {
		if col.Field != nil {
			writeLayout(b, col.Field.value(j, ctx), col.Width, col.Right)
		}
		b.WriteString(col.Suffix)
	}
}

// Value renders one field of a job alone, without column layout: what
// squeue prints for it with a zero width.
func (fd *Field) Value(j *Job, ctx *Context) string {
	return layout(fd.value(j, ctx), 0, false)
}
