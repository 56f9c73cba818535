package state

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// FormatVersion is the on-disk layout this package reads and writes. Bump it
// whenever the meaning of a bucket or key changes, so an older controller
// refuses a newer file instead of misreading it.
const FormatVersion uint64 = 1

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
	keySnapshotData  = []byte("data")
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
// checks the version of an existing one. A file that has drover buckets but
// no version, or a version other than FormatVersion, is refused.
func initFormat(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		// Only a file with no buckets at all is new; anything else was
		// written by something that is not this package.
		empty := true
		if err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
			empty = false
			return nil
		}); err != nil {
			return err
		}
		if !empty {
			return fmt.Errorf("%w: file has no %q bucket (not a drover state file?)", ErrUnknownFormat, bucketMeta)
		}
		var err error
		if meta, err = tx.CreateBucket(bucketMeta); err != nil {
			return fmt.Errorf("create %q bucket: %w", bucketMeta, err)
		}
		if err := meta.Put(keyVersion, encodeIndex(FormatVersion)); err != nil {
			return fmt.Errorf("write format version: %w", err)
		}
	}
	raw := meta.Get(keyVersion)
	if raw == nil {
		return fmt.Errorf("%w: no format version recorded", ErrUnknownFormat)
	}
	if len(raw) != 8 {
		return fmt.Errorf("%w: version field is %d bytes, want 8", ErrUnknownFormat, len(raw))
	}
	version := binary.BigEndian.Uint64(raw)
	if version != FormatVersion {
		return fmt.Errorf("%w %d (this build reads version %d)", ErrUnknownFormat, version, FormatVersion)
	}
	for _, name := range [][]byte{bucketLog, bucketSnapshot, bucketBlobs} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create %q bucket: %w", name, err)
		}
	}
	return nil
}
