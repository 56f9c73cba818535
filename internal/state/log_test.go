package state

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

func openTest(t *testing.T, path string, fsm FSM, opts Options) *Log {
	t.Helper()
	l, err := Open(path, fsm, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func applyAll(t *testing.T, l *Log, records ...string) {
	t.Helper()
	for _, r := range records {
		if _, err := l.Apply(context.Background(), []byte(r)); err != nil {
			t.Fatalf("Apply(%q): %v", r, err)
		}
	}
}

func numbered(prefix string, from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%s-%d", prefix, i))
	}
	return out
}

func entriesOf(records []string) []entry {
	var out []entry
	for i, r := range records {
		out = append(out, entry{Index: uint64(i + 1), Data: r})
	}
	return out
}

// logKeys returns the indexes stored in the log bucket of a closed file.
func logKeys(t *testing.T, path string) []uint64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer db.Close()
	var keys []uint64
	if err := db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketLog).ForEach(func(k, _ []byte) error {
			i, err := decodeIndex(k)
			keys = append(keys, i)
			return err
		})
	}); err != nil {
		t.Fatalf("read log keys: %v", err)
	}
	return keys
}

func checkFSM(t *testing.T, fsm *listFSM, want []entry) {
	t.Helper()
	got, violation := fsm.state()
	if violation != "" {
		t.Errorf("FSM contract violated: %s", violation)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FSM entries mismatch (-want +got):\n%s", diff)
	}
}

func TestApplyConcurrentOrderAndResults(t *testing.T) {
	const proposers, each = 16, 60
	path := filepath.Join(t.TempDir(), "state.db")
	fsm := &listFSM{}
	// A small SnapshotEvery makes snapshots interleave with the batches.
	l := openTest(t, path, fsm, Options{SnapshotEvery: 100})

	var wg sync.WaitGroup
	errs := make(chan error, proposers*each)
	indexes := make(chan uint64, proposers*each)
	for p := range proposers {
		wg.Go(func() {
			for i := range each {
				record := fmt.Sprintf("p%d-%d", p, i)
				got, err := l.Apply(context.Background(), []byte(record))
				if err != nil {
					errs <- fmt.Errorf("Apply(%q): %w", record, err)
					return
				}
				e, ok := got.(entry)
				if !ok || e.Data != record {
					errs <- fmt.Errorf("Apply(%q) returned %#v, the result of another record", record, got)
					return
				}
				indexes <- e.Index
			}
		})
	}
	wg.Wait()
	close(errs)
	close(indexes)
	for err := range errs {
		t.Error(err)
	}

	const total = proposers * each
	seen := make(map[uint64]bool)
	for i := range indexes {
		if seen[i] {
			t.Errorf("index %d returned to two callers", i)
		}
		seen[i] = true
	}
	if len(seen) != total {
		t.Errorf("got %d distinct indexes, want %d", len(seen), total)
	}
	got, violation := fsm.state()
	if violation != "" {
		t.Errorf("FSM contract violated: %s", violation)
	}
	// Each proposer's records must appear once each, in the order it proposed them.
	next := make(map[string]int)
	for _, e := range got {
		var p, i int
		if _, err := fmt.Sscanf(e.Data, "p%d-%d", &p, &i); err != nil {
			t.Fatalf("unexpected record %q", e.Data)
		}
		key := fmt.Sprint(p)
		if i != next[key] {
			t.Errorf("proposer %d: record %d applied when %d was expected", p, i, next[key])
		}
		next[key] = i + 1
	}
	if len(got) != total {
		t.Errorf("FSM has %d entries, want %d", len(got), total)
	}
	st := l.Stats()
	if st.Records != total || st.LastIndex != total {
		t.Errorf("Stats() = %+v, want Records and LastIndex %d", st, total)
	}
	if st.Batches == 0 || st.Batches > total || st.Snapshots == 0 {
		t.Errorf("Stats() = %+v, want 1..%d batches and some snapshots", st, total)
	}
	t.Logf("%d records in %d batches (average %.1f), %d snapshots", st.Records, st.Batches, st.AvgBatchSize, st.Snapshots)
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	// The same state comes back from disk.
	again := &listFSM{}
	openTest(t, path, again, Options{})
	checkFSM(t, again, got)
}

func TestReopenReplays(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	records := numbered("r", 1, 50)
	l := openTest(t, path, &listFSM{}, Options{})
	applyAll(t, l, records...)
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	fsm := &listFSM{}
	l = openTest(t, path, fsm, Options{})
	checkFSM(t, fsm, entriesOf(records))
	if fsm.restores != 0 {
		t.Errorf("Restore called %d times without a snapshot", fsm.restores)
	}
	if got := l.LastIndex(); got != 50 {
		t.Errorf("LastIndex() = %d, want 50", got)
	}
	// Appending after a replay continues the sequence.
	applyAll(t, l, "r-51")
	if got := l.LastIndex(); got != 51 {
		t.Errorf("LastIndex() after one more record = %d, want 51", got)
	}
}

func TestSnapshotTruncateRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	records := numbered("r", 1, 50)
	l := openTest(t, path, &listFSM{}, Options{})
	applyAll(t, l, records[:30]...)
	if err := l.Snapshot(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	// A second snapshot with nothing new is a no-op, not an error.
	if err := l.Snapshot(); err != nil {
		t.Fatalf("second Snapshot: %v", err)
	}
	applyAll(t, l, records[30:]...)
	if got := l.Stats(); got.Snapshots != 1 || got.SnapshotIndex != 30 {
		t.Errorf("Stats() = %+v, want one snapshot at index 30", got)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if diff := cmp.Diff(seq(31, 50), logKeys(t, path)); diff != "" {
		t.Errorf("log keys after truncation (-want +got):\n%s", diff)
	}

	fsm := &listFSM{}
	l = openTest(t, path, fsm, Options{})
	checkFSM(t, fsm, entriesOf(records))
	if fsm.restores != 1 {
		t.Errorf("Restore called %d times, want 1", fsm.restores)
	}
	st := l.Stats()
	if st.Replayed != 20 || st.SnapshotIndex != 30 || st.LastIndex != 50 {
		t.Errorf("Stats() after reopen = %+v, want Replayed 20, SnapshotIndex 30, LastIndex 50", st)
	}
}

func seq(from, to uint64) []uint64 {
	var out []uint64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func TestAutomaticSnapshot(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	records := numbered("r", 1, 25)
	l := openTest(t, path, &listFSM{}, Options{SnapshotEvery: 10, MaxBatch: 1})
	applyAll(t, l, records...)
	st := l.Stats()
	if st.Snapshots != 2 || st.SnapshotIndex != 20 {
		t.Errorf("Stats() = %+v, want 2 snapshots, the latest at index 20", st)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if diff := cmp.Diff(seq(21, 25), logKeys(t, path)); diff != "" {
		t.Errorf("log keys (-want +got):\n%s", diff)
	}
	fsm := &listFSM{}
	openTest(t, path, fsm, Options{SnapshotEvery: 10})
	checkFSM(t, fsm, entriesOf(records))
}

func TestTruncateKeepsLaterEntries(t *testing.T) {
	// Snapshots normally cover the whole log; truncate must still keep
	// entries above the index if it is ever asked to cut in the middle.
	path := filepath.Join(t.TempDir(), "state.db")
	l := openTest(t, path, &listFSM{}, Options{})
	applyAll(t, l, numbered("r", 1, 10)...)
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return truncate(tx, 4) }); err != nil {
		t.Fatalf("truncate: %v", err)
	}
	db.Close()
	if diff := cmp.Diff(seq(5, 10), logKeys(t, path)); diff != "" {
		t.Errorf("log keys (-want +got):\n%s", diff)
	}
}

func TestOpenRefusesUnknownFormat(t *testing.T) {
	tests := map[string]func(tx *bolt.Tx) error{
		"newer version": func(tx *bolt.Tx) error {
			b, err := tx.CreateBucket(bucketMeta)
			if err != nil {
				return err
			}
			return b.Put(keyVersion, encodeIndex(FormatVersion+1))
		},
		"version of wrong length": func(tx *bolt.Tx) error {
			b, err := tx.CreateBucket(bucketMeta)
			if err != nil {
				return err
			}
			return b.Put(keyVersion, []byte{1})
		},
		"meta without version": func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket(bucketMeta)
			return err
		},
		"foreign bbolt file": func(tx *bolt.Tx) error {
			_, err := tx.CreateBucket([]byte("jobs"))
			return err
		},
	}
	for name, prepare := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			db, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Update(prepare); err != nil {
				t.Fatal(err)
			}
			db.Close()
			l, err := Open(path, &listFSM{}, Options{})
			if err == nil {
				l.Close()
				t.Fatalf("Open succeeded on a file with an unknown format")
			}
			if !errors.Is(err, ErrUnknownFormat) {
				t.Errorf("Open error = %v, want ErrUnknownFormat", err)
			}
			t.Log(err)
		})
	}
}

func TestOpenStampsVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	l := openTest(t, path, &listFSM{}, Options{})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var got uint64
	if err := db.View(func(tx *bolt.Tx) error {
		var err error
		got, err = decodeIndex(tx.Bucket(bucketMeta).Get(keyVersion))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got != FormatVersion {
		t.Errorf("stored format version = %d, want %d", got, FormatVersion)
	}
}

func TestOpenRejectsBadOptions(t *testing.T) {
	tests := map[string]Options{
		"negative SnapshotEvery": {SnapshotEvery: -1},
		"negative MaxBatch":      {MaxBatch: -1},
	}
	for name, opts := range tests {
		t.Run(name, func(t *testing.T) {
			l, err := Open(filepath.Join(t.TempDir(), "state.db"), &listFSM{}, opts)
			if err == nil {
				l.Close()
				t.Fatal("Open succeeded")
			}
		})
	}
}

func TestOpenLockedFile(t *testing.T) {
	defer func(old time.Duration) { lockTimeout = old }(lockTimeout)
	lockTimeout = 50 * time.Millisecond
	path := filepath.Join(t.TempDir(), "state.db")
	openTest(t, path, &listFSM{}, Options{})
	l, err := Open(path, &listFSM{}, Options{})
	if err == nil {
		l.Close()
		t.Fatal("second Open of a held file succeeded")
	}
	t.Log(err)
}

func TestApplyCancelledContext(t *testing.T) {
	l := openTest(t, filepath.Join(t.TempDir(), "state.db"), &listFSM{}, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Apply(ctx, []byte("abandoned")); !errors.Is(err, context.Canceled) {
		t.Errorf("Apply with a cancelled ctx: error = %v, want context.Canceled", err)
	}
	if got := l.LastIndex(); got != 0 {
		t.Errorf("LastIndex() = %d after an abandoned record, want 0", got)
	}
}

func TestApplyAfterClose(t *testing.T) {
	l := openTest(t, filepath.Join(t.TempDir(), "state.db"), &listFSM{}, Options{})
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := l.Apply(context.Background(), []byte("late")); !errors.Is(err, ErrClosed) {
		t.Errorf("Apply after Close: error = %v, want ErrClosed", err)
	}
	if err := l.Snapshot(); !errors.Is(err, ErrClosed) {
		t.Errorf("Snapshot after Close: error = %v, want ErrClosed", err)
	}
}

func TestCloseDuringApply(t *testing.T) {
	// Every Apply racing Close either commits (and is on disk) or fails
	// with ErrClosed (and is not): nothing in between.
	path := filepath.Join(t.TempDir(), "state.db")
	l := openTest(t, path, &listFSM{}, Options{})
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		committed = map[string]uint64{}
	)
	for p := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				record := fmt.Sprintf("p%d-%d", p, i)
				got, err := l.Apply(context.Background(), []byte(record))
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Errorf("Apply(%q): %v", record, err)
					return
				}
				mu.Lock()
				committed[record] = got.(entry).Index
				mu.Unlock()
			}
		})
	}
	for l.LastIndex() < 20 {
		time.Sleep(time.Millisecond)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wg.Wait()

	fsm := &listFSM{}
	openTest(t, path, fsm, Options{})
	got, violation := fsm.state()
	if violation != "" {
		t.Errorf("FSM contract violated: %s", violation)
	}
	onDisk := map[string]uint64{}
	for _, e := range got {
		onDisk[e.Data] = e.Index
	}
	if diff := cmp.Diff(committed, onDisk); diff != "" {
		t.Errorf("acknowledged records vs records on disk (-acked +disk):\n%s", diff)
	}
}

func TestSnapshotFailureIsNotFatal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	fsm := &listFSM{snapshotErr: errors.New("boom")}
	l := openTest(t, path, fsm, Options{SnapshotEvery: 2, MaxBatch: 1})
	applyAll(t, l, "a", "b", "c")
	if err := l.Snapshot(); err == nil || !errors.Is(err, fsm.snapshotErr) {
		t.Errorf("Snapshot error = %v, want one wrapping %v", err, fsm.snapshotErr)
	}
	st := l.Stats()
	if st.SnapshotError == "" || st.Snapshots != 0 {
		t.Errorf("Stats() = %+v, want a snapshot error and no snapshots", st)
	}
	applyAll(t, l, "d")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	again := &listFSM{}
	openTest(t, path, again, Options{})
	checkFSM(t, again, entriesOf([]string{"a", "b", "c", "d"}))
}

func TestCommitFailureIsSticky(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	fsm := &listFSM{}
	l := openTest(t, path, fsm, Options{})
	applyAll(t, l, "a")
	// Pull the file out from under the writer: the next commit fails the
	// way an I/O error would.
	if err := l.db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"b", "c"} {
		if _, err := l.Apply(context.Background(), []byte(r)); !errors.Is(err, ErrFailed) {
			t.Errorf("Apply(%q) after a failed commit: error = %v, want ErrFailed", r, err)
		}
	}
	if err := l.Snapshot(); !errors.Is(err, ErrFailed) {
		t.Errorf("Snapshot after a failed commit: error = %v, want ErrFailed", err)
	}
	if st := l.Stats(); st.Failed == "" || st.LastIndex != 1 {
		t.Errorf("Stats() = %+v, want Failed set and LastIndex 1", st)
	}
	checkFSM(t, fsm, entriesOf([]string{"a"}))
}

func TestEmptyRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	l := openTest(t, path, &listFSM{}, Options{})
	applyAll(t, l, "", "x", "")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fsm := &listFSM{}
	openTest(t, path, fsm, Options{})
	checkFSM(t, fsm, entriesOf([]string{"", "x", ""}))
}

// fixedSnapshotFSM returns a fixed snapshot, to test the edges of what an
// FSM may hand back.
type fixedSnapshotFSM struct {
	nopFSM
	snapshot []byte
}

func (f fixedSnapshotFSM) Snapshot(w io.Writer) error {
	_, err := w.Write(f.snapshot)
	return err
}

func TestEmptySnapshot(t *testing.T) {
	// An FSM with nothing to save may write nothing; the store must still
	// reopen (an empty file is a snapshot, not a missing one).
	tests := map[string][]byte{
		"nil":   nil,
		"empty": {},
	}
	for name, snapshot := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			l := openTest(t, path, fixedSnapshotFSM{snapshot: snapshot}, Options{})
			applyAll(t, l, "x")
			if err := l.Snapshot(); err != nil {
				t.Fatalf("Snapshot: %v", err)
			}
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openTest(t, path, nopFSM{}, Options{})
			if got := l.LastIndex(); got != 1 {
				t.Errorf("LastIndex() after reopen = %d, want 1", got)
			}
		})
	}
}
