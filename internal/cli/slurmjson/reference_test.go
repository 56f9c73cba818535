package slurmjson

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-faster/jx"
)

// This file keeps the formatter as it was before Format read the
// encoder's text in one pass and Reorder ranked members by table: a tree
// decoded from the text, each object reordered by scanning its members
// once per name of the schema's order, and written again. The tests hold
// the present code to its output byte for byte.

func referenceFormat(v Encoder, o Schema) (string, error) {
	var e jx.Encoder
	v.Encode(&e)
	return referenceFormatText(e.Bytes(), o)
}

func referenceFormatText(src []byte, o Schema) (string, error) {
	tree, err := referenceDecode(jx.DecodeBytes(src))
	if err != nil {
		return "", fmt.Errorf("read generated JSON: %w", err)
	}
	var b strings.Builder
	referenceWrite(&b, referenceReorder(tree, "", o), 0)
	b.WriteByte('\n')
	return b.String(), nil
}

func referenceDecode(d *jx.Decoder) (any, error) {
	switch d.Next() {
	case jx.Object:
		obj := Object{}
		err := d.Obj(func(d *jx.Decoder, key string) error {
			v, err := referenceDecode(d)
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
			v, err := referenceDecode(d)
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

func referenceReorder(v any, path string, o Schema) any {
	switch t := v.(type) {
	case Object:
		want, ok := o.Order[path]
		if !ok && referenceIsNoValStruct(t) {
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
			out[i].Val = referenceReorder(out[i].Val, p, o)
		}
		return out
	case Array:
		for i := range t {
			t[i] = referenceReorder(t[i], path, o)
		}
		return t
	case Raw:
		if o.Floats[path] {
			return referenceDouble(t)
		}
	}
	return v
}

func referenceDouble(r Raw) Raw {
	f, err := strconv.ParseFloat(string(r), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return r
	}
	s := strconv.FormatFloat(f, 'g', 17, 64)
	if m, e, ok := strings.Cut(s, "e"); ok {
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

func referenceIsNoValStruct(o Object) bool {
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

func referenceWrite(b *strings.Builder, v any, indent int) {
	pad := strings.Repeat("  ", indent)
	switch t := v.(type) {
	case Object:
		b.WriteString("{\n")
		for i, f := range t {
			b.WriteString(pad + "  ")
			referenceWriteString(b, f.Key)
			b.WriteString(": ")
			referenceWrite(b, f.Val, indent+1)
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
			referenceWrite(b, e, indent+1)
			if i < len(t)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(pad + "]")
	case string:
		referenceWriteString(b, t)
	case Raw:
		b.WriteString(string(t))
	default:
		b.WriteString("null")
	}
}

func referenceWriteString(b *strings.Builder, s string) {
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
