package state

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"path/filepath"
	"slices"
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
// snapshot indexes and log keys. Open must never panic; when it succeeds it
// must have replayed exactly the records after the snapshot, contiguously;
// and a well-formed file must always open.
func FuzzOpenStoredFile(f *testing.F) {
	f.Add(encodeIndex(1), []byte{}, slices.Concat(encodeIndex(1), encodeIndex(2)))
	f.Add(encodeIndex(1), encodeIndex(2), slices.Concat(encodeIndex(1), encodeIndex(2), encodeIndex(3)))
	f.Add(encodeIndex(1), encodeIndex(5), slices.Concat(encodeIndex(7)))
	f.Add(encodeIndex(2), []byte{}, []byte{})
	f.Add([]byte{1}, []byte{}, []byte{1, 2, 3})
	f.Add(encodeIndex(1), []byte{9}, encodeIndex(1))
	f.Add(encodeIndex(1), encodeIndex(math.MaxUint64), encodeIndex(1))
	f.Fuzz(func(t *testing.T, version, snapIndex, keyBlob []byte) {
		// keyBlob is cut into 8-byte keys; a short tail is a malformed key.
		var keys [][]byte
		for len(keyBlob) > 0 && len(keys) < 64 {
			n := min(8, len(keyBlob))
			keys = append(keys, keyBlob[:n])
			keyBlob = keyBlob[n:]
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
				if err := snap.Put(keySnapshotIndex, snapIndex); err != nil {
					return err
				}
				if err := snap.Put(keySnapshotData, []byte("snapshot")); err != nil {
					return err
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

		// What a correct Open must do, worked out independently.
		wellFormed := bytes.Equal(version, encodeIndex(FormatVersion))
		var snap uint64
		if len(snapIndex) > 0 {
			wellFormed = wellFormed && len(snapIndex) == 8
			if len(snapIndex) == 8 {
				snap = binary.BigEndian.Uint64(snapIndex)
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
			if !bytes.Equal(version, encodeIndex(FormatVersion)) && !errors.Is(err, ErrUnknownFormat) {
				t.Fatalf("Open error for version %x = %v, want ErrUnknownFormat", version, err)
			}
			return
		}
		defer l.Close()
		if !bytes.Equal(version, encodeIndex(FormatVersion)) {
			t.Fatalf("Open accepted format version %x", version)
		}
		restored := uint64(0)
		if fsm.snapshot != nil {
			restored = snap
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
	})
}

// bytesFSM keeps records as raw bytes, for byte-exact comparisons.
type bytesFSM struct {
	records  [][]byte
	indexes  []uint64
	snapshot []byte
}

func (f *bytesFSM) Apply(index uint64, record []byte) any {
	f.records = append(f.records, record)
	f.indexes = append(f.indexes, index)
	return index
}

// Snapshot encodes the records length-prefixed so Restore can split them.
func (f *bytesFSM) Snapshot() ([]byte, error) {
	var out []byte
	for _, r := range f.records {
		out = binary.AppendUvarint(out, uint64(len(r)))
		out = append(out, r...)
	}
	return out, nil
}

func (f *bytesFSM) Restore(snapshot []byte) error {
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
