package stream

import (
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
)

const (
	// directData is the Data size from which a frame's data is handed to
	// the connection straight from the caller's slice (with the buffered
	// bytes, in one writev on a net.Conn) instead of being copied.
	directData = 16 << 10
	// flushAt bounds the buffer: a burst of small frames that never pauses
	// still goes out in chunks of about this size.
	flushAt = 64 << 10
)

// Writer writes frames to a connection. It is safe for concurrent use: the
// output pumps of all the tasks of a node share one Writer.
//
// Output must stream, so a Write does not wait for a buffer to fill: when
// no other Write is waiting, it sends what is buffered before returning.
// Writes that arrive while the connection is busy queue up and the last of
// them sends them all at once, so many tasks writing small chunks cost few
// system calls. A nil error from Write therefore means the frame was sent,
// or was queued behind a concurrent Write that will send it.
//
// The first error from the underlying writer is kept and returned by every
// later Write and Flush: after a failed write the stream may end inside a
// frame, and nothing more can be sent on it.
type Writer struct {
	// waiting counts Writes that have not yet queued their frames. A Write
	// that sees others waiting after queueing leaves the flush to them.
	waiting atomic.Int32

	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error
}

// NewWriter returns a Writer that sends frames to w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w, buf: make([]byte, 0, 4<<10)}
}

// Write sends f. Stdout, Stderr and Stdin Data larger than MaxData goes as
// several frames of the same kind, Task and Node; Hello and Failed Data
// larger than MaxData is refused with ErrTooLarge. Write does not keep
// f.Data after it returns.
func (w *Writer) Write(f Frame) error {
	if err := f.check(); err != nil {
		return fmt.Errorf("stepio: cannot send: %w", err)
	}
	if len(f.Data) > MaxData && !f.Kind.splittable() {
		return fmt.Errorf("stepio: cannot send a %v frame of %d bytes, limit %d: %w", f.Kind, len(f.Data), MaxData, ErrTooLarge)
	}

	w.waiting.Add(1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		w.waiting.Add(-1)
		return w.err
	}
	data := f.Data
	for {
		chunk := data[:min(len(data), MaxData)]
		data = data[len(chunk):]
		w.queue(&f, chunk)
		if len(data) == 0 || w.err != nil {
			break
		}
	}
	// Decrement before looking: a Write still counted now has not queued
	// its frames yet and will take the lock after us, so it (or one after
	// it) sends what we leave in the buffer.
	w.waiting.Add(-1)
	if w.err == nil && len(w.buf) > 0 && (w.waiting.Load() == 0 || len(w.buf) >= flushAt) {
		w.flushLocked()
	}
	return w.err
}

// queue appends one frame to the buffer, or sends the buffer and a large
// chunk together. w.mu is held.
func (w *Writer) queue(f *Frame, chunk []byte) {
	var hdr [headerLen]byte
	putHeader(hdr[:], f, len(chunk))
	w.buf = append(w.buf, hdr[:]...)
	if len(chunk) < directData {
		w.buf = append(w.buf, chunk...)
		if len(w.buf) >= flushAt {
			w.flushLocked()
		}
		return
	}
	bufs := net.Buffers{w.buf, chunk}
	_, err := bufs.WriteTo(w.w)
	w.buf = w.buf[:0]
	if err != nil {
		w.err = fmt.Errorf("stepio: write: %w", err)
	}
}

// Flush sends any buffered frames.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && len(w.buf) > 0 {
		w.flushLocked()
	}
	return w.err
}

func (w *Writer) flushLocked() {
	_, err := w.w.Write(w.buf)
	w.buf = w.buf[:0]
	if err != nil {
		w.err = fmt.Errorf("stepio: write: %w", err)
	}
}
