// Package slurmjson prints JSON as Slurm's commands do (squeue --json,
// sinfo --json): members in the order of Slurm's data parser, which is the
// order of the slurmrestd OpenAPI schemas, two-space indentation,
// "key": value, "/" escaped as "\/", and empty arrays and objects with
// their closing bracket on a line of its own. The generated ogen encoders
// write members alphabetically, so Format reorders their text by schema
// as it writes it again; Decode, Reorder and Write do the same through a
// tree that callers can add to.
package slurmjson

//go:generate go run genorder.go -spec ../../../openapi/spec/slurmrestd-v0.0.44.json -out order_gen.go

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/go-faster/jx"

	v0044 "github.com/droverhq/drover/openapi/v0044"
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
// share their array's path. A Schema is not changed once used.
type Schema struct {
	// Order lists the members of each object in Slurm's order, each
	// member once.
	Order map[string][]string
	// Floats are the members holding doubles, which Slurm's serializer
	// writes as C's "%.17g" with ".0" added to whole numbers ("1.0").
	Floats map[string]bool

	// cache keeps the tables built from Order and Floats; without one
	// they are built on every call.
	cache *schemaCache
}

// noValOrder is the member order of the v0.0.44 number structs, used
// where a path has no order of its own.
var noValOrder = []string{"set", "infinite", "number"}

// Encoder is a generated type that writes itself as JSON.
type Encoder interface{ Encode(e *jx.Encoder) }

// Format writes v, a generated value, as Slurm's commands print it: its
// members reordered and its doubles written as the schema says, and a
// final newline. It gives what Decode, Reorder and Write give, reordering
// the encoder's text as it reads it rather than building a tree, which
// for a few thousand jobs took most of squeue --json's time.
func Format(v Encoder, o Schema) (string, error) {
	var e jx.Encoder
	if n := sizeHint(v); n > 0 {
		e.Grow(n)
	}
	v.Encode(&e)
	src := e.Bytes()
	// The layout takes about twice the compact text.
	out, err := appendFormatted(make([]byte, 0, 2*len(src)), src, o)
	if err != nil {
		return "", fmt.Errorf("read generated JSON: %w", err)
	}
	out = append(out, '\n')
	// out is not touched again: the string can share it, as
	// strings.Builder does.
	return unsafe.String(unsafe.SliceData(out), len(out)), nil
}

// sizeHint guesses the length of v's text, 0 where it cannot. Without
// it the encoder's buffer, grown by a quarter at a time once large, is
// copied several times over for thousands of jobs, which took half the
// time of encoding them. The jobs are guessed from a few spread over the
// list.
func sizeHint(v Encoder) int {
	r, ok := v.(*v0044.V0044OpenapiJobInfoResp)
	if !ok || len(r.Jobs) == 0 {
		return 0
	}
	n := min(len(r.Jobs), 16)
	var e jx.Encoder
	for i := range n {
		r.Jobs[i*len(r.Jobs)/n].Encode(&e)
	}
	return len(e.Bytes())/n*len(r.Jobs)*9/8 + 4096
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
	c := o.compiled()
	r := reorderer{c: c}
	return r.reorder(v, c.lookup(path))
}

// reorderer keeps the scratch space of one Reorder call.
type reorderer struct {
	c       *compiled
	ms      []ranked
	scratch []ranked
	counts  []int
	// kids are the nodes of the values of the members in ms, by start.
	kids []*node
}

func (r *reorderer) reorder(v any, n *node) any {
	switch t := v.(type) {
	case Object:
		base := len(r.ms)
		for i, f := range t {
			m := n.member(f.Key)
			rm := ranked{start: i, rank: n.unlisted(), noVal: noValRank(f.Key)}
			if m != nil {
				rm.rank = m.rank
			}
			r.ms = append(r.ms, rm)
			r.kids = append(r.kids, r.c.child(n, m, f.Key))
		}
		ms := r.ms[base:]
		sortMembers(ms, n, &r.scratch, &r.counts)
		out := make(Object, len(t))
		// The members below push theirs above ms and take them off
		// again, so ms stays as it is.
		for i, m := range ms {
			out[i] = Field{Key: t[m.start].Key, Val: r.reorder(t[m.start].Val, r.kids[base+m.start])}
		}
		r.ms = r.ms[:base]
		r.kids = r.kids[:base]
		return out
	case Array:
		for i := range t {
			t[i] = r.reorder(t[i], n)
		}
		return t
	case Raw:
		if n != nil && n.float {
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

// Write prints v at the given indentation level as Slurm's serializer
// does.
func Write(b *strings.Builder, v any, indent int) {
	b.Write(appendTree(nil, v, indent))
}

func appendTree(b []byte, v any, indent int) []byte {
	switch t := v.(type) {
	case Object:
		b = append(b, '{', '\n')
		for i, f := range t {
			b = appendPad(b, indent+1)
			b = appendEscaped(b, f.Key)
			b = append(b, ':', ' ')
			b = appendTree(b, f.Val, indent+1)
			if i < len(t)-1 {
				b = append(b, ',')
			}
			b = append(b, '\n')
		}
		b = appendPad(b, indent)
		return append(b, '}')
	case Array:
		b = append(b, '[', '\n')
		for i, e := range t {
			b = appendPad(b, indent+1)
			b = appendTree(b, e, indent+1)
			if i < len(t)-1 {
				b = append(b, ',')
			}
			b = append(b, '\n')
		}
		b = appendPad(b, indent)
		return append(b, ']')
	case string:
		return appendEscaped(b, t)
	case Raw:
		return append(b, t...)
	default:
		return append(b, "null"...)
	}
}

// spaces is the indentation written at once.
const spaces = "                                                                "

// appendPad indents by indent levels of two spaces.
func appendPad(b []byte, indent int) []byte {
	n := 2 * indent
	for n > len(spaces) {
		b = append(b, spaces...)
		n -= len(spaces)
	}
	return append(b, spaces[:n]...)
}

// plain marks the bytes a string holds as they are in Slurm's JSON.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\' && c != '/'
	}
	return t
}()

// appendEscaped writes s as Slurm's serializer does ("/" as "\/").
func appendEscaped[S string | []byte](b []byte, s S) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && plain[s[j]] {
			j++
		}
		b = append(b, s[i:j]...)
		if j == len(s) {
			break
		}
		switch c := s[j]; c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '/':
			b = append(b, '\\', '/')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i = j + 1
	}
	return append(b, '"')
}
