package replog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	bolt "go.etcd.io/bbolt"

	"github.com/droverhq/drover/internal/state"
)

var bucketBlobs = []byte("blobs")

// blobStore keeps the blobs of applied entries on this replica's disk.
// It is a cache of what the raft log and snapshots hold, rebuilt at every
// start (the snapshot raft restores carries the blobs, the entries after
// it carry theirs), so it is never synced: a crash loses nothing the log
// cannot give back.
type blobStore struct {
	db *bolt.DB
}

func openBlobStore(path string) (*blobStore, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("replog: remove the previous blob cache: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{NoSync: true, NoFreelistSync: true})
	if err != nil {
		return nil, fmt.Errorf("replog: open blob cache %s: %w", path, err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketBlobs)
		return err
	}); err != nil {
		db.Close()
		return nil, fmt.Errorf("replog: blob cache %s: %w", path, err)
	}
	return &blobStore{db: db}, nil
}

func (s *blobStore) put(blobs []state.Blob) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketBlobs)
		for _, bl := range blobs {
			if err := b.Put([]byte(bl.Key), bl.Data); err != nil {
				return fmt.Errorf("replog: store blob %q: %w", bl.Key, err)
			}
		}
		return nil
	})
}

func (s *blobStore) get(key string) ([]byte, error) {
	var out []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketBlobs).Get([]byte(key))
		if v == nil {
			return state.ErrNoBlob
		}
		out = append([]byte{}, v...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("replog: blob %q: %w", key, err)
	}
	return out, nil
}

func (s *blobStore) delete(keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketBlobs)
		for _, k := range keys {
			if err := b.Delete([]byte(k)); err != nil {
				return fmt.Errorf("replog: delete blob %q: %w", k, err)
			}
		}
		return nil
	})
}

func (s *blobStore) keys() ([]string, error) {
	var out []string
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketBlobs).ForEach(func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("replog: list blobs: %w", err)
	}
	return out, nil
}

// each calls fn with every blob, in key order, from one consistent view.
func (s *blobStore) each(fn func(key, val []byte) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketBlobs).ForEach(fn)
	})
}

// reset empties the store, before a snapshot's blobs replace them.
func (s *blobStore) reset() error {
	return s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketBlobs); err != nil {
			return err
		}
		_, err := tx.CreateBucket(bucketBlobs)
		return err
	})
}

func (s *blobStore) close() error { return s.db.Close() }
