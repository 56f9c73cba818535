package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
)

// entry is one applied record as the test FSM saw it.
type entry struct {
	Index uint64
	Data  string
}

// listFSM records every applied record in order and checks the contract the
// Log promises: contiguous indexes and no concurrent calls.
type listFSM struct {
	busy atomic.Bool

	mu        sync.Mutex
	entries   []entry
	restores  int
	violation string
	// snapshotErr, when set, makes Snapshot fail.
	snapshotErr error
}

func (f *listFSM) enter() {
	if !f.busy.CompareAndSwap(false, true) {
		f.violate("FSM called concurrently")
	}
}

func (f *listFSM) leave() { f.busy.Store(false) }

func (f *listFSM) violate(msg string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.violation == "" {
		f.violation = msg
	}
}

func (f *listFSM) Apply(index uint64, record []byte) any {
	f.enter()
	defer f.leave()
	f.mu.Lock()
	defer f.mu.Unlock()
	want := uint64(len(f.entries)) + 1
	if index != want && f.violation == "" {
		f.violation = fmt.Sprintf("Apply(%d), want index %d", index, want)
	}
	e := entry{Index: index, Data: string(record)}
	f.entries = append(f.entries, e)
	return e
}

// Snapshot streams one JSON entry per line, as a real FSM would stream
// its records.
func (f *listFSM) Snapshot(w io.Writer) error {
	f.enter()
	defer f.leave()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.snapshotErr != nil {
		return f.snapshotErr
	}
	enc := json.NewEncoder(w)
	for _, e := range f.entries {
		if err := enc.Encode(e); err != nil {
			return fmt.Errorf("encode test snapshot: %w", err)
		}
	}
	return nil
}

func (f *listFSM) Restore(r io.Reader) error {
	f.enter()
	defer f.leave()
	var entries []entry
	dec := json.NewDecoder(r)
	for {
		var e entry
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("decode test snapshot: %w", err)
		}
		entries = append(entries, e)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.entries = entries
	f.restores++
	return nil
}

func (f *listFSM) state() (entries []entry, violation string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]entry(nil), f.entries...), f.violation
}
