package slurmjson

import (
	"bytes"
	"fmt"
	"io"

	"github.com/go-faster/jx"
)

// List writes a response whose first member is a list as Format writes
// the whole response, one element at a time as the elements come, then
// the rest of the response: squeue --json over 50,000 jobs then never
// holds the decoded jobs, their compact text and its reordered copy at
// once. Nothing is written before the first element or Close, so a
// request that fails before any element leaves the output untouched.
type List struct {
	w      io.Writer
	o      Schema
	header []byte
	elem   *node
	f      formatter
	enc    jx.Encoder
	n      int
}

// NewList prepares a List for o's response whose list is member, which
// must come first in o's order of the response's members.
func NewList(w io.Writer, o Schema, member string) (*List, error) {
	c := o.compiled()
	m := c.root.member(member)
	if m == nil || !c.root.ordered || m.rank != 0 {
		return nil, fmt.Errorf("%q is not the first member of the response", member)
	}
	// The text before the first element is what Format writes of a
	// response holding the empty list alone, up to the list's opening.
	empty, err := appendFormatted(nil, []byte(`{"`+member+`":[]}`), o)
	if err != nil {
		return nil, err
	}
	open := bytes.Index(empty, []byte("[\n"))
	if open < 0 {
		return nil, fmt.Errorf("no list in %q", empty)
	}
	l := &List{w: w, o: o, header: empty[:open+2], elem: c.child(c.root, m, member)}
	l.f = formatter{c: c, pred: map[*node][]*memberInfo{}}
	return l, nil
}

// Element writes one element of the list.
func (l *List) Element(v Encoder) error {
	l.enc.Reset()
	v.Encode(&l.enc)
	f := &l.f
	f.src, f.pos = l.enc.Bytes(), 0
	f.out = f.out[:0]
	if l.n == 0 {
		f.out = append(f.out, l.header...)
	} else {
		f.out = append(f.out, ',', '\n')
	}
	f.out = appendPad(f.out, 2)
	// Inside the response and its list, as Format is when it gets
	// there.
	f.depth = 2
	if err := f.value(l.elem, 2); err != nil {
		return fmt.Errorf("read generated JSON: element %d: %w", l.n, err)
	}
	if f.skipSpace(); f.pos < len(f.src) {
		return fmt.Errorf("read generated JSON: element %d: %w", l.n, f.errorf("text after the value"))
	}
	l.n++
	if _, err := l.w.Write(f.out); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// Close writes the rest of the response, rest, whose list is empty (the
// elements written stand for it), and Format's final newline.
func (l *List) Close(rest Encoder) error {
	var e jx.Encoder
	rest.Encode(&e)
	text, err := appendFormatted(nil, e.Bytes(), l.o)
	if err != nil {
		return fmt.Errorf("read generated JSON: %w", err)
	}
	if !bytes.HasPrefix(text, l.header) {
		return fmt.Errorf("the response does not begin with its empty list")
	}
	tail := text[len(l.header):]
	var b []byte
	if l.n == 0 {
		b = append(b, l.header...)
	} else {
		b = append(b, '\n')
	}
	b = append(append(b, tail...), '\n')
	if _, err := l.w.Write(b); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
