package srun

import (
	"bufio"
	"bytes"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	stepio "github.com/droverhq/drover/internal/step/stream"
)

// hub is srun's end of the step's I/O: it accepts one connection from
// each node daemon, writes the tasks' output as it arrives, forwards stdin
// and signals, and collects the tasks' exits.
type hub struct {
	ln net.Listener
	// creds are the step credentials each node proves itself with (the
	// components of a heterogeneous step each have their own).
	creds []string
	nodes []string
	tasks [][]int // per node, the global task ids
	label bool
	// unbuffered is srun -u: output goes out as it comes, not by lines.
	unbuffered bool
	width      int // label width: digits of the largest task id
	stdout     io.Writer
	stderr     io.Writer
	// stdinTask gets srun's stdin (-1: none, -2: all).
	stdinTask int
	// outTask and errTask are the tasks whose stdout and stderr are
	// shown (-1: all, -2: none), as srun -o/-e with a task id or none.
	outTask, errTask int

	mu      sync.Mutex
	conns   []*nodeConn // by node index, nil until the node called
	status  map[int]taskStatus
	ended   int
	total   int
	outMu   sync.Mutex
	partial map[partKey][]byte // with --label: each task's unfinished line
	doneCh  chan struct{}

	// The PMI fence exchange of an MPI step: each node's pairs until
	// every node has entered the fence, then all of them to every node.
	kvsParts  [][]byte
	kvsFenced []bool
	kvsIn     int
	// onAbort is told of a task's PMI abort.
	onAbort func(task uint32, code int32, msg string)
}

type partKey struct {
	task   uint32
	stderr bool
}

type nodeConn struct {
	conn net.Conn
	w    *stepio.Writer
}

// taskStatus is how a task ended: Code an exit code, or a signal when
// Signaled.
type taskStatus struct {
	Code     int32
	Signaled bool
}

func newHub(ln net.Listener, creds []string, nodes []string, tasks [][]int, label bool, stdout, stderr io.Writer, stdinTask int) *hub {
	h := &hub{ln: ln, creds: creds, nodes: nodes, tasks: tasks, label: label, stdout: stdout, stderr: stderr,
		stdinTask: stdinTask, outTask: -1, errTask: -1, conns: make([]*nodeConn, len(nodes)), status: map[int]taskStatus{},
		partial: map[partKey][]byte{}, doneCh: make(chan struct{}),
		kvsParts: make([][]byte, len(nodes)), kvsFenced: make([]bool, len(nodes))}
	for _, t := range tasks {
		h.total += len(t)
	}
	h.width = len(strconv.Itoa(max(h.total-1, 0)))
	return h
}

// serve accepts the nodes' connections until every task has ended.
func (h *hub) serve() {
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		go h.handle(c)
	}
}

func (h *hub) handle(c net.Conn) {
	r := stepio.NewReader(bufio.NewReaderSize(c, 64<<10))
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	hello, err := r.Next()
	if err != nil || hello.Kind != stepio.Hello || int(hello.Node) >= len(h.nodes) || subtle.ConstantTimeCompare(hello.Data, []byte(h.creds[hello.Node])) != 1 {
		// Not a node of this step: the credential proves it (compared
		// in constant time, so that timing tells nothing of it).
		c.Close()
		return
	}
	c.SetReadDeadline(time.Time{})
	node := int(hello.Node)
	nc := &nodeConn{conn: c, w: stepio.NewWriter(c)}
	h.mu.Lock()
	if h.conns[node] != nil {
		h.mu.Unlock()
		c.Close()
		return
	}
	h.conns[node] = nc
	h.mu.Unlock()
	for {
		f, err := r.Next()
		if err != nil {
			h.lost(node, err)
			return
		}
		switch f.Kind {
		case stepio.Stdout:
			h.output(f.Task, f.Data, false)
		case stepio.Stderr:
			h.output(f.Task, f.Data, true)
		case stepio.Failed:
			// slurmstepd's own complaint reaches the task's stderr; the
			// task's Exit frame follows with its status.
			h.output(f.Task, []byte("slurmstepd: error: "+string(f.Data)+"\n"), true)
		case stepio.Exit:
			h.flushPartial([]int{int(f.Task)})
			h.exit(int(f.Task), taskStatus{Code: f.Code, Signaled: f.Signaled})
		case stepio.KVSData:
			h.mu.Lock()
			h.kvsParts[node] = append(h.kvsParts[node], f.Data...)
			h.mu.Unlock()
		case stepio.KVSFence:
			h.kvsFence(node, f.Code)
		case stepio.Abort:
			if h.onAbort != nil {
				h.onAbort(f.Task, f.Code, string(f.Data))
			}
		}
	}
}

// kvsFence records that a node's tasks entered fence epoch; once every
// node has, each gets every node's pairs, as Slurm's PMI tree gathers
// them at srun and sends them back down.
func (h *hub) kvsFence(node int, epoch int32) {
	h.mu.Lock()
	if h.kvsFenced[node] {
		h.mu.Unlock()
		return
	}
	h.kvsFenced[node] = true
	h.kvsIn++
	if h.kvsIn < len(h.nodes) {
		h.mu.Unlock()
		return
	}
	var all []byte
	for i, part := range h.kvsParts {
		all = append(all, part...)
		h.kvsParts[i], h.kvsFenced[i] = nil, false
	}
	h.kvsIn = 0
	h.mu.Unlock()
	if len(all) > 0 {
		h.broadcast(stepio.Frame{Kind: stepio.KVSData, Data: all})
	}
	h.broadcast(stepio.Frame{Kind: stepio.KVSFence, Code: epoch})
}

// lost marks every task of a node whose connection ended as gone; a node
// that reported all its tasks just finished.
func (h *hub) lost(node int, err error) {
	for _, t := range h.tasks[node] {
		h.mu.Lock()
		_, known := h.status[t]
		h.mu.Unlock()
		if !known {
			if !errors.Is(err, io.EOF) {
				fmt.Fprintf(h.stderr, "srun: error: %s: task %d: connection lost: %v\n", h.nodes[node], t, err)
			}
			h.exit(t, taskStatus{Code: int32(syscall.SIGKILL), Signaled: true})
		}
	}
	h.flushPartial(h.tasks[node])
}

func (h *hub) exit(task int, st taskStatus) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, seen := h.status[task]; seen {
		return
	}
	h.status[task] = st
	h.ended++
	if h.ended == h.total {
		close(h.doneCh)
	}
}

// output writes a chunk of a task's output: as it came, or with
// --label line by line behind "N: ", keeping an unfinished line until its
// end arrives (or the task ends).
func (h *hub) output(task uint32, data []byte, stderr bool) {
	w, shown := h.stdout, h.outTask
	if stderr {
		w, shown = h.stderr, h.errTask
	}
	if shown == -2 || shown >= 0 && uint32(shown) != task {
		return
	}
	h.outMu.Lock()
	defer h.outMu.Unlock()
	if !h.label && h.unbuffered {
		w.Write(data)
		return
	}
	// Whole lines, so that tasks' lines do not mix, as slurmstepd
	// forwards output unless srun -u.
	key := partKey{task, stderr}
	buf := append(h.partial[key], data...)
	var out bytes.Buffer
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		if h.label {
			h.writeLabel(&out, task)
		}
		out.Write(buf[:i+1])
		buf = buf[i+1:]
	}
	if len(buf) > 0 {
		h.partial[key] = append([]byte(nil), buf...)
	} else {
		delete(h.partial, key)
	}
	w.Write(out.Bytes())
}

func (h *hub) writeLabel(b *bytes.Buffer, task uint32) {
	s := strconv.Itoa(int(task))
	for range h.width - len(s) {
		b.WriteByte(' ')
	}
	b.WriteString(s)
	b.WriteString(": ")
}

// flushPartial writes what tasks left without a final newline.
func (h *hub) flushPartial(tasks []int) {
	h.outMu.Lock()
	defer h.outMu.Unlock()
	for _, t := range tasks {
		for _, stderr := range []bool{false, true} {
			key := partKey{uint32(t), stderr}
			if rest := h.partial[key]; len(rest) > 0 {
				var b bytes.Buffer
				if h.label {
					h.writeLabel(&b, uint32(t))
				}
				b.Write(rest)
				if h.label {
					b.WriteByte('\n')
				}
				if stderr {
					h.stderr.Write(b.Bytes())
				} else {
					h.stdout.Write(b.Bytes())
				}
				delete(h.partial, key)
			}
		}
	}
}

// signal forwards a signal to every task.
func (h *hub) signal(sig syscall.Signal) {
	h.broadcast(stepio.Frame{Kind: stepio.Signal, Code: int32(sig)})
}

func (h *hub) broadcast(f stepio.Frame) {
	h.mu.Lock()
	conns := append([]*nodeConn(nil), h.conns...)
	h.mu.Unlock()
	for _, c := range conns {
		if c != nil {
			c.w.Write(f)
			c.w.Flush()
		}
	}
}

// forwardStdin copies srun's stdin to the task that gets it (or all),
// then closes the tasks' stdin.
func (h *hub) forwardStdin(in io.Reader) {
	if h.stdinTask == -1 || in == nil {
		return
	}
	target := uint32(stepio.AllTasks)
	node := -1
	if h.stdinTask >= 0 {
		target = uint32(h.stdinTask)
		for i, ts := range h.tasks {
			for _, t := range ts {
				if t == h.stdinTask {
					node = i
				}
			}
		}
		if node < 0 {
			return
		}
	}
	send := func(f stepio.Frame) bool {
		// Wait for the node(s) to call back.
		for {
			h.mu.Lock()
			ready := true
			var conns []*nodeConn
			for i, c := range h.conns {
				if node >= 0 && i != node {
					continue
				}
				if c == nil {
					ready = false
				}
				conns = append(conns, c)
			}
			h.mu.Unlock()
			if ready {
				for _, c := range conns {
					c.w.Write(f)
					c.w.Flush()
				}
				return true
			}
			select {
			case <-h.doneCh:
				return false
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			if !send(stepio.Frame{Kind: stepio.Stdin, Task: target, Data: append([]byte(nil), buf[:n]...)}) {
				return
			}
		}
		if err != nil {
			send(stepio.Frame{Kind: stepio.StdinEOF, Task: target})
			return
		}
	}
}

// running lists the tasks not yet ended, for the first Ctrl-C's report.
func (h *hub) running() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	for _, ts := range h.tasks {
		for _, t := range ts {
			if _, ok := h.status[t]; !ok {
				out = append(out, t)
			}
		}
	}
	return out
}

func (h *hub) close() {
	h.ln.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		if c != nil {
			c.conn.Close()
		}
	}
}
