package jobstream

import (
	"fmt"
	"io"
)

// scanner delimits the JSON values of an answer as it is read, so that
// each record can be decoded from its own bytes. A jx decoder reading
// from an io.Reader copies every member name it meets (a job record has
// a few hundred, nested ones included) because its buffer moves under
// them; one reading bytes, as the generated client reads a whole answer,
// does not. The scanner only finds where a value ends: the decoders that
// read the bytes it returns check them.
type scanner struct {
	r io.Reader
	// buf[pos:] is what has been read and not yet taken.
	buf []byte
	pos int
	// err is the reader's error once it has given one (io.EOF at the
	// end of the answer).
	err error
}

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, 0, readBuffer)}
}

// fill reads more of the answer, keeping what has not been taken: the
// buffer grows only for a value longer than what is left of it.
func (s *scanner) fill() error {
	if s.err != nil {
		return s.err
	}
	if s.pos > 0 {
		n := copy(s.buf, s.buf[s.pos:])
		s.buf, s.pos = s.buf[:n], 0
	}
	if cap(s.buf)-len(s.buf) < readBuffer/2 {
		grown := make([]byte, len(s.buf), 2*cap(s.buf)+readBuffer)
		copy(grown, s.buf)
		s.buf = grown
	}
	// A reader may return nothing and no error; io.ReadFull's rule of
	// thumb gives up after a hundred such reads.
	for range 100 {
		n, err := s.r.Read(s.buf[len(s.buf):cap(s.buf)])
		s.buf = s.buf[:len(s.buf)+n]
		if err != nil {
			s.err = err
		}
		if n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
	s.err = io.ErrNoProgress
	return s.err
}

// next returns the next byte that is not white space, without taking
// it; io.EOF at the end of the answer.
func (s *scanner) next() (byte, error) {
	for {
		for ; s.pos < len(s.buf); s.pos++ {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
			default:
				return c, nil
			}
		}
		if err := s.fill(); err != nil {
			return 0, err
		}
	}
}

// expect takes the next byte that is not white space, which must be c.
func (s *scanner) expect(c byte) error {
	got, err := s.next()
	switch {
	case err == io.EOF:
		return fmt.Errorf("%q expected: %w", c, io.ErrUnexpectedEOF)
	case err != nil:
		return err
	case got != c:
		return fmt.Errorf("%q expected, found %q", c, got)
	}
	s.pos++
	return nil
}

// value takes the next value: its bytes, valid until the scanner's next
// call.
func (s *scanner) value() ([]byte, error) {
	c, err := s.next()
	if err == io.EOF {
		return nil, fmt.Errorf("value expected: %w", io.ErrUnexpectedEOF)
	}
	if err != nil {
		return nil, err
	}
	switch c {
	case '"':
		return s.until(1, 0, true)
	case '{', '[':
		return s.until(1, 1, false)
	}
	// A number or a literal ends where a delimiter or the answer does.
	k := 1
	for {
		for ; s.pos+k < len(s.buf); k++ {
			switch s.buf[s.pos+k] {
			case ',', ':', '}', ']', '"', '{', '[', ' ', '\t', '\n', '\r':
				return s.take(k), nil
			}
		}
		if err := s.fill(); err == io.EOF {
			return s.take(k), nil
		} else if err != nil {
			return nil, err
		}
	}
}

// until takes the value whose first k bytes were seen: to the end of
// the string it is in (in) or of the objects and arrays open around
// it (depth).
func (s *scanner) until(k, depth int, in bool) ([]byte, error) {
	for {
		buf := s.buf[s.pos:]
		for k < len(buf) {
			b := buf[k]
			k++
			if !structural[b] {
				continue
			}
			if in {
				switch b {
				case '\\':
					k++ // the escaped byte, whatever it is
				case '"':
					in = false
					if depth == 0 {
						return s.take(k), nil
					}
				}
				continue
			}
			switch b {
			case '"':
				in = true
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return s.take(k), nil
				}
			}
		}
		if err := s.fill(); err == io.EOF {
			return nil, io.ErrUnexpectedEOF
		} else if err != nil {
			return nil, err
		}
	}
}

// structural marks the bytes until looks at: the rest of a value is
// passed over a byte at a time, which is most of it.
var structural = [256]bool{'"': true, '\\': true, '{': true, '}': true, '[': true, ']': true}

func (s *scanner) take(k int) []byte {
	v := s.buf[s.pos : s.pos+k]
	s.pos += k
	return v
}
