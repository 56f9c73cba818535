package stream

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// everyKind is one frame of each kind, with the fields that kind uses.
var everyKind = []Frame{
	{Kind: Hello, Node: 3, Data: []byte("eyJqb2IiOjF9.c2ln")},
	{Kind: Stdout, Node: 3, Task: 7, Data: []byte("hello\n")},
	{Kind: Stderr, Node: 3, Task: 7, Data: []byte("warning: x\n")},
	{Kind: Exit, Node: 3, Task: 7, Code: 2},
	{Kind: Exit, Node: 3, Task: 8, Code: 9, Signaled: true},
	{Kind: Failed, Node: 3, Task: 9, Data: []byte("execve(): foo: No such file or directory")},
	{Kind: Stdin, Task: 7, Data: []byte("input\n")},
	{Kind: Stdin, Task: AllTasks, Data: []byte("to all\n")},
	{Kind: StdinEOF, Task: AllTasks},
	{Kind: Signal, Code: 15},
	{Kind: Stdout, Node: ^uint32(0), Task: 1, Code: -1},
	{Kind: Stdout, Task: 1},
}

// encode writes frames with a Writer and returns the bytes.
func encode(t testing.TB, frames ...Frame) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, f := range frames {
		if err := w.Write(f); err != nil {
			t.Fatalf("Write(%v): %v", f.Kind, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	return buf.Bytes()
}

// readAll reads frames until an error, which it returns (io.EOF at a clean end).
func readAll(b []byte) ([]Frame, error) {
	r := NewReader(bytes.NewReader(b))
	var got []Frame
	for {
		f, err := r.Next()
		if err != nil {
			return got, err
		}
		got = append(got, f)
	}
}

func TestRoundTrip(t *testing.T) {
	got, err := readAll(encode(t, everyKind...))
	if err != io.EOF {
		t.Fatalf("reading back: %v, want io.EOF", err)
	}
	if diff := cmp.Diff(everyKind, got); diff != "" {
		t.Errorf("frames read back (-want +got):\n%s", diff)
	}
}

func TestHeaderLayout(t *testing.T) {
	tests := map[string]struct {
		f    Frame
		want []byte
	}{
		"stdout": {
			f: Frame{Kind: Stdout, Node: 1, Task: 0x0203, Data: []byte("hi")},
			want: []byte{0xD1, 2, 0, 0, 0, 0, 0, 1, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 2,
				'h', 'i'},
		},
		"exit by signal": {
			f:    Frame{Kind: Exit, Node: 2, Task: 5, Code: 9, Signaled: true},
			want: []byte{0xD1, 4, 1, 0, 0, 0, 0, 2, 0, 0, 0, 5, 0, 0, 0, 9, 0, 0, 0, 0},
		},
		"negative code": {
			f:    Frame{Kind: Exit, Code: -1},
			want: []byte{0xD1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, encode(t, tt.f)); diff != "" {
				t.Errorf("encoding (-want +got):\n%s", diff)
			}
		})
	}
}

func TestKindString(t *testing.T) {
	got := fmt.Sprint(Hello, Stdout, Stderr, Exit, Failed, Stdin, StdinEOF, Signal, KVSData, KVSFence, Abort, Kind(0), Kind(12))
	want := "Hello Stdout Stderr Exit Failed Stdin StdinEOF Signal KVSData KVSFence Abort Kind(0) Kind(12)"
	if got != want {
		t.Errorf("kind names = %q, want %q", got, want)
	}
}

func TestSplit(t *testing.T) {
	big := make([]byte, 2*MaxData+MaxData/2)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for _, k := range []Kind{Stdout, Stderr, Stdin} {
		t.Run(k.String(), func(t *testing.T) {
			got, err := readAll(encode(t, Frame{Kind: k, Node: 4, Task: 2, Data: big}))
			if err != io.EOF {
				t.Fatalf("reading back: %v", err)
			}
			want := []Frame{
				{Kind: k, Node: 4, Task: 2, Data: big[:MaxData]},
				{Kind: k, Node: 4, Task: 2, Data: big[MaxData : 2*MaxData]},
				{Kind: k, Node: 4, Task: 2, Data: big[2*MaxData:]},
			}
			// Comparing megabytes with cmp's reporter takes seconds.
			if diff := cmp.Diff(want, got, cmp.Comparer(bytes.Equal)); diff != "" {
				t.Errorf("split frames (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("exactly MaxData is one frame", func(t *testing.T) {
		got, _ := readAll(encode(t, Frame{Kind: Stdout, Data: big[:MaxData]}))
		if len(got) != 1 {
			t.Errorf("got %d frames, want 1", len(got))
		}
	})
}

func TestWriteRefuses(t *testing.T) {
	tests := map[string]struct {
		f    Frame
		want error
	}{
		"unknown kind":        {f: Frame{Kind: 0}, want: ErrMalformed},
		"kind past the last":  {f: Frame{Kind: Abort + 1}, want: ErrMalformed},
		"data on a fence":     {f: Frame{Kind: KVSFence, Data: []byte("x")}, want: ErrMalformed},
		"signaled stdout":     {f: Frame{Kind: Stdout, Signaled: true}, want: ErrMalformed},
		"data on exit":        {f: Frame{Kind: Exit, Data: []byte("x")}, want: ErrMalformed},
		"data on signal":      {f: Frame{Kind: Signal, Code: 2, Data: []byte("x")}, want: ErrMalformed},
		"data on stdin eof":   {f: Frame{Kind: StdinEOF, Data: []byte("x")}, want: ErrMalformed},
		"oversized hello":     {f: Frame{Kind: Hello, Data: make([]byte, MaxData+1)}, want: ErrTooLarge},
		"oversized failed":    {f: Frame{Kind: Failed, Data: make([]byte, MaxData+1)}, want: ErrTooLarge},
		"hello at most is ok": {f: Frame{Kind: Hello, Data: make([]byte, MaxData)}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf)
			err := w.Write(tt.f)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Write = %v, want %v", err, tt.want)
			}
			if tt.want != nil && buf.Len() != 0 {
				t.Errorf("refused frame wrote %d bytes", buf.Len())
			}
			// A refused frame does not poison the stream.
			if err := w.Write(Frame{Kind: Signal, Code: 1}); err != nil {
				t.Errorf("Write after refusal: %v", err)
			}
		})
	}
}

// header returns a valid Stdout header with length n, for corrupting.
func header(n uint32) []byte {
	b := make([]byte, headerLen)
	putHeader(b, &Frame{Kind: Stdout, Task: 1}, int(n))
	return b
}

func with(b []byte, at int, v byte) []byte {
	b = bytes.Clone(b)
	b[at] = v
	return b
}

func TestReaderRejects(t *testing.T) {
	tests := map[string]struct {
		in   []byte
		want []error
	}{
		"text":              {in: []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), want: []error{ErrMalformed}},
		"zeros":             {in: make([]byte, 64), want: []error{ErrMalformed}},
		"other version":     {in: with(header(0), 0, 0xD2), want: []error{ErrMalformed}},
		"kind zero":         {in: with(header(0), 1, 0), want: []error{ErrMalformed}},
		"kind twelve":       {in: with(header(0), 1, 12), want: []error{ErrMalformed}},
		"unknown flag":      {in: with(header(0), 2, 2), want: []error{ErrMalformed}},
		"signaled stdout":   {in: with(header(0), 2, 1), want: []error{ErrMalformed}},
		"reserved byte":     {in: with(header(0), 3, 1), want: []error{ErrMalformed}},
		"data on exit":      {in: append(with(header(1), 1, byte(Exit)), 'x'), want: []error{ErrMalformed}},
		"one over MaxData":  {in: header(MaxData + 1), want: []error{ErrMalformed, ErrTooLarge}},
		"huge length":       {in: header(^uint32(0)), want: []error{ErrMalformed, ErrTooLarge}},
		"cut header":        {in: header(0)[:7], want: []error{io.ErrUnexpectedEOF}},
		"cut data":          {in: append(header(10), "12345"...), want: []error{io.ErrUnexpectedEOF}},
		"no data at all":    {in: header(10), want: []error{io.ErrUnexpectedEOF}},
		"garbage after one": {in: append(encode(t, Frame{Kind: Signal, Code: 2}), "junk"...), want: []error{io.ErrUnexpectedEOF}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(tt.in))
			var err error
			for err == nil {
				_, err = r.Next()
			}
			for _, want := range tt.want {
				if !errors.Is(err, want) {
					t.Errorf("Next error = %v, want one wrapping %v", err, want)
				}
			}
			if _, again := r.Next(); again != err {
				t.Errorf("Next after %v = %v, want the same error", err, again)
			}
		})
	}
}

func TestTruncated(t *testing.T) {
	stream := encode(t, everyKind...)
	bounds := map[int]int{0: 0} // offset of a frame boundary -> frames before it
	off := 0
	for i, f := range everyKind {
		off += headerLen + len(f.Data)
		bounds[off] = i + 1
	}
	for cut := 0; cut <= len(stream); cut++ {
		got, err := readAll(stream[:cut])
		if n, ok := bounds[cut]; ok {
			if err != io.EOF || len(got) != n {
				t.Errorf("cut at boundary %d: %d frames, %v; want %d frames, io.EOF", cut, len(got), err, n)
			}
			continue
		}
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("cut at %d: %v, want io.ErrUnexpectedEOF", cut, err)
		}
	}
}

// TestStreams checks that a Write reaches the peer without Flush: net.Pipe
// has no buffer, so a frame left in the Writer's would never be read.
func TestStreams(t *testing.T) {
	node, srun := net.Pipe()
	defer node.Close()
	defer srun.Close()
	w := NewWriter(node)
	r := NewReader(srun)
	errc := make(chan error, 1)
	go func() {
		for _, f := range everyKind {
			if err := w.Write(f); err != nil {
				errc <- err
				return
			}
		}
		errc <- nil
	}()
	srun.SetReadDeadline(time.Now().Add(10 * time.Second))
	for i, want := range everyKind {
		got, err := r.Next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("frame %d (-want +got):\n%s", i, diff)
		}
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentWriters(t *testing.T) {
	const tasks, perTask = 16, 300
	node, srun := net.Pipe()
	defer srun.Close()
	w := NewWriter(node)

	var wg sync.WaitGroup
	errc := make(chan error, tasks)
	for task := range uint32(tasks) {
		wg.Go(func() {
			for i := range perTask {
				data := fmt.Appendf(nil, "task %d line %d\n", task, i)
				if i%50 == 7 {
					data = append(data, bytes.Repeat([]byte{byte(task)}, directData+i)...)
				}
				if err := w.Write(Frame{Kind: Stdout, Task: task, Data: data}); err != nil {
					errc <- err
					return
				}
			}
			errc <- w.Write(Frame{Kind: Exit, Task: task})
		})
	}
	go func() {
		wg.Wait()
		node.Close()
	}()

	r := NewReader(srun)
	next := make([]int, tasks)
	exited := 0
	for {
		f, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		if f.Task >= tasks {
			t.Fatalf("frame for task %d", f.Task)
		}
		if f.Kind == Exit {
			if next[f.Task] != perTask {
				t.Errorf("task %d exited after %d of %d lines", f.Task, next[f.Task], perTask)
			}
			exited++
			continue
		}
		want := fmt.Sprintf("task %d line %d\n", f.Task, next[f.Task])
		if !bytes.HasPrefix(f.Data, []byte(want)) {
			t.Fatalf("task %d: got %.40q, want %q", f.Task, f.Data, want)
		}
		next[f.Task]++
	}
	if exited != tasks {
		t.Errorf("%d exits, want %d", exited, tasks)
	}
	for range tasks {
		if err := <-errc; err != nil {
			t.Errorf("writer: %v", err)
		}
	}
}

// gatedConn counts writes and holds the first one until released.
type gatedConn struct {
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	writes  int
	buf     bytes.Buffer
}

func (g *gatedConn) Write(p []byte) (int, error) {
	g.mu.Lock()
	g.writes++
	first := g.writes == 1
	g.mu.Unlock()
	if first {
		close(g.entered)
		<-g.release
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

// TestCoalesce checks that frames written while the connection is busy go
// out together: one Write blocks in the connection while the others queue,
// and they then cost a single write between them.
func TestCoalesce(t *testing.T) {
	const writers = 8
	conn := &gatedConn{entered: make(chan struct{}), release: make(chan struct{})}
	w := NewWriter(conn)
	errc := make(chan error, writers+1)
	go func() { errc <- w.Write(Frame{Kind: Stdout, Task: 99, Data: []byte("first\n")}) }()
	<-conn.entered
	for task := range uint32(writers) {
		go func() { errc <- w.Write(Frame{Kind: Stdout, Task: task, Data: []byte("x\n")}) }()
	}
	deadline := time.Now().Add(10 * time.Second)
	for w.waiting.Load() != writers {
		if time.Now().After(deadline) {
			t.Fatalf("%d writers waiting, want %d", w.waiting.Load(), writers)
		}
		time.Sleep(time.Millisecond)
	}
	close(conn.release)
	for range writers + 1 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	if conn.writes != 2 {
		t.Errorf("%d writes to the connection, want 2 (the first frame, then the %d queued ones)", conn.writes, writers)
	}
	got, err := readAll(conn.buf.Bytes())
	if err != io.EOF || len(got) != writers+1 {
		t.Errorf("read back %d frames, %v; want %d, io.EOF", len(got), err, writers+1)
	}
}

type failConn struct{ n int }

var errBroken = errors.New("broken pipe")

func (c *failConn) Write(p []byte) (int, error) {
	c.n++
	return 0, errBroken
}

func TestWriteErrorSticks(t *testing.T) {
	c := &failConn{}
	w := NewWriter(c)
	if err := w.Write(Frame{Kind: Stdout, Data: []byte("a")}); !errors.Is(err, errBroken) {
		t.Fatalf("Write = %v, want %v", err, errBroken)
	}
	if err := w.Write(Frame{Kind: Stdout, Data: make([]byte, 3*MaxData)}); !errors.Is(err, errBroken) {
		t.Fatalf("second Write = %v, want %v", err, errBroken)
	}
	if err := w.Flush(); !errors.Is(err, errBroken) {
		t.Fatalf("Flush = %v, want %v", err, errBroken)
	}
	if c.n != 1 {
		t.Errorf("%d writes to a broken connection, want 1", c.n)
	}
}

// quietThenData fails its first read with a timeout, as a net.Conn does
// when a read deadline passes with nothing to read.
type quietThenData struct {
	timedOut bool
	r        io.Reader
}

var errTimeout = errors.New("i/o timeout")

func (q *quietThenData) Read(p []byte) (int, error) {
	if !q.timedOut {
		q.timedOut = true
		return 0, errTimeout
	}
	return q.r.Read(p)
}

func TestReaderRetriesBetweenFrames(t *testing.T) {
	want := Frame{Kind: Signal, Code: 2}
	r := NewReader(&quietThenData{r: bytes.NewReader(encode(t, want))})
	if _, err := r.Next(); !errors.Is(err, errTimeout) {
		t.Fatalf("first Next = %v, want %v", err, errTimeout)
	}
	got, err := r.Next()
	if err != nil {
		t.Fatalf("Next after timeout: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frame (-want +got):\n%s", diff)
	}
}

func TestDataIsFresh(t *testing.T) {
	r := NewReader(bytes.NewReader(encode(t, everyKind[1], everyKind[2])))
	a, _ := r.Next()
	keep := string(a.Data)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	if string(a.Data) != keep {
		t.Errorf("first frame's data changed to %q after the next read", a.Data)
	}
}

// BenchmarkWriteRead streams 64 KiB Stdout frames from a Writer to a Reader
// over loopback TCP (the real transport) and over net.Pipe (no kernel).
func BenchmarkWriteRead(b *testing.B) {
	b.Run("tcp", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Skipf("no loopback TCP: %v", err)
		}
		defer ln.Close()
		accepted := make(chan net.Conn, 1)
		go func() {
			c, _ := ln.Accept()
			accepted <- c
		}()
		node, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		srun := <-accepted
		if srun == nil {
			b.Fatal("accept failed")
		}
		benchStream(b, node, srun)
	})
	b.Run("pipe", func(b *testing.B) {
		node, srun := net.Pipe()
		benchStream(b, node, srun)
	})
}

func benchStream(b *testing.B, node, srun net.Conn) {
	defer srun.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), 64<<10/16)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	errc := make(chan error, 1)
	b.ResetTimer()
	go func() {
		defer node.Close()
		w := NewWriter(node)
		for i := range b.N {
			if err := w.Write(Frame{Kind: Stdout, Task: uint32(i % 4), Data: data}); err != nil {
				errc <- err
				return
			}
		}
		errc <- w.Flush()
	}()
	r := NewReader(srun)
	for range b.N {
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSmallConcurrent has 16 tasks write 100-byte lines at once over
// loopback TCP: the case coalescing is for.
func BenchmarkSmallConcurrent(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Skipf("no loopback TCP: %v", err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	node, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	srun := <-accepted
	defer srun.Close()
	line := bytes.Repeat([]byte("x"), 99)
	line = append(line, '\n')
	b.SetBytes(int64(len(line)))
	const tasks = 16
	done := make(chan error, 1)
	go func() {
		r := NewReader(srun)
		for range b.N {
			if _, err := r.Next(); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	b.ResetTimer()
	w := NewWriter(node)
	var wg sync.WaitGroup
	for task := range tasks {
		n := b.N / tasks
		if task < b.N%tasks {
			n++
		}
		wg.Go(func() {
			for range n {
				if err := w.Write(Frame{Kind: Stdout, Task: uint32(task), Data: line}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	node.Close()
}
