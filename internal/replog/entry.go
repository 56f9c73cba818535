package replog

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/droverhq/drover/internal/state"
)

// entryVersion leads every raft entry this package writes, so that a
// later layout can be told from this one.
const entryVersion = 1

// encodeEntry lays out a record and the blobs proposed with it as one
// raft entry: the version, the blob count, each blob as a length-prefixed
// key and value, then the record to the end. Blobs travel in the entry
// (rather than beside the log, as state.Log keeps them) because every
// replica must hold a job's script once the submission is acknowledged.
func encodeEntry(record []byte, blobs []state.Blob) []byte {
	n := 1 + binary.MaxVarintLen64 + len(record)
	for _, b := range blobs {
		n += 2*binary.MaxVarintLen64 + len(b.Key) + len(b.Data)
	}
	out := make([]byte, 0, n)
	out = append(out, entryVersion)
	out = binary.AppendUvarint(out, uint64(len(blobs)))
	for _, b := range blobs {
		out = binary.AppendUvarint(out, uint64(len(b.Key)))
		out = append(out, b.Key...)
		out = binary.AppendUvarint(out, uint64(len(b.Data)))
		out = append(out, b.Data...)
	}
	return append(out, record...)
}

var errEntry = errors.New("malformed log entry")

// decodeEntry is encodeEntry's inverse. The slices it returns share
// data's memory.
func decodeEntry(data []byte) ([]byte, []state.Blob, error) {
	if len(data) == 0 || data[0] != entryVersion {
		return nil, nil, fmt.Errorf("%w: unknown version", errEntry)
	}
	rest := data[1:]
	count, n := binary.Uvarint(rest)
	if n <= 0 || count > uint64(len(rest)) {
		return nil, nil, fmt.Errorf("%w: blob count", errEntry)
	}
	rest = rest[n:]
	var blobs []state.Blob
	for i := uint64(0); i < count; i++ {
		var key, val []byte
		var err error
		if key, rest, err = chunk(rest); err != nil {
			return nil, nil, fmt.Errorf("%w: blob %d key: %v", errEntry, i, err)
		}
		if val, rest, err = chunk(rest); err != nil {
			return nil, nil, fmt.Errorf("%w: blob %d value: %v", errEntry, i, err)
		}
		if len(key) == 0 {
			return nil, nil, fmt.Errorf("%w: blob %d has no key", errEntry, i)
		}
		blobs = append(blobs, state.Blob{Key: string(key), Data: val})
	}
	return rest, blobs, nil
}

// chunk reads one length-prefixed piece of b.
func chunk(b []byte) (piece, rest []byte, err error) {
	l, n := binary.Uvarint(b)
	if n <= 0 {
		return nil, nil, errors.New("bad length")
	}
	b = b[n:]
	if l > uint64(len(b)) {
		return nil, nil, fmt.Errorf("length %d past the end", l)
	}
	return b[:l], b[l:], nil
}
