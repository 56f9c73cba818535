package state

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// FormatVersion is the on-disk layout this package writes. Bump it whenever
// the meaning of a bucket or key changes, so an older controller refuses a
// newer file instead of misreading it.
//
// Version 2 keeps the snapshot in a file that the snapshot bucket names.
// Version 1 kept it in the bucket itself (keySnapshotData); such a file
// still opens, and stays version 1, readable by the controllers that wrote
// it, until its first snapshot moves the data to a file.
const FormatVersion uint64 = 2

// formatInlineSnapshot is version 1: the snapshot is a bbolt value.
const formatInlineSnapshot uint64 = 1

// ErrUnknownFormat is returned by Open for a file whose format version this
// build does not understand (written by a newer or foreign program).
var ErrUnknownFormat = errors.New("unknown state file format version")

var (
	bucketMeta     = []byte("meta")
	bucketLog      = []byte("log")
	bucketSnapshot = []byte("snapshot")
	// bucketBlobs holds bulky data that records refer to by key (a job's
	// script and environment), written in the transaction of the record
	// that introduces it, so that neither memory nor snapshots carry it.
	bucketBlobs = []byte("blobs")

	keyVersion       = []byte("version")
	keySnapshotIndex = []byte("index")
	// keySnapshotData is version 1's snapshot. Version 2 deletes it in the
	// transaction that records the first snapshot file.
	keySnapshotData = []byte("data")
	keySnapshotFile = []byte("file")
	keySnapshotSize = []byte("size")
	keySnapshotCRC  = []byte("crc32c")
)

// encodeIndex returns the 8-byte big-endian key for index, so bbolt's byte
// order is log order and a cursor walks records in sequence.
func encodeIndex(index uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, index)
	return b
}

// decodeIndex is the inverse of encodeIndex; anything but 8 bytes is corruption.
func decodeIndex(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("index key is %d bytes, want 8", len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// initFormat creates the buckets of a new file and stamps its version, or
// checks the version of an existing one, and returns the version. A file
// that has drover buckets but no version, or a version this build does not
// read, is refused.
func initFormat(tx *bolt.Tx) (uint64, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		// Only a file with no buckets at all is new; anything else was
		// written by something that is not this package.
		empty := true
		if err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			empty = false
			return nil
		}); err != nil {
			return 0, err
		}
		if !empty {
			return 0, fmt.Errorf("%w: file has no %q bucket (not a drover state file?)", ErrUnknownFormat, bucketMeta)
		}
		var err error
		if meta, err = tx.CreateBucket(bucketMeta); err != nil {
			return 0, fmt.Errorf("create %q bucket: %w", bucketMeta, err)
		}
		if err := meta.Put(keyVersion, encodeIndex(FormatVersion)); err != nil {
			return 0, fmt.Errorf("write format version: %w", err)
		}
	}
	raw := meta.Get(keyVersion)
	if raw == nil {
		return 0, fmt.Errorf("%w: no format version recorded", ErrUnknownFormat)
	}
	if len(raw) != 8 {
		return 0, fmt.Errorf("%w: version field is %d bytes, want 8", ErrUnknownFormat, len(raw))
	}
	version := binary.BigEndian.Uint64(raw)
	if version != FormatVersion && version != formatInlineSnapshot {
		return 0, fmt.Errorf("%w %d (this build reads versions %d and %d)", ErrUnknownFormat, version, formatInlineSnapshot, FormatVersion)
	}
	for _, name := range [][]byte{bucketLog, bucketSnapshot, bucketBlobs} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return 0, fmt.Errorf("create %q bucket: %w", name, err)
		}
	}
	return version, nil
}

// storedSnapshot is what the snapshot bucket says about the latest
// snapshot: nothing, a version 1 value, or a file.
type storedSnapshot struct {
	present bool
	index   uint64
	// inline is version 1's snapshot: bbolt memory, valid only inside the
	// transaction that read it.
	inline []byte
	file   snapshotFile
}

// readSnapshotMeta parses the snapshot bucket of a file of the given
// version. The index key alone says whether there is a snapshot; what it
// needs beside it must then be there and well formed.
func readSnapshotMeta(b *bolt.Bucket, version uint64) (storedSnapshot, error) {
	raw := b.Get(keySnapshotIndex)
	if raw == nil {
		return storedSnapshot{}, nil
	}
	index, err := decodeIndex(raw)
	if err != nil {
		return storedSnapshot{}, fmt.Errorf("snapshot index: %w", err)
	}
	s := storedSnapshot{present: true, index: index}
	if version == formatInlineSnapshot {
		if s.inline = b.Get(keySnapshotData); s.inline == nil {
			return storedSnapshot{}, fmt.Errorf("snapshot at index %d has no data", index)
		}
		return s, nil
	}
	name := b.Get(keySnapshotFile)
	if name == nil || !validSnapshotName(string(name)) {
		return storedSnapshot{}, fmt.Errorf("snapshot at index %d: file name %q is missing or not a plain name", index, name)
	}
	size := b.Get(keySnapshotSize)
	if len(size) != 8 {
		return storedSnapshot{}, fmt.Errorf("snapshot at index %d: size field is %d bytes, want 8", index, len(size))
	}
	crc := b.Get(keySnapshotCRC)
	if len(crc) != 4 {
		return storedSnapshot{}, fmt.Errorf("snapshot at index %d: checksum field is %d bytes, want 4", index, len(crc))
	}
	s.file = snapshotFile{
		Index: index,
		Name:  string(name),
		Size:  binary.BigEndian.Uint64(size),
		CRC:   binary.BigEndian.Uint32(crc),
	}
	return s, nil
}

// writeSnapshotMeta records f as the latest snapshot, leaving a version 2
// file: a version 1 file loses its inline snapshot and is stamped 2 in the
// same transaction, so it never holds both or neither.
func writeSnapshotMeta(tx *bolt.Tx, f snapshotFile) error {
	b := tx.Bucket(bucketSnapshot)
	crc := binary.BigEndian.AppendUint32(nil, f.CRC)
	for _, kv := range []struct{ k, v []byte }{
		{keySnapshotFile, []byte(f.Name)},
		{keySnapshotSize, encodeIndex(f.Size)},
		{keySnapshotCRC, crc},
		{keySnapshotIndex, encodeIndex(f.Index)},
	} {
		if err := b.Put(kv.k, kv.v); err != nil {
			return fmt.Errorf("write snapshot %s: %w", kv.k, err)
		}
	}
	if err := b.Delete(keySnapshotData); err != nil {
		return fmt.Errorf("delete version 1 snapshot: %w", err)
	}
	if err := tx.Bucket(bucketMeta).Put(keyVersion, encodeIndex(FormatVersion)); err != nil {
		return fmt.Errorf("write format version: %w", err)
	}
	return nil
}
