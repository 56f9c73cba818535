package replog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/internal/state"
)

// BlobReleaser is what an FSM implements when applying a record can make
// blobs unneeded (a purge forgets jobs, and with them their scripts):
// every replica then deletes them from its own store as it applies the
// record, so no follower keeps the scripts of jobs long gone.
type BlobReleaser interface {
	ReleasedBlobs(result any) []string
}

// fsm adapts a state.FSM to raft's, storing each entry's blobs before the
// record is applied.
type fsm struct {
	// mu is held for writing while an entry is applied or a snapshot
	// restored, and for reading from the moment raft asks for a snapshot
	// until the snapshot is written: raft persists a snapshot on another
	// goroutine than the one applying entries, and the state written must
	// be the state at the snapshot's index, not a later one.
	mu     sync.RWMutex
	target state.FSM
	blobs  *blobStore
	// onFatal is told when this replica could not store what it applied
	// (a full disk): it no longer holds everything the log says.
	onFatal func(error)
}

func (f *fsm) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	record, blobs, err := decodeEntry(l.Data)
	if err != nil {
		// Only this package writes entries; a damaged one is damage.
		err = fmt.Errorf("replog: entry %d: %w", l.Index, err)
		f.onFatal(err)
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(blobs) > 0 {
		if err := f.blobs.put(blobs); err != nil {
			f.onFatal(fmt.Errorf("replog: entry %d: %w", l.Index, err))
		}
	}
	res := f.target.Apply(l.Index, record)
	if br, ok := f.target.(BlobReleaser); ok {
		if keys := br.ReleasedBlobs(res); len(keys) > 0 {
			if err := f.blobs.delete(keys); err != nil {
				f.onFatal(fmt.Errorf("replog: entry %d: %w", l.Index, err))
			}
		}
	}
	return res
}

// Snapshot holds Apply off until the snapshot it returns is persisted
// or released.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	return &fsmSnapshot{f: f}, nil
}

// Restore replaces the blobs and the state with a snapshot's.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	r := bufio.NewReaderSize(rc, 64<<10)
	if err := readSnapshotHeader(r); err != nil {
		return err
	}
	if err := f.blobs.reset(); err != nil {
		return fmt.Errorf("replog: restore: %w", err)
	}
	var batch []state.Blob
	size := 0
	for {
		key, err := readChunk(r)
		if err != nil {
			return fmt.Errorf("replog: restore: blob key: %w", err)
		}
		if len(key) == 0 {
			break
		}
		val, err := readChunk(r)
		if err != nil {
			return fmt.Errorf("replog: restore: blob %q: %w", key, err)
		}
		batch = append(batch, state.Blob{Key: string(key), Data: val})
		// Blobs go in by the few megabytes, not one transaction each
		// and not all in memory.
		if size += len(key) + len(val); size > 4<<20 {
			if err := f.blobs.put(batch); err != nil {
				return fmt.Errorf("replog: restore: %w", err)
			}
			batch, size = batch[:0], 0
		}
	}
	if err := f.blobs.put(batch); err != nil {
		return fmt.Errorf("replog: restore: %w", err)
	}
	if err := f.target.Restore(r); err != nil {
		return fmt.Errorf("replog: restore state: %w", err)
	}
	return nil
}

// rebind hands the replicated state to next: the current target's
// state is streamed into next's Restore with every Apply held off, so
// that a reconfigured controller takes over the state without a restart
// of raft (which would cost an election).
func (f *fsm) rebind(next state.FSM) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(f.target.Snapshot(pw)) }()
	err := next.Restore(pr)
	pr.CloseWithError(errors.New("restore stopped reading"))
	if err != nil {
		return fmt.Errorf("replog: hand the state over: %w", err)
	}
	f.target = next
	return nil
}

// snapshotMagic starts every snapshot this package writes.
const snapshotMagic = "drover-raft-snapshot 1\n"

type fsmSnapshot struct {
	f    *fsm
	once sync.Once
}

// Persist writes the blobs, each length-prefixed, an empty key, then the
// state as the FSM streams it.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	defer s.Release()
	w := bufio.NewWriterSize(sink, 64<<10)
	err := s.write(w)
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		sink.Cancel()
		return fmt.Errorf("replog: write snapshot: %w", err)
	}
	return sink.Close()
}

func (s *fsmSnapshot) write(w *bufio.Writer) error {
	if _, err := w.WriteString(snapshotMagic); err != nil {
		return err
	}
	var lenBuf [binary.MaxVarintLen64]byte
	putChunk := func(b []byte) error {
		n := binary.PutUvarint(lenBuf[:], uint64(len(b)))
		if _, err := w.Write(lenBuf[:n]); err != nil {
			return err
		}
		_, err := w.Write(b)
		return err
	}
	err := s.f.blobs.each(func(k, v []byte) error {
		if err := putChunk(k); err != nil {
			return err
		}
		return putChunk(v)
	})
	if err != nil {
		return err
	}
	if err := putChunk(nil); err != nil {
		return err
	}
	return s.f.target.Snapshot(w)
}

func (s *fsmSnapshot) Release() { s.once.Do(s.f.mu.RUnlock) }

func readSnapshotHeader(r *bufio.Reader) error {
	head := make([]byte, len(snapshotMagic))
	if _, err := io.ReadFull(r, head); err != nil || string(head) != snapshotMagic {
		return fmt.Errorf("replog: restore: not a Drover snapshot (%q, %v)", head, err)
	}
	return nil
}

// maxChunk bounds a blob read back from a snapshot: the largest value
// a proposal may carry.
const maxChunk = state.MaxRecordSize

func readChunk(r *bufio.Reader) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, err
	}
	if n > maxChunk {
		return nil, fmt.Errorf("length %d over the limit", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}
