package stream

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzReader checks that no input panics the Reader, that it fails only
// with the documented errors, and that the encoding is canonical: the frames
// it reads re-encode to exactly the bytes they were read from.
func FuzzReader(f *testing.F) {
	f.Add([]byte{})
	f.Add(encode(f, everyKind...))
	f.Add(encode(f, everyKind[0]))
	f.Add(header(MaxData + 1))
	f.Add(with(header(0), 2, 1))
	f.Add(append(header(3), "abcdef"...))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := readAll(in)
		if err != io.EOF && !errors.Is(err, ErrMalformed) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("Next error %v is none of io.EOF, ErrMalformed, io.ErrUnexpectedEOF", err)
		}
		consumed := 0
		for _, f := range got {
			if len(f.Data) > MaxData {
				t.Fatalf("read a %v frame of %d bytes", f.Kind, len(f.Data))
			}
			consumed += headerLen + len(f.Data)
		}
		if err == io.EOF && consumed != len(in) {
			t.Fatalf("io.EOF after %d of %d bytes", consumed, len(in))
		}
		if len(got) == 0 {
			return
		}
		again := encode(t, got...)
		if !bytes.Equal(again, in[:consumed]) {
			t.Fatalf("frames re-encode to %x, read from %x", again, in[:consumed])
		}
		back, err := readAll(again)
		if err != io.EOF {
			t.Fatalf("reading re-encoded frames: %v", err)
		}
		if diff := cmp.Diff(got, back); diff != "" {
			t.Fatalf("re-encoded frames read back differently (-first +second):\n%s", diff)
		}
	})
}
