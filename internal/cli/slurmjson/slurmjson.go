// Package slurmjson prints JSON as Slurm's commands do (squeue --json,
// sinfo --json): members in the order of Slurm's data parser, which is the
// order of the slurmrestd OpenAPI schemas, two-space indentation,
// "key": value, "/" escaped as "\/", and empty arrays and objects with
// their closing bracket on a line of its own. The generated ogen encoders
// write members alphabetically, so their output is decoded into an
// ordered tree, reordered by schema and written again.
package slurmjson

//go:generate go run genorder.go -spec ../../../openapi/spec/slurmrestd-v0.0.44.json -out order_gen.go

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-faster/jx"
)

// Field is one member of an Object.
type Field struct {
	Key string
	Val any
}

// Object is a JSON object with its members in order.
type Object []Field

// Array is a JSON array.
type Array []any

// Raw is a JSON literal written as is: a number, true, false or null.
type Raw string

// Num is a number literal.
func Num[T int | int32 | int64 | uint32 | uint64](v T) Raw { return Raw(fmt.Sprint(v)) }

// Bool is a boolean literal.
func Bool(b bool) Raw {
	if b {
		return "true"
	}
	return "false"
}

// Schema says how the JSON of one slurmrestd schema is written. Paths
// are "" for the document and "jobs/exit_code" below it; array elements
// share their array's path.
type Schema struct {
	// Order lists the members of each object in Slurm's order.
	Order map[string][]string
	// Floats are the members holding doubles, which Slurm's serializer
	// writes as C's "%.17g" with ".0" added to whole numbers ("1.0").
	Floats map[string]bool
}

// noValOrder is the member order of the v0.0.44 number structs, used
// where a path has no order of its own.
var noValOrder = []string{"set", "infinite", "number"}

// Encoder is a generated type that writes itself as JSON.
type Encoder interface{ Encode(e *jx.Encoder) }

// Format writes v, a generated value, as Slurm's commands print it: its
// members reordered and its doubles written as the schema says, and a
// final newline.
func Format(v Encoder, o Schema) (string, error) {
	var e jx.Encoder
	v.Encode(&e)
	tree, err := Decode(jx.DecodeBytes(e.Bytes()))
	if err != nil {
		return "", fmt.Errorf("read generated JSON: %w", err)
	}
	var b strings.Builder
	Write(&b, Reorder(tree, "", o), 0)
	b.WriteByte('\n')
	return b.String(), nil
}

// Decode reads JSON into the ordered tree types (Object, Array, string,
// Raw).
func Decode(d *jx.Decoder) (any, error) {
	switch d.Next() {
	case jx.Object:
		obj := Object{}
		err := d.Obj(func(d *jx.Decoder, key string) error {
			v, err := Decode(d)
			if err != nil {
				return err
			}
			obj = append(obj, Field{Key: key, Val: v})
			return nil
		})
		return obj, err
	case jx.Array:
		arr := Array{}
		err := d.Arr(func(d *jx.Decoder) error {
			v, err := Decode(d)
			if err != nil {
				return err
			}
			arr = append(arr, v)
			return nil
		})
		return arr, err
	case jx.String:
		return d.Str()
	default:
		raw, err := d.Raw()
		return Raw(strings.TrimSpace(raw.String())), err
	}
}

// Reorder sorts the members of v's objects by the schema, path by path,
// and rewrites its doubles as Slurm prints them; objects without an order
// of their own that look like number structs get set, infinite, number.
// Members the schema does not list keep their place after the listed
// ones.
func Reorder(v any, path string, o Schema) any {
	switch t := v.(type) {
	case Object:
		want, ok := o.Order[path]
		if !ok && isNoValStruct(t) {
			want, ok = noValOrder, true
		}
		out := make(Object, 0, len(t))
		if ok {
			for _, k := range want {
				for _, f := range t {
					if f.Key == k {
						out = append(out, f)
					}
				}
			}
		}
		for _, f := range t {
			if !ok || !slices.Contains(want, f.Key) {
				out = append(out, f)
			}
		}
		for i := range out {
			p := out[i].Key
			if path != "" {
				p = path + "/" + p
			}
			out[i].Val = Reorder(out[i].Val, p, o)
		}
		return out
	case Array:
		for i := range t {
			t[i] = Reorder(t[i], path, o)
		}
		return t
	case Raw:
		if o.Floats[path] {
			return Double(t)
		}
	}
	return v
}

// Double rewrites a number literal as Slurm's JSON serializer (json-c)
// prints doubles: 17 significant digits, ".0" on whole numbers. Other
// literals are returned unchanged.
func Double(r Raw) Raw {
	f, err := strconv.ParseFloat(string(r), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return r
	}
	s := strconv.FormatFloat(f, 'g', 17, 64)
	if m, e, ok := strings.Cut(s, "e"); ok {
		// %.17g drops trailing zeros; so does C.
		if strings.Contains(m, ".") {
			m = strings.TrimRight(strings.TrimRight(m, "0"), ".")
		}
		s = m + "e" + e
	} else if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return Raw(s)
}

func isNoValStruct(o Object) bool {
	if len(o) == 0 || len(o) > 3 {
		return false
	}
	for _, f := range o {
		if !slices.Contains(noValOrder, f.Key) {
			return false
		}
	}
	return true
}

// Write prints v at the given indentation level as Slurm's serializer
// does.
func Write(b *strings.Builder, v any, indent int) {
	pad := strings.Repeat("  ", indent)
	switch t := v.(type) {
	case Object:
		b.WriteString("{\n")
		for i, f := range t {
			b.WriteString(pad + "  ")
			writeString(b, f.Key)
			b.WriteString(": ")
			Write(b, f.Val, indent+1)
			if i < len(t)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(pad + "}")
	case Array:
		b.WriteString("[\n")
		for i, e := range t {
			b.WriteString(pad + "  ")
			Write(b, e, indent+1)
			if i < len(t)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(pad + "]")
	case string:
		writeString(b, t)
	case Raw:
		b.WriteString(string(t))
	default:
		b.WriteString("null")
	}
}

// writeString escapes s as Slurm's serializer does ("/" as "\/").
func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '/':
			b.WriteString(`\/`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if c < 0x20 {
				fmt.Fprintf(b, `\u%04x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
}
