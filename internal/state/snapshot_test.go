package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"
)

// snapshotFiles lists the snapshot folder of the store at path, sorted.
func snapshotFiles(t *testing.T, path string) []string {
	t.Helper()
	entries, err := os.ReadDir(SnapshotDir(path))
	if err != nil {
		t.Fatalf("list snapshot folder: %v", err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// storedMeta reads the version and snapshot bucket of a closed file.
func storedMeta(t *testing.T, path string) (version uint64, snap storedSnapshot, inline []byte) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error {
		if version, err = decodeIndex(tx.Bucket(bucketMeta).Get(keyVersion)); err != nil {
			return err
		}
		b := tx.Bucket(bucketSnapshot)
		inline = clone(b.Get(keySnapshotData))
		snap, err = readSnapshotMeta(b, version)
		snap.inline = nil
		return err
	}); err != nil {
		t.Fatalf("read snapshot metadata: %v", err)
	}
	return version, snap, inline
}

func TestSnapshotFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	records := numbered("r", 1, 50)
	l := openTest(t, path, &listFSM{}, Options{})
	applyAll(t, l, records[:30]...)
	if err := l.Snapshot(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if diff := cmp.Diff([]string{snapshotName(30)}, snapshotFiles(t, path)); diff != "" {
		t.Errorf("snapshot folder after the first snapshot (-want +got):\n%s", diff)
	}
	applyAll(t, l, records[30:]...)
	if err := l.Snapshot(); err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	// The superseded file goes once the new one is committed.
	if diff := cmp.Diff([]string{snapshotName(50)}, snapshotFiles(t, path)); diff != "" {
		t.Errorf("snapshot folder after the second snapshot (-want +got):\n%s", diff)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	data, err := os.ReadFile(filepath.Join(SnapshotDir(path), snapshotName(50)))
	if err != nil {
		t.Fatal(err)
	}
	version, snap, inline := storedMeta(t, path)
	want := snapshotFile{Index: 50, Name: snapshotName(50), Size: uint64(len(data)), CRC: crc32.Checksum(data, crcTable)}
	if version != FormatVersion || !snap.present || snap.file != want || inline != nil {
		t.Errorf("stored version %d, snapshot %+v, inline %q; want version %d and %+v", version, snap, inline, FormatVersion, want)
	}
	if len(logKeys(t, path)) != 0 {
		t.Errorf("log not truncated: %v", logKeys(t, path))
	}

	fsm := &listFSM{}
	openTest(t, path, fsm, Options{})
	checkFSM(t, fsm, entriesOf(records))
	if fsm.restores != 1 {
		t.Errorf("Restore called %d times, want 1", fsm.restores)
	}
}

func TestOpenBadSnapshotFile(t *testing.T) {
	tests := map[string]struct {
		damage func(path string) error
		want   string
	}{
		"missing": {
			damage: os.Remove,
			want:   "no such file",
		},
		"truncated": {
			damage: func(path string) error {
				info, err := os.Stat(path)
				if err != nil {
					return err
				}
				return os.Truncate(path, info.Size()-1)
			},
			want: "bytes, the state file recorded",
		},
		"grown": {
			damage: func(path string) error {
				f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
				if err != nil {
					return err
				}
				defer f.Close()
				_, err = f.WriteString("\n")
				return err
			},
			want: "bytes, the state file recorded",
		},
		"corrupted": {
			damage: func(path string) error {
				data, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				data[len(data)/2] ^= 0x20
				return os.WriteFile(path, data, 0o600)
			},
			want: "checksum",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			l := openTest(t, path, &listFSM{}, Options{})
			applyAll(t, l, numbered("r", 1, 20)...)
			if err := l.Snapshot(); err != nil {
				t.Fatal(err)
			}
			applyAll(t, l, numbered("r", 21, 25)...)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(SnapshotDir(path), snapshotName(20))
			if err := tc.damage(file); err != nil {
				t.Fatal(err)
			}
			fsm := &listFSM{}
			l, err := Open(path, fsm, Options{})
			if err == nil {
				l.Close()
				t.Fatal("Open succeeded with a damaged snapshot file")
			}
			if !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open error = %v, want one naming %s and saying %q", err, file, tc.want)
			}
			if fsm.restores != 0 {
				t.Errorf("Restore was called with a file that failed its check")
			}
		})
	}
}

func TestOpenRemovesStraySnapshots(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	records := numbered("r", 1, 50)
	l := openTest(t, path, &listFSM{}, Options{})
	applyAll(t, l, records[:30]...)
	if err := l.Snapshot(); err != nil {
		t.Fatal(err)
	}
	applyAll(t, l, records[30:]...)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// What crashes leave: a complete file whose commit never happened (its
	// content must not be read), a temporary one, a superseded one.
	dir := SnapshotDir(path)
	for name, data := range map[string]string{
		snapshotName(50):             "not what the log holds",
		snapshotName(45) + tmpSuffix: "partial",
		snapshotName(10):             "superseded",
		"notes.txt":                  "not ours",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fsm := &listFSM{}
	l = openTest(t, path, fsm, Options{})
	checkFSM(t, fsm, entriesOf(records))
	if diff := cmp.Diff([]string{snapshotName(30), "notes.txt"}, snapshotFiles(t, path)); diff != "" {
		t.Errorf("snapshot folder after Open (-want +got):\n%s", diff)
	}
	// The next snapshot lands on the name a stray had.
	if err := l.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	fsm = &listFSM{}
	openTest(t, path, fsm, Options{})
	checkFSM(t, fsm, entriesOf(records))
	if diff := cmp.Diff([]string{snapshotName(50), "notes.txt"}, snapshotFiles(t, path)); diff != "" {
		t.Errorf("snapshot folder after the next snapshot (-want +got):\n%s", diff)
	}
}

// TestOpenVersion1Store opens a store written before snapshots moved to
// files: the snapshot is a bbolt value.
func TestOpenVersion1Store(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	records := numbered("r", 1, 5)
	var inline bytes.Buffer
	for _, e := range entriesOf(records[:3]) {
		if err := json.NewEncoder(&inline).Encode(e); err != nil {
			t.Fatal(err)
		}
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		meta, _ := tx.CreateBucket(bucketMeta)
		snap, _ := tx.CreateBucket(bucketSnapshot)
		log, _ := tx.CreateBucket(bucketLog)
		tx.CreateBucket(bucketBlobs)
		return errors.Join(
			meta.Put(keyVersion, encodeIndex(1)),
			snap.Put(keySnapshotIndex, encodeIndex(3)),
			snap.Put(keySnapshotData, inline.Bytes()),
			log.Put(encodeIndex(4), []byte(records[3])),
			log.Put(encodeIndex(5), []byte(records[4])),
		)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	fsm := &listFSM{}
	l := openTest(t, path, fsm, Options{})
	checkFSM(t, fsm, entriesOf(records))
	if st := l.Stats(); st.SnapshotIndex != 3 || st.Replayed != 2 {
		t.Errorf("Stats() = %+v, want SnapshotIndex 3 and Replayed 2", st)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Opening alone changes nothing: the controller that wrote the file
	// can still read it.
	if version, _, data := storedMeta(t, path); version != 1 || !bytes.Equal(data, inline.Bytes()) {
		t.Errorf("after Open: version %d, inline snapshot %q; want both unchanged", version, data)
	}

	fsm = &listFSM{}
	l = openTest(t, path, fsm, Options{})
	applyAll(t, l, "r-6")
	if err := l.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	version, snap, data := storedMeta(t, path)
	if version != FormatVersion || snap.file.Name != snapshotName(6) || data != nil {
		t.Errorf("after a snapshot: version %d, snapshot %+v, inline %q; want version %d, file %s and no inline snapshot",
			version, snap, data, FormatVersion, snapshotName(6))
	}
	fsm = &listFSM{}
	openTest(t, path, fsm, Options{})
	checkFSM(t, fsm, entriesOf(append(records, "r-6")))
}

func TestSnapshotFailureLeavesNoFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	fsm := &listFSM{}
	l := openTest(t, path, fsm, Options{})
	applyAll(t, l, "a", "b")
	if err := l.Snapshot(); err != nil {
		t.Fatal(err)
	}
	applyAll(t, l, "c")
	fsm.mu.Lock()
	fsm.snapshotErr = errors.New("boom")
	fsm.mu.Unlock()
	if err := l.Snapshot(); !errors.Is(err, fsm.snapshotErr) {
		t.Fatalf("Snapshot error = %v, want %v", err, fsm.snapshotErr)
	}
	if diff := cmp.Diff([]string{snapshotName(2)}, snapshotFiles(t, path)); diff != "" {
		t.Errorf("snapshot folder after a failed snapshot (-want +got):\n%s", diff)
	}
}

func TestSnapshotCommitFailureKeepsFile(t *testing.T) {
	// A failed commit may still have reached the disk, and then the bbolt
	// file names the new snapshot file: deleting it would lose the state.
	path := filepath.Join(t.TempDir(), "state.db")
	l := openTest(t, path, &listFSM{}, Options{})
	applyAll(t, l, "a", "b")
	if err := l.db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Snapshot(); err == nil {
		t.Fatal("Snapshot succeeded on a closed bbolt file")
	}
	if st := l.Stats(); st.SnapshotError == "" || st.Snapshots != 0 {
		t.Errorf("Stats() = %+v, want a snapshot error and no snapshot", st)
	}
	if diff := cmp.Diff([]string{snapshotName(2)}, snapshotFiles(t, path)); diff != "" {
		t.Errorf("snapshot folder (-want +got):\n%s", diff)
	}
}

func TestOpenSnapshotDirIsAFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	if err := os.WriteFile(SnapshotDir(path), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, &listFSM{}, Options{})
	if err == nil {
		l.Close()
		t.Fatal("Open succeeded with a file where the snapshot folder goes")
	}
	if errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), SnapshotDir(path)) {
		t.Errorf("Open error = %v, want one naming %s", err, SnapshotDir(path))
	}
}
