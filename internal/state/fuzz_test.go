package state

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// FuzzRecordRoundTrip checks that any records, including empty and binary
// ones, come back byte for byte and in order from a reopened file, with a
// snapshot taken part way through.
func FuzzRecordRoundTrip(f *testing.F) {
	f.Add([]byte("submit job 1\x00cancel job 1\x00\x00"), uint8(1))
	f.Add([]byte{}, uint8(0))
	f.Add([]byte("\xff\xfe\x00\x01"), uint8(7))
	f.Fuzz(func(t *testing.T, blob []byte, snapAt uint8) {
		records := bytes.Split(blob, []byte{0})
		if len(records) > 64 {
			records = records[:64]
		}
		path := filepath.Join(t.TempDir(), "state.db")
		l, err := Open(path, &bytesFSM{}, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range records {
			if i == int(snapAt) {
				if err := l.Snapshot(); err != nil {
					t.Fatalf("Snapshot: %v", err)
				}
			}
			if _, err := l.Apply(context.Background(), r); err != nil {
				t.Fatalf("Apply: %v", err)
			}
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		fsm := &bytesFSM{}
		l, err = Open(path, fsm, Options{NoSync: true})
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		defer l.Close()
		if len(fsm.records) != len(records) {
			t.Fatalf("reopened with %d records, want %d", len(fsm.records), len(records))
		}
		for i := range records {
			if !bytes.Equal(fsm.records[i], records[i]) {
				t.Errorf("record %d = %q, want %q", i+1, fsm.records[i], records[i])
			}
		}
		if got := l.LastIndex(); got != uint64(len(records)) {
			t.Errorf("LastIndex() = %d, want %d", got, len(records))
		}
	})
}

// FuzzOpenStoredFile feeds Open files with arbitrary format versions,
// snapshot metadata (index, file name, size, checksum), snapshot file
// contents and log keys. Open must never panic; when it succeeds it must
// have restored exactly the snapshot the file names and replayed exactly
// the records after it, contiguously, and removed the stray snapshot files;
// and a well-formed file must always open. fix bit 0 replaces size with the
// content's true size, bit 1 checksum with its true checksum, so that
// well-formed version 2 files are reachable.
func FuzzOpenStoredFile(f *testing.F) {
	two, one := encodeIndex(FormatVersion), encodeIndex(formatInlineSnapshot)
	name := snapshotName(1)
	f.Add(two, encodeIndex(1), slices.Concat(encodeIndex(1), encodeIndex(2)), name, []byte("snap"), []byte{}, []byte{}, uint8(3))
	f.Add(two, []byte{}, slices.Concat(encodeIndex(1), encodeIndex(2)), "", []byte{}, []byte{}, []byte{}, uint8(0))
	f.Add(two, encodeIndex(2), slices.Concat(encodeIndex(1), encodeIndex(2), encodeIndex(3)), "x", []byte{}, []byte{}, []byte{}, uint8(3))
	f.Add(two, encodeIndex(5), encodeIndex(7), name, []byte("snap"), []byte{}, []byte{}, uint8(3))
	f.Add(two, encodeIndex(1), encodeIndex(2), name, []byte("snap"), encodeIndex(5), []byte{0, 0, 0, 0}, uint8(0))
	f.Add(two, encodeIndex(1), encodeIndex(2), name, []byte("snap"), []byte{}, []byte{1, 2, 3, 4}, uint8(1))
	f.Add(two, encodeIndex(1), encodeIndex(2), "../escape.snap", []byte("snap"), []byte{}, []byte{}, uint8(3))
	f.Add(two, encodeIndex(1), encodeIndex(2), "/etc/passwd", []byte("snap"), []byte{}, []byte{}, uint8(3))
	f.Add(one, encodeIndex(1), slices.Concat(encodeIndex(1), encodeIndex(2)), name, []byte("stray"), []byte{}, []byte{}, uint8(3))
	f.Add(one, []byte{}, []byte{}, "", []byte{}, []byte{}, []byte{}, uint8(0))
	f.Add(encodeIndex(3), []byte{}, []byte{}, "", []byte{}, []byte{}, []byte{}, uint8(0))
	f.Add([]byte{1}, []byte{}, []byte{1, 2, 3}, "", []byte{}, []byte{}, []byte{}, uint8(0))
	f.Add(two, []byte{9}, encodeIndex(1), name, []byte{}, []byte{}, []byte{}, uint8(3))
	f.Add(two, encodeIndex(math.MaxUint64), encodeIndex(1), name, []byte{}, []byte{}, []byte{}, uint8(3))
	f.Fuzz(func(t *testing.T, version, snapIndex, keyBlob []byte, name string, content, size, checksum []byte, fix uint8) {
		// keyBlob is cut into 8-byte keys; a short tail is a malformed key.
		var keys [][]byte
		for len(keyBlob) > 0 && len(keys) < 64 {
			n := min(8, len(keyBlob))
			keys = append(keys, keyBlob[:n])
			keyBlob = keyBlob[n:]
		}
		if len(content) > 1<<16 {
			content = content[:1<<16]
		}
		if fix&1 != 0 {
			size = encodeIndex(uint64(len(content)))
		}
		if fix&2 != 0 {
			checksum = binary.BigEndian.AppendUint32(nil, crc32.Checksum(content, crc32.MakeTable(crc32.Castagnoli)))
		}
		path := filepath.Join(t.TempDir(), "state.db")
		db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Update(func(tx *bolt.Tx) error {
			meta, _ := tx.CreateBucket(bucketMeta)
			if err := meta.Put(keyVersion, version); err != nil {
				return err
			}
			snap, _ := tx.CreateBucket(bucketSnapshot)
			if len(snapIndex) > 0 {
				for _, kv := range []struct{ k, v []byte }{
					{keySnapshotIndex, snapIndex},
					{keySnapshotData, []byte("inline")},
					{keySnapshotFile, []byte(name)},
					{keySnapshotSize, size},
					{keySnapshotCRC, checksum},
				} {
					if err := snap.Put(kv.k, kv.v); err != nil {
						return err
					}
				}
			}
			log, _ := tx.CreateBucket(bucketLog)
			for _, k := range keys {
				if err := log.Put(k, k); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		db.Close()

		// The snapshot folder: the file the metadata names, where that is
		// a plain name, beside strays a crash could have left.
		dir := SnapshotDir(path)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		plain := name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
		fileWritten := plain && os.WriteFile(filepath.Join(dir, name), content, 0o600) == nil
		strays := []string{snapshotName(math.MaxUint64), snapshotName(3) + tmpSuffix}
		for _, s := range strays {
			if s != name {
				if err := os.WriteFile(filepath.Join(dir, s), []byte("stray"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
		}
		const foreign = "notes.txt"
		if name != foreign {
			if err := os.WriteFile(filepath.Join(dir, foreign), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}

		// What a correct Open must do, worked out independently.
		v1, v2 := bytes.Equal(version, encodeIndex(formatInlineSnapshot)), bytes.Equal(version, encodeIndex(FormatVersion))
		wellFormed := v1 || v2
		var snap uint64
		var wantSnapshot []byte // what Restore must be given
		if len(snapIndex) > 0 {
			wellFormed = wellFormed && len(snapIndex) == 8
			if len(snapIndex) == 8 {
				snap = binary.BigEndian.Uint64(snapIndex)
			}
			wantSnapshot = []byte("inline")
			if v2 {
				wantSnapshot = content
				wellFormed = wellFormed && fileWritten &&
					len(size) == 8 && binary.BigEndian.Uint64(size) == uint64(len(content)) &&
					len(checksum) == 4 && binary.BigEndian.Uint32(checksum) == crc32.Checksum(content, crc32.MakeTable(crc32.Castagnoli))
			}
		}
		var after []uint64 // indexes above the snapshot, sorted
		for _, k := range keys {
			if len(k) != 8 {
				wellFormed = false
				continue
			}
			if i := binary.BigEndian.Uint64(k); i > snap {
				after = append(after, i)
			}
		}
		slices.Sort(after)
		after = slices.Compact(after)
		for n, i := range after {
			if i != snap+uint64(n)+1 {
				wellFormed = false
			}
		}

		fsm := &bytesFSM{}
		l, err := Open(path, fsm, Options{NoSync: true})
		if err != nil {
			if wellFormed {
				t.Fatalf("Open refused a well-formed file: %v", err)
			}
			if !v1 && !v2 && !errors.Is(err, ErrUnknownFormat) {
				t.Fatalf("Open error for version %x = %v, want ErrUnknownFormat", version, err)
			}
			return
		}
		defer l.Close()
		if !v1 && !v2 {
			t.Fatalf("Open accepted format version %x", version)
		}
		restored := uint64(0)
		if fsm.restored {
			restored = snap
			if !bytes.Equal(fsm.snapshot, wantSnapshot) {
				t.Fatalf("restored %q, want %q", fsm.snapshot, wantSnapshot)
			}
		} else if len(snapIndex) > 0 {
			t.Fatalf("Open succeeded without restoring the snapshot at %x", snapIndex)
		}
		for n, i := range fsm.indexes {
			if i != restored+uint64(n)+1 {
				t.Fatalf("replayed indexes %v after snapshot %d: not contiguous", fsm.indexes, restored)
			}
		}
		if !slices.Equal(fsm.indexes, after) {
			t.Fatalf("replayed %v, file holds %v after snapshot %d", fsm.indexes, after, snap)
		}
		if want := restored + uint64(len(fsm.indexes)); l.LastIndex() != want {
			t.Fatalf("LastIndex() = %d, want %d", l.LastIndex(), want)
		}
		for _, s := range strays {
			if s == name && v2 && fsm.restored {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, s)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("stray %s left in the snapshot folder: %v", s, err)
			}
		}
		if v2 && fsm.restored {
			if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
				t.Errorf("the snapshot file itself is gone: %v", err)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, foreign)); err != nil {
			t.Errorf("a file that is not a snapshot was removed: %v", err)
		}
	})
}

// bytesFSM keeps records as raw bytes, for byte-exact comparisons.
type bytesFSM struct {
	records  [][]byte
	indexes  []uint64
	restored bool
	snapshot []byte
}

func (f *bytesFSM) Apply(index uint64, record []byte) any {
	f.records = append(f.records, record)
	f.indexes = append(f.indexes, index)
	return index
}

// Snapshot writes the records length-prefixed so Restore can split them.
func (f *bytesFSM) Snapshot(w io.Writer) error {
	var prefix []byte
	for _, r := range f.records {
		prefix = binary.AppendUvarint(prefix[:0], uint64(len(r)))
		if _, err := w.Write(prefix); err != nil {
			return err
		}
		if _, err := w.Write(r); err != nil {
			return err
		}
	}
	return nil
}

func (f *bytesFSM) Restore(r io.Reader) error {
	snapshot, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	f.restored = true
	f.snapshot = snapshot
	f.records = nil
	for len(snapshot) > 0 {
		n, size := binary.Uvarint(snapshot)
		if size <= 0 || uint64(len(snapshot)-size) < n {
			// Not one of ours (FuzzOpenStoredFile writes opaque data):
			// keep it only as the snapshot marker.
			f.records = nil
			return nil
		}
		f.records = append(f.records, snapshot[size:size+int(n)])
		snapshot = snapshot[size+int(n):]
	}
	return nil
}
