package state

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// FSM is the in-memory state machine the log drives, shaped like raft.FSM.
//
// The Log calls Apply, Snapshot and Restore from one goroutine at a time (Open
// during replay, then the writer), so an FSM only needs locking against its
// own readers. Under hashicorp/raft, an FSMSnapshot's Persist would call
// Snapshot with the sink (holding Apply off meanwhile, as the Log does), and
// Restore would get the snapshot's reader.
type FSM interface {
	// Apply applies one committed record, in log order, and returns a result for the proposer.
	Apply(index uint64, record []byte) any
	// Snapshot writes the whole state, as of the last applied index, to w.
	// The Log calls it between batches, so no Apply runs meanwhile; it
	// should stream (w is buffered, and checksums and counts what passes)
	// rather than build the state in memory first. An error from w must
	// be returned: the snapshot is then abandoned.
	Snapshot(w io.Writer) error
	// Restore replaces the whole state with what a Snapshot wrote, read
	// from r. It is called only with bytes a Snapshot produced (the Log
	// checks the file's size and checksum first), or with the value a
	// version 1 store kept, which the FSM's Snapshot returned in one piece
	// before snapshots were streamed.
	Restore(r io.Reader) error
}

// Options tunes a Log. The zero value is the production setting.
type Options struct {
	// SnapshotEvery takes a snapshot and truncates the log after this many applied records (0 = default 10000).
	SnapshotEvery int
	// MaxBatch caps how many records one transaction commits (0 = default 1024).
	MaxBatch int
	// NoSync disables fsync (benchmarks comparing durability cost only).
	NoSync bool
	// OnCommit, when set, is told each transaction's size and how long
	// writing and syncing it took, for the commit latency metric; it runs
	// on the writer and must not block.
	OnCommit func(records int, took time.Duration)
}

// Defaults for the zero Options.
const (
	// DefaultSnapshotEvery bounds replay time at start-up to about ten
	// thousand records while keeping snapshot writes rare.
	DefaultSnapshotEvery = 10000
	// DefaultMaxBatch bounds the size of one transaction (and the latency of
	// the first record in it) under a burst of proposals.
	DefaultMaxBatch = 1024
)

// MaxRecordSize is the largest record Apply accepts: bbolt's value limit.
// Records are checked before they reach the writer, because one oversized
// record would otherwise fail the whole group's transaction.
const MaxRecordSize = bolt.MaxValueSize

// lockTimeout is how long Open waits for another process to release the
// file's lock before reporting it as in use, rather than hanging a second
// controller forever. A variable so tests need not wait two seconds.
var lockTimeout = 2 * time.Second

// ErrClosed is returned by Apply and Snapshot once Close has been called.
var ErrClosed = errors.New("state log is closed")

// ErrFailed wraps the write error that stopped the log. After a failed commit
// (disk full, I/O error, failed fsync) the file may or may not hold that
// batch, so the in-memory FSM can no longer be trusted to match it; every
// later Apply fails until the process reopens the file and replays what is
// really there, as etcd does after a failed WAL sync.
var ErrFailed = errors.New("state log failed")

// Log is a durable, ordered command log with group commit.
//
// One writer goroutine owns every write to the bbolt file. Apply hands a
// record to it over an unbuffered channel; the writer takes every record that
// is waiting (up to MaxBatch), commits them in one transaction with one fsync,
// then applies them to the FSM in index order and answers each proposer.
type Log struct {
	db      *bolt.DB
	fsm     FSM
	path    string
	snapDir string
	opts    Options

	reqs     chan *request
	snapReqs chan chan error
	closing  chan struct{}
	done     chan struct{}

	closeOnce sync.Once
	closeErr  error

	// lastIndex is the index of the last applied record; written by the
	// writer (or Open), read by anyone.
	lastIndex atomic.Uint64
	// failed holds the sticky commit error, if any.
	failed atomic.Pointer[error]

	// Writer-owned: no other goroutine touches these after Open returns.
	snapIndex     uint64
	snapFile      string
	sinceSnapshot int
	keyBuf        []byte

	stats statsCounters
}

type request struct {
	record []byte
	blobs  []Blob
	done   chan result
}

// Blob is data kept beside the log under a key: written durably in the
// same transaction as the record proposed with it, read back on demand,
// and deleted when no longer needed. Records stay small (and so do the FSM
// and its snapshots) while bulky data stays on disk, as slurmctld keeps
// job scripts and environments in files under StateSaveLocation.
type Blob struct {
	Key  string
	Data []byte
}

type result struct {
	value any
	err   error
}

// Open opens (creating if needed) the store at path, restores the latest snapshot into fsm and replays every later record through fsm.Apply, then starts the writer.
//
// fsm must be empty: Restore is only called when the file holds a snapshot.
// Open refuses a file whose format version it does not know (ErrUnknownFormat),
// a file another process holds open, and a snapshot file that is missing or
// fails its size or checksum check (the error names the file).
func Open(path string, fsm FSM, opts Options) (*Log, error) {
	if fsm == nil {
		return nil, fmt.Errorf("state: open %s: nil FSM", path)
	}
	if opts.SnapshotEvery < 0 || opts.MaxBatch < 0 {
		return nil, fmt.Errorf("state: open %s: SnapshotEvery (%d) and MaxBatch (%d) must not be negative",
			path, opts.SnapshotEvery, opts.MaxBatch)
	}
	if opts.SnapshotEvery == 0 {
		opts.SnapshotEvery = DefaultSnapshotEvery
	}
	if opts.MaxBatch == 0 {
		opts.MaxBatch = DefaultMaxBatch
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{
		Timeout: lockTimeout,
		NoSync:  opts.NoSync,
		// The freelist is rebuilt by scanning at open instead of being
		// rewritten by every commit: cheaper group commits, as etcd does.
		NoFreelistSync: true,
		FreelistType:   bolt.FreelistMapType,
	})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("state: open %s: file is locked by another process (is another controller running?): %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	l := &Log{
		db:       db,
		fsm:      fsm,
		path:     path,
		snapDir:  SnapshotDir(path),
		opts:     opts,
		reqs:     make(chan *request),
		snapReqs: make(chan chan error),
		closing:  make(chan struct{}),
		done:     make(chan struct{}),
	}
	var version uint64
	if err := db.Update(func(tx *bolt.Tx) (err error) {
		version, err = initFormat(tx)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	if err := ensureSnapshotDir(l.snapDir, opts.NoSync); err != nil {
		db.Close()
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	if err := l.recover(version); err != nil {
		db.Close()
		return nil, fmt.Errorf("state: open %s: %w", path, err)
	}
	// Whatever else is in the folder is a superseded snapshot or a stray
	// from a crash before its commit; recovery did not read it.
	_ = removeStaleSnapshots(l.snapDir, l.snapFile)
	go l.run()
	return l, nil
}

// recover restores the snapshot, if any, and replays the log after it.
func (l *Log) recover(version uint64) error {
	return l.db.View(func(tx *bolt.Tx) error {
		snap, err := readSnapshotMeta(tx.Bucket(bucketSnapshot), version)
		if err != nil {
			return err
		}
		last := uint64(0)
		if snap.present {
			if err := l.restore(snap); err != nil {
				return err
			}
			last = snap.index
			l.snapIndex = snap.index
			l.snapFile = snap.file.Name
		}
		// Entries at or below the snapshot index are already in the snapshot;
		// skipping them by key is what makes a leftover entry harmless.
		c := tx.Bucket(bucketLog).Cursor()
		k, v := c.Seek(encodeIndex(last + 1))
		if last == math.MaxUint64 {
			k = nil // last+1 wrapped: nothing can follow
		}
		for ; k != nil; k, v = c.Next() {
			index, err := decodeIndex(k)
			if err != nil {
				return fmt.Errorf("log key after index %d: %w", last, err)
			}
			if index != last+1 {
				return fmt.Errorf("log has a gap: index %d follows %d", index, last)
			}
			l.fsm.Apply(index, clone(v))
			last = index
		}
		l.lastIndex.Store(last)
		l.sinceSnapshot = int(last - l.snapIndex)
		l.stats.replayed.Store(last - l.snapIndex)
		l.stats.snapshotIndex.Store(l.snapIndex)
		return nil
	})
}

// restore hands the FSM the snapshot the bbolt file records.
func (l *Log) restore(snap storedSnapshot) error {
	if snap.inline != nil {
		// A reader copies out of bbolt's memory, which is only valid
		// inside the transaction, so the FSM cannot keep a reference to it.
		if err := l.fsm.Restore(bytes.NewReader(snap.inline)); err != nil {
			return fmt.Errorf("restore snapshot at index %d: %w", snap.index, err)
		}
		return nil
	}
	f, err := openSnapshotFile(l.snapDir, snap.file)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := l.fsm.Restore(bufio.NewReaderSize(f, snapshotBufSize)); err != nil {
		return fmt.Errorf("restore snapshot at index %d from %s: %w", snap.index, f.Name(), err)
	}
	return nil
}

func clone(b []byte) []byte {
	return append([]byte(nil), b...)
}

// Apply durably appends record and applies it to the FSM, returning FSM.Apply's result.
// Concurrent callers are grouped into one bbolt transaction and one fsync (group commit);
// records are applied in log order, each exactly once, only after its transaction is durable.
// It returns an error (and the record is not applied) if the write fails or the log is closed; ctx cancellation
// before the record is handed to the writer abandons it.
//
// Once the writer has the record its fate is decided by the commit, so Apply
// then waits for the outcome instead of returning an ambiguous ctx error that
// would tempt a caller to propose the record twice. The log keeps record
// without copying it: the caller must not modify it after the call.
func (l *Log) Apply(ctx context.Context, record []byte) (any, error) {
	return l.ApplyWithBlobs(ctx, record, nil)
}

// ApplyWithBlobs is Apply that also stores blobs, in the record's own
// transaction: once the record is applied, its blobs are durable.
func (l *Log) ApplyWithBlobs(ctx context.Context, record []byte, blobs []Blob) (any, error) {
	for _, b := range blobs {
		if b.Key == "" || len(b.Data) > MaxRecordSize {
			return nil, fmt.Errorf("state: apply: blob %q of %d bytes: empty key or over the %d byte limit", b.Key, len(b.Data), MaxRecordSize)
		}
	}
	if len(record) > MaxRecordSize {
		return nil, fmt.Errorf("state: apply: record of %d bytes exceeds the %d byte limit", len(record), MaxRecordSize)
	}
	if err := l.failure(); err != nil {
		return nil, err
	}
	// Checked first so that a cancelled ctx or a closed log wins even when
	// the writer happens to be ready to receive.
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("state: apply: %w", err)
	}
	select {
	case <-l.closing:
		return nil, fmt.Errorf("state: apply: %w", ErrClosed)
	default:
	}
	req := &request{record: record, blobs: blobs, done: make(chan result, 1)}
	select {
	case l.reqs <- req:
	case <-ctx.Done():
		return nil, fmt.Errorf("state: apply: %w", ctx.Err())
	case <-l.closing:
		return nil, fmt.Errorf("state: apply: %w", ErrClosed)
	}
	res := <-req.done
	return res.value, res.err
}

// Snapshot takes a snapshot now (between batches, so it matches an index exactly) and truncates the log.
func (l *Log) Snapshot() error {
	if err := l.failure(); err != nil {
		return err
	}
	reply := make(chan error, 1)
	select {
	case l.snapReqs <- reply:
	case <-l.closing:
		return fmt.Errorf("state: snapshot: %w", ErrClosed)
	}
	return <-reply
}

// LastIndex returns the index of the last applied record.
func (l *Log) LastIndex() uint64 {
	return l.lastIndex.Load()
}

// Path returns the file the log was opened from, for diagnostics.
func (l *Log) Path() string {
	return l.path
}

// Close stops the writer after in-flight records are committed and closes the file.
//
// Records already handed to the writer are committed and answered; callers
// still waiting to hand theirs over get ErrClosed. Close is idempotent.
func (l *Log) Close() error {
	l.closeOnce.Do(func() {
		close(l.closing)
		<-l.done
		if err := l.db.Close(); err != nil {
			l.closeErr = fmt.Errorf("state: close %s: %w", l.path, err)
		}
	})
	return l.closeErr
}

// failure returns the sticky error that stopped the log, or nil.
func (l *Log) failure() error {
	if p := l.failed.Load(); p != nil {
		return *p
	}
	return nil
}

// run is the writer goroutine: the only code that writes to the file or
// calls the FSM after Open.
func (l *Log) run() {
	defer close(l.done)
	batch := make([]*request, 0, l.opts.MaxBatch)
	for {
		select {
		case req := <-l.reqs:
			batch = append(batch[:0], req)
			// Proposers answered by the previous batch are runnable but may
			// not have proposed again yet; yielding once lets them join this
			// group instead of the next, so a steady set of N proposers
			// commits N records per fsync rather than alternating halves.
			runtime.Gosched()
			// Everyone blocked in Apply while the previous fsync ran is
			// waiting on the channel now: take them all into this group.
		drain:
			for len(batch) < l.opts.MaxBatch {
				select {
				case req := <-l.reqs:
					batch = append(batch, req)
				default:
					break drain
				}
			}
			l.commit(batch)
			clear(batch) // drop references to records already answered
			if l.sinceSnapshot >= l.opts.SnapshotEvery && l.failure() == nil {
				if err := l.snapshot(); err != nil {
					// Not fatal: the log still holds every record. Try again
					// after another SnapshotEvery records rather than after
					// every batch.
					l.sinceSnapshot = 0
				}
			}
		case reply := <-l.snapReqs:
			reply <- l.snapshot()
		case <-l.closing:
			return
		}
	}
}

// commit writes batch in one transaction and, once it is durable, applies
// each record and answers its proposer.
func (l *Log) commit(batch []*request) {
	if err := l.failure(); err != nil {
		for _, req := range batch {
			req.done <- result{err: err}
		}
		return
	}
	first := l.lastIndex.Load() + 1
	// bbolt keeps key slices until the commit, so every key needs its own
	// bytes; one buffer per batch avoids an allocation per record.
	need := 8 * len(batch)
	if cap(l.keyBuf) < need {
		l.keyBuf = make([]byte, need)
	}
	keys := l.keyBuf[:need]
	begin := time.Now()
	err := l.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLog)
		// Keys only ever grow, so full pages are never split again.
		b.FillPercent = 1.0
		blobs := tx.Bucket(bucketBlobs)
		for i, req := range batch {
			key := keys[8*i : 8*i+8 : 8*i+8]
			binary.BigEndian.PutUint64(key, first+uint64(i))
			if err := b.Put(key, req.record); err != nil {
				return fmt.Errorf("append record %d: %w", first+uint64(i), err)
			}
			for _, blob := range req.blobs {
				if err := blobs.Put([]byte(blob.Key), blob.Data); err != nil {
					return fmt.Errorf("store blob %q of record %d: %w", blob.Key, first+uint64(i), err)
				}
			}
		}
		return nil
	})
	if l.opts.OnCommit != nil {
		l.opts.OnCommit(len(batch), time.Since(begin))
	}
	if err != nil {
		var failed error = fmt.Errorf("state: %w: commit of records %d-%d to %s: %w",
			ErrFailed, first, first+uint64(len(batch))-1, l.path, err)
		l.failed.CompareAndSwap(nil, &failed)
		for _, req := range batch {
			req.done <- result{err: failed}
		}
		return
	}
	for i, req := range batch {
		index := first + uint64(i)
		value := l.fsm.Apply(index, req.record)
		l.lastIndex.Store(index)
		req.done <- result{value: value}
	}
	l.sinceSnapshot += len(batch)
	l.stats.recordBatch(len(batch))
}

// snapshot writes the FSM's state as of the last applied index to a file,
// then, in one transaction, records the file and deletes the log entries
// it covers. A crash before the commit leaves the previous snapshot and the
// full log (the new file is a stray that the next Open deletes); a crash
// after it leaves the new snapshot and the truncated log, and maybe the
// previous file, deleted the same way. Both replay to the same state.
func (l *Log) snapshot() error {
	if err := l.failure(); err != nil {
		return err
	}
	index := l.lastIndex.Load()
	if index == l.snapIndex {
		// Nothing applied since the last snapshot (or ever).
		return nil
	}
	file, err := writeSnapshotFile(l.snapDir, index, l.fsm, l.opts.NoSync)
	if err != nil {
		err = fmt.Errorf("state: snapshot at index %d: %w", index, err)
		l.stats.setSnapshotError(err)
		return err
	}
	snapshotStage("renamed")
	err = l.db.Update(func(tx *bolt.Tx) error {
		if err := writeSnapshotMeta(tx, file); err != nil {
			return err
		}
		return truncate(tx, index)
	})
	if err != nil {
		// The file stays: a failed commit may still have reached the disk,
		// and then it is the snapshot the bbolt file names. If not, it is
		// a stray that the next snapshot or Open deletes.
		err = fmt.Errorf("state: snapshot at index %d to %s: %w", index, l.path, err)
		l.stats.setSnapshotError(err)
		return err
	}
	l.snapIndex = index
	l.snapFile = file.Name
	l.sinceSnapshot = 0
	l.stats.recordSnapshot(index)
	snapshotStage("committed")
	// Best effort: a file left behind is deleted by the next snapshot or
	// Open, and never read.
	_ = removeStaleSnapshots(l.snapDir, file.Name)
	return nil
}

// truncate deletes the log entries at or below index.
func truncate(tx *bolt.Tx, index uint64) error {
	b := tx.Bucket(bucketLog)
	lastKey, _ := b.Cursor().Last()
	if lastKey == nil {
		return nil
	}
	last, err := decodeIndex(lastKey)
	if err != nil {
		return fmt.Errorf("truncate log: %w", err)
	}
	if last <= index {
		// The usual case (snapshots are taken between batches, so the
		// snapshot covers the whole log): dropping the bucket frees its
		// pages without visiting every key.
		if err := tx.DeleteBucket(bucketLog); err != nil {
			return fmt.Errorf("truncate log: %w", err)
		}
		if _, err := tx.CreateBucket(bucketLog); err != nil {
			return fmt.Errorf("truncate log: %w", err)
		}
		return nil
	}
	// Collect first: deleting under a moving cursor skips keys in bbolt.
	var doomed [][]byte
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		i, err := decodeIndex(k)
		if err != nil {
			return fmt.Errorf("truncate log: %w", err)
		}
		if i > index {
			break
		}
		doomed = append(doomed, clone(k))
	}
	for _, k := range doomed {
		if err := b.Delete(k); err != nil {
			return fmt.Errorf("truncate log: %w", err)
		}
	}
	return nil
}

// Blob returns a copy of the blob stored under key, or ErrNoBlob.
func (l *Log) Blob(key string) ([]byte, error) {
	var out []byte
	err := l.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketBlobs).Get([]byte(key))
		if v == nil {
			return ErrNoBlob
		}
		out = clone(v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("state: blob %q: %w", key, err)
	}
	return out, nil
}

// ErrNoBlob is returned for a key no blob is stored under.
var ErrNoBlob = errors.New("no such blob")

// DeleteBlobs removes blobs (missing keys are ignored). Deletion need not
// be ordered with the log: a blob is deleted only once no record can need
// it, and a crash before the deletion leaves an orphan that BlobKeys lets
// the owner find and delete.
func (l *Log) DeleteBlobs(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	err := l.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketBlobs)
		for _, k := range keys {
			if err := b.Delete([]byte(k)); err != nil {
				return fmt.Errorf("delete blob %q: %w", k, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("state: %w", err)
	}
	return nil
}

// BlobKeys lists the keys of every stored blob.
func (l *Log) BlobKeys() ([]string, error) {
	var out []string
	err := l.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketBlobs).ForEach(func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("state: list blobs: %w", err)
	}
	return out, nil
}
