package stream

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Reader reads frames from a connection. It is not safe for concurrent use.
type Reader struct {
	r   *bufio.Reader
	hdr [headerLen]byte
	err error // sticky: the stream ended, is malformed, or broke inside a frame
}

// NewReader returns a Reader that reads frames from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10)}
}

// Next returns the next frame. Its Data is a fresh slice the caller may keep
// (nil when the frame has none).
//
// At a clean end of the stream between frames Next returns io.EOF. A stream
// that ends inside a frame gives an error wrapping io.ErrUnexpectedEOF;
// bytes that are not a valid frame give one wrapping ErrMalformed (and
// ErrTooLarge for a length over MaxData). These errors, and a read error in
// the middle of a frame, are returned again by every later call. A read
// error before the first byte of a frame (a deadline passing while the peer
// is quiet) is returned as is, and Next may be called again.
func (r *Reader) Next() (Frame, error) {
	if r.err != nil {
		return Frame{}, r.err
	}
	n, err := io.ReadFull(r.r, r.hdr[:])
	switch {
	case err == nil:
	case n == 0 && errors.Is(err, io.EOF):
		r.err = io.EOF
		return Frame{}, io.EOF
	case n == 0:
		return Frame{}, err
	case errors.Is(err, io.ErrUnexpectedEOF):
		r.err = fmt.Errorf("stepio: stream ends inside a frame header (%d of %d bytes): %w", n, headerLen, io.ErrUnexpectedEOF)
		return Frame{}, r.err
	default:
		r.err = fmt.Errorf("stepio: reading frame header: %w", err)
		return Frame{}, r.err
	}

	f, size, err := parseHeader(r.hdr[:])
	if err != nil {
		r.err = err
		return Frame{}, err
	}
	if size == 0 {
		return f, nil
	}
	f.Data = make([]byte, size)
	n, err = io.ReadFull(r.r, f.Data)
	switch {
	case err == nil:
		return f, nil
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		r.err = fmt.Errorf("stepio: stream ends inside a %v frame (%d of %d data bytes): %w", f.Kind, n, size, io.ErrUnexpectedEOF)
	default:
		r.err = fmt.Errorf("stepio: reading %v frame data: %w", f.Kind, err)
	}
	return Frame{}, r.err
}
