// Package stream frames the connection between srun and the node daemons of
// a job step.
//
// srun listens; every node daemon of the step launches its tasks and dials
// back, sends a Hello carrying the step credential, then streams its tasks'
// stdout and stderr as they are produced and reports each task's exit or
// failure to start. srun sends stdin and signals the other way. This plays
// the part of Slurm's io_hdr_t streams and the launch-response and
// task-exit messages between slurmstepd and srun, over one connection.
//
// Every frame is a fixed 20-byte big-endian header followed by its data:
//
//	offset  size  field
//	0       1     version: 0xD1 (0xD0 | protocol version 1)
//	1       1     Kind
//	2       1     flags: bit 0 = Signaled; the other bits are zero
//	3       1     reserved, zero
//	4       4     Node
//	8       4     Task
//	12      4     Code (int32)
//	16      4     length of Data, at most MaxData
//
// The encoding is canonical: a frame has exactly one byte form, and a reader
// refuses anything else at once, so a stray connection or a peer speaking
// another protocol fails on its first frame.
package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Kind says what a frame carries and which way it travels.
type Kind uint8

// Frame kinds. Node → srun unless said otherwise.
const (
	// Hello is the first frame of a node: Data is the signed step
	// credential token (see package stepcred), Node the node's index in
	// the step.
	Hello Kind = iota + 1
	// Stdout is output of Task.
	Stdout
	// Stderr is error output of Task.
	Stderr
	// Exit reports that Task ended: Code is its exit code, or the number
	// of the signal that ended it when Signaled is set, as Slurm reports
	// a wait status.
	Exit
	// Failed reports that Task could not start; Data is the error text
	// srun prints (e.g. "execve(): foo: No such file or directory").
	Failed
	// Stdin is srun → node: input for Task, or for every task of the node
	// when Task is AllTasks.
	Stdin
	// StdinEOF is srun → node: Task's stdin (or every task's, with
	// AllTasks) is closed.
	StdinEOF
	// Signal is srun → node: deliver signal Code to every task of the
	// node.
	Signal
	// KVSData carries pairs an MPI step's tasks published (package pmi's
	// encoding), either way: a node's for the fence in progress, or, from
	// srun, every node's.
	KVSData
	// KVSFence ends a fence's data: from a node, its tasks all entered
	// fence Code; from srun, the exchange of fence Code is complete.
	KVSFence
	// Abort reports that Task aborted the MPI step (PMI abort): Code is
	// its exit code, Data the message srun prints before ending the
	// step.
	Abort
)

var kindNames = [...]string{
	Hello: "Hello", Stdout: "Stdout", Stderr: "Stderr", Exit: "Exit",
	Failed: "Failed", Stdin: "Stdin", StdinEOF: "StdinEOF", Signal: "Signal",
	KVSData: "KVSData", KVSFence: "KVSFence", Abort: "Abort",
}

// String returns the kind's name, or Kind(n) for an unknown kind.
func (k Kind) String() string {
	if k.valid() {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

func (k Kind) valid() bool { return k >= Hello && k <= Abort }

// carriesData reports whether frames of the kind may have Data.
func (k Kind) carriesData() bool {
	switch k {
	case Hello, Stdout, Stderr, Failed, Stdin, KVSData, Abort:
		return true
	}
	return false
}

// splittable reports whether the Writer may cut Data larger than MaxData
// into several frames: true for the byte streams, false for Hello and
// Failed, whose Data only means something whole.
func (k Kind) splittable() bool {
	switch k {
	case Stdout, Stderr, Stdin, KVSData:
		return true
	}
	return false
}

// AllTasks as a Stdin or StdinEOF frame's Task addresses every task of the
// node, as srun --input=all does.
const AllTasks = ^uint32(0)

// MaxData is the most Data one frame carries. The Writer splits larger
// Stdout, Stderr and Stdin data into several frames of the same kind; the
// Reader refuses a longer frame, which bounds what an unauthenticated peer
// can make the reader allocate.
const MaxData = 1 << 20

// Frame is one message of the step I/O connection. Fields a kind does not
// use are zero.
type Frame struct {
	Kind Kind
	Node uint32
	Task uint32
	Code int32
	// Signaled is set on an Exit frame whose Code is a signal number
	// rather than an exit code.
	Signaled bool
	Data     []byte
}

const (
	headerLen   = 20
	versionByte = 0xD1
	magicMask   = 0xF0
	magicBits   = 0xD0
	flagSignal  = 1 << 0
)

// ErrMalformed is wrapped by every error about bytes that are not a valid
// frame: a bad version byte, an unknown kind, unknown flags, Data on a kind
// that carries none, an oversized length.
var ErrMalformed = errors.New("stepio: malformed frame")

// ErrTooLarge is wrapped by the Reader's error for a length over MaxData and
// by the Writer's for a Hello or Failed frame whose Data exceeds MaxData.
var ErrTooLarge = errors.New("stepio: frame data too large")

// check reports why f may not be sent or was not validly received,
// ignoring the length of Data.
func (f *Frame) check() error {
	if !f.Kind.valid() {
		return fmt.Errorf("%w: unknown kind %d", ErrMalformed, uint8(f.Kind))
	}
	if f.Signaled && f.Kind != Exit {
		return fmt.Errorf("%w: Signaled set on a %v frame", ErrMalformed, f.Kind)
	}
	if len(f.Data) > 0 && !f.Kind.carriesData() {
		return fmt.Errorf("%w: %d bytes of data on a %v frame", ErrMalformed, len(f.Data), f.Kind)
	}
	return nil
}

// putHeader encodes f's header, with n as the data length, into b.
func putHeader(b []byte, f *Frame, n int) {
	_ = b[headerLen-1]
	b[0] = versionByte
	b[1] = byte(f.Kind)
	b[2] = 0
	if f.Signaled {
		b[2] = flagSignal
	}
	b[3] = 0
	binary.BigEndian.PutUint32(b[4:], f.Node)
	binary.BigEndian.PutUint32(b[8:], f.Task)
	binary.BigEndian.PutUint32(b[12:], uint32(f.Code))
	binary.BigEndian.PutUint32(b[16:], uint32(n))
}

// parseHeader decodes and validates a header, returning the frame without
// Data and the data length that follows.
func parseHeader(b []byte) (Frame, int, error) {
	_ = b[headerLen-1]
	if b[0]&magicMask != magicBits {
		return Frame{}, 0, fmt.Errorf("%w: first byte 0x%02x: not a step I/O stream", ErrMalformed, b[0])
	}
	if b[0] != versionByte {
		return Frame{}, 0, fmt.Errorf("%w: protocol version %d, want %d", ErrMalformed, b[0]&^magicMask, versionByte&^magicMask)
	}
	if b[2]&^flagSignal != 0 {
		return Frame{}, 0, fmt.Errorf("%w: unknown flags 0x%02x", ErrMalformed, b[2])
	}
	if b[3] != 0 {
		return Frame{}, 0, fmt.Errorf("%w: reserved byte 0x%02x", ErrMalformed, b[3])
	}
	f := Frame{
		Kind:     Kind(b[1]),
		Signaled: b[2]&flagSignal != 0,
		Node:     binary.BigEndian.Uint32(b[4:]),
		Task:     binary.BigEndian.Uint32(b[8:]),
		Code:     int32(binary.BigEndian.Uint32(b[12:])),
	}
	n := binary.BigEndian.Uint32(b[16:])
	if err := f.check(); err != nil {
		return Frame{}, 0, err
	}
	if n > MaxData {
		return Frame{}, 0, fmt.Errorf("%w: %v frame of %d bytes, limit %d: %w", ErrMalformed, f.Kind, n, MaxData, ErrTooLarge)
	}
	if n > 0 && !f.Kind.carriesData() {
		return Frame{}, 0, fmt.Errorf("%w: %d bytes of data on a %v frame", ErrMalformed, n, f.Kind)
	}
	return f, int(n), nil
}
