package slurmjson

import (
	"errors"
	"fmt"

	"github.com/go-faster/jx"
)

// maxDepth bounds nesting as jx's decoder does.
const maxDepth = 10000

var errEnd = errors.New("unexpected end of JSON")

// formatter writes JSON text as Write writes the tree Decode and Reorder
// make of it, in one pass and with no tree. Each object's members are
// written one after the other as they come; at the object's end, if the
// schema puts them in another order, their texts are put in it in tmp
// and moved back. A byte is thus copied twice for each reordered object
// it is in, which is cheap beside building and walking a tree.
type formatter struct {
	c   *compiled
	src []byte
	pos int
	out []byte
	// tmp is where an object's members are put in order.
	tmp []byte
	// ms holds the members of the objects being written, innermost last.
	ms      []ranked
	scratch []ranked
	counts  []int
	depth   int
	// pred is the members of the last object read at each path.
	pred map[*node][]*memberInfo
	// dec and str decode strings with escapes in them, as Decode does.
	dec jx.Decoder
	str []byte
}

// appendFormatted appends src, one JSON value, to dst as Format prints
// it.
func appendFormatted(dst, src []byte, o Schema) ([]byte, error) {
	f := formatter{c: o.compiled(), src: src, out: dst, pred: map[*node][]*memberInfo{}}
	if err := f.value(f.c.root, 0); err != nil {
		return dst, err
	}
	f.skipSpace()
	if f.pos < len(f.src) {
		return dst, f.errorf("text after the value")
	}
	return f.out, nil
}

func (f *formatter) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", f.pos, fmt.Sprintf(format, args...))
}

func (f *formatter) skipSpace() {
	for f.pos < len(f.src) {
		switch f.src[f.pos] {
		case ' ', '\t', '\n', '\r':
			f.pos++
		default:
			return
		}
	}
}

// next skips white space and takes the byte after it.
func (f *formatter) next() (byte, error) {
	f.skipSpace()
	if f.pos >= len(f.src) {
		return 0, errEnd
	}
	c := f.src[f.pos]
	f.pos++
	return c, nil
}

// value writes the value at f.pos, whose path is n, at the given
// indentation level.
func (f *formatter) value(n *node, indent int) error {
	f.skipSpace()
	if f.pos >= len(f.src) {
		return errEnd
	}
	switch f.src[f.pos] {
	case '{':
		return f.object(n, indent)
	case '[':
		return f.array(n, indent)
	case '"':
		s, err := f.string()
		if err != nil {
			return err
		}
		f.out = appendEscaped(f.out, s)
		return nil
	default:
		return f.literal(n)
	}
}

// open enters the object or array at f.pos, which ends with end, and
// reports whether it is empty, in which case it is written whole.
func (f *formatter) open(end byte, indent int) (empty bool, err error) {
	if f.depth++; f.depth > maxDepth {
		return false, f.errorf("nested too deep")
	}
	f.out = append(f.out, f.src[f.pos], '\n')
	f.pos++
	f.skipSpace()
	if f.pos < len(f.src) && f.src[f.pos] == end {
		f.pos++
		f.close(end, indent)
		return true, nil
	}
	return false, nil
}

// close writes the end of an object or array and leaves it.
func (f *formatter) close(end byte, indent int) {
	f.out = appendPad(f.out, indent)
	f.out = append(f.out, end)
	f.depth--
}

func (f *formatter) object(n *node, indent int) error {
	if empty, err := f.open('}', indent); empty || err != nil {
		return err
	}
	first := len(f.out)
	base := len(f.ms)
	// The encoder writes the members of the objects at one path in
	// the same order each time: guessing each from the object before
	// saves most map lookups. Unlisted members end the guessing.
	var pred []*memberInfo
	predicting, changed := n != nil, false
	if predicting {
		pred = f.pred[n]
	}
	for {
		f.skipSpace()
		if f.pos >= len(f.src) {
			return errEnd
		}
		if f.src[f.pos] != '"' {
			return f.errorf("member name expected")
		}
		keyStart := f.pos
		key, err := f.string()
		if err != nil {
			return err
		}
		keyText := f.src[keyStart:f.pos]
		if c, err := f.next(); err != nil {
			return err
		} else if c != ':' {
			return f.errorf(`":" expected after member name`)
		}
		start := len(f.out)
		f.out = appendPad(f.out, indent+1)
		var m *memberInfo
		if i := len(f.ms) - base; i < len(pred) && pred[i].key == string(key) {
			m = pred[i]
		} else {
			m = n.memberBytes(key)
			if m == nil {
				predicting = false
			} else if predicting {
				pred = append(pred[:i], m)
				changed = true
			}
		}
		rm := ranked{start: start}
		var child *node
		if m != nil {
			f.out = append(f.out, m.text...)
			rm.rank, rm.noVal, child = m.rank, m.noVal, m.child
			if m.joined {
				child = f.c.child(n, m, string(key))
			}
		} else {
			f.out = appendEscaped(f.out, key)
			f.out = append(f.out, ':', ' ')
			rm.rank, rm.noVal = n.unlisted(), noValRank(string(key))
			if n != nil && joinedKey(n, key) {
				child = f.c.child(n, nil, string(key))
			}
		}
		if err := f.value(child, indent+1); err != nil {
			return fmt.Errorf("member %s: %w", keyText, err)
		}
		rm.end = len(f.out)
		f.ms = append(f.ms, rm)
		f.out = append(f.out, ',', '\n')
		c, err := f.next()
		if err != nil {
			return err
		}
		if c == '}' {
			break
		}
		if c != ',' {
			return f.errorf(`"," or "}" expected`)
		}
	}
	if changed {
		f.pred[n] = pred
	}
	ms := f.ms[base:]
	if sortMembers(ms, n, &f.scratch, &f.counts) {
		// The outermost object is put together in a buffer of its own,
		// which becomes the output, rather than in tmp and moved back:
		// it is all of the text.
		outermost := f.depth == 1
		dst := f.tmp[:0]
		if outermost {
			dst = make([]byte, first, len(f.out)+2*indent+2)
			copy(dst, f.out)
		}
		for i, m := range ms {
			dst = append(dst, f.out[m.start:m.end]...)
			if i < len(ms)-1 {
				dst = append(dst, ',')
			}
			dst = append(dst, '\n')
		}
		if outermost {
			f.out = dst
		} else {
			f.out = append(f.out[:first], dst...)
			f.tmp = dst
		}
	} else {
		// The last member has no comma.
		f.out[len(f.out)-2] = '\n'
		f.out = f.out[:len(f.out)-1]
	}
	f.ms = f.ms[:base]
	f.close('}', indent)
	return nil
}

func (f *formatter) array(n *node, indent int) error {
	if empty, err := f.open(']', indent); empty || err != nil {
		return err
	}
	for i := 0; ; i++ {
		f.out = appendPad(f.out, indent+1)
		if err := f.value(n, indent+1); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
		f.out = append(f.out, ',', '\n')
		c, err := f.next()
		if err != nil {
			return err
		}
		if c == ']' {
			break
		}
		if c != ',' {
			return f.errorf(`"," or "]" expected`)
		}
	}
	f.out[len(f.out)-2] = '\n'
	f.out = f.out[:len(f.out)-1]
	f.close(']', indent)
	return nil
}

// string reads the string at f.pos. What it returns is valid until the
// next string is read.
func (f *formatter) string() ([]byte, error) {
	start := f.pos
	escaped := false
	i := start + 1
	for {
		if i >= len(f.src) {
			return nil, errEnd
		}
		c := f.src[i]
		if c == '"' {
			break
		}
		if c < 0x20 {
			f.pos = i
			return nil, f.errorf("control character in string")
		}
		if c == '\\' {
			escaped = true
			i++
		}
		i++
	}
	f.pos = i + 1
	if !escaped {
		return f.src[start+1 : i], nil
	}
	// Escapes are rare in the encoder's text: jx reads them as Decode
	// does.
	f.dec.ResetBytes(f.src[start:f.pos])
	s, err := f.dec.StrAppend(f.str[:0])
	if err != nil {
		return nil, fmt.Errorf("string at offset %d: %w", start, err)
	}
	f.str = s
	return s, nil
}

// literal writes the number, true, false or null at f.pos, as Slurm
// writes a double where n holds one.
func (f *formatter) literal(n *node) error {
	start := f.pos
	i := start
	for i < len(f.src) && literalByte(f.src[i]) {
		i++
	}
	lit := f.src[start:i]
	if !validLiteral(lit) {
		return f.errorf("invalid value %q", lit)
	}
	f.pos = i
	if n != nil && n.float {
		f.out = append(f.out, Double(Raw(lit))...)
	} else {
		f.out = append(f.out, lit...)
	}
	return nil
}

func literalByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'E'
}

// validLiteral says whether lit is true, false, null or a JSON number.
func validLiteral(lit []byte) bool {
	switch string(lit) {
	case "true", "false", "null":
		return true
	}
	i := 0
	if i < len(lit) && lit[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(lit) && '0' <= lit[i] && lit[i] <= '9' {
			i++
			n++
		}
		return n
	}
	if i < len(lit) && lit[i] == '0' {
		i++
	} else if digits() == 0 {
		return false
	}
	if i < len(lit) && lit[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(lit) && (lit[i] == 'e' || lit[i] == 'E') {
		i++
		if i < len(lit) && (lit[i] == '+' || lit[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(lit)
}
