package replog

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/hashicorp/raft"

	"github.com/droverhq/drover/internal/state"
)

// importLegacy takes over a single controller's state log (Config.Import)
// when this replica leads a cluster whose log holds no command yet: the
// state is replayed into the state machine, its blobs copied, and the
// whole made the cluster's through raft's restore, which the followers
// then receive as a snapshot.
func (l *Log) importLegacy() error {
	path := l.cfg.Import
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	// Raft restores only once the configuration entries are applied.
	if err := l.raft.Barrier(10 * time.Second).Error(); err != nil {
		return fmt.Errorf("replog: import: %w", err)
	}
	fresh, err := l.noCommands()
	if err != nil {
		return err
	}
	if !fresh {
		l.cfg.Logger.Warn("a single controller's state was left alone: the replicated log already holds commands", "file", path)
		return nil
	}
	if err := l.loadLegacy(path); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(l.cfg.Dir, "import-*.snap")
	if err != nil {
		return fmt.Errorf("replog: import: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	snap, _ := l.fsm.Snapshot()
	w := bufio.NewWriterSize(tmp, 64<<10)
	err = snap.(*fsmSnapshot).write(w)
	snap.Release()
	if err == nil {
		err = w.Flush()
	}
	var size int64
	if err == nil {
		size, err = tmp.Seek(0, 1)
	}
	if err == nil {
		_, err = tmp.Seek(0, 0)
	}
	if err != nil {
		return fmt.Errorf("replog: import: write the snapshot: %w", err)
	}
	if err := l.raft.Restore(&raft.SnapshotMeta{Version: raft.SnapshotVersionMax, Size: size}, tmp, 0); err != nil {
		return fmt.Errorf("replog: import: %w", err)
	}
	if err := os.Rename(path, path+".imported"); err != nil {
		return fmt.Errorf("replog: import: %w", err)
	}
	l.cfg.Logger.Info("the single controller's state is now the replicated state", "file", path, "bytes", size)
	return nil
}

// noCommands reports whether this replica's log holds no command.
func (l *Log) noCommands() (bool, error) {
	first, err := l.store.FirstIndex()
	if err != nil {
		return false, fmt.Errorf("replog: %w", err)
	}
	last, err := l.store.LastIndex()
	if err != nil {
		return false, fmt.Errorf("replog: %w", err)
	}
	if snap := l.Stats().SnapshotIndex; snap > 0 {
		// A snapshot was taken: something was applied.
		return false, nil
	}
	for i := max(first, 1); i <= last && first > 0; i++ {
		var e raft.Log
		if err := l.store.GetLog(i, &e); err != nil {
			return false, fmt.Errorf("replog: entry %d: %w", i, err)
		}
		if e.Type == raft.LogCommand {
			return false, nil
		}
	}
	return true, nil
}

// loadLegacy replays a state log into the state machine, with Apply held
// off, and copies its blobs.
func (l *Log) loadLegacy(path string) error {
	f := l.fsm
	f.mu.Lock()
	defer f.mu.Unlock()
	old, err := state.Open(path, f.target, state.Options{})
	if err != nil {
		return fmt.Errorf("replog: import: %w", err)
	}
	defer old.Close()
	keys, err := old.BlobKeys()
	if err != nil {
		return fmt.Errorf("replog: import: %w", err)
	}
	var batch []state.Blob
	for _, k := range keys {
		b, err := old.Blob(k)
		if err != nil {
			return fmt.Errorf("replog: import: %w", err)
		}
		batch = append(batch, state.Blob{Key: k, Data: b})
		if len(batch) == 256 {
			if err := f.blobs.put(batch); err != nil {
				return fmt.Errorf("replog: import: %w", err)
			}
			batch = batch[:0]
		}
	}
	if err := f.blobs.put(batch); err != nil {
		return fmt.Errorf("replog: import: %w", err)
	}
	return nil
}
