package configless

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/droverhq/drover/internal/nodeproto"
)

// Write puts a checked reply into the cache folder dir, made mode 0755
// if missing: each file is written beside its final name and renamed
// over it, so that a daemon or command reading the folder sees the old
// file or the new one, never half of one. Files are mode 0644 (0755 for
// scripts), as slurmd and sackd write them: slurm.conf is every user's
// to read. A file the controller does not have is removed. A reply
// Check refuses writes nothing.
func Write(dir string, r *nodeproto.ConfigReply) error {
	if err := Check(r); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("configless: cache folder: %w", err)
	}
	for _, f := range r.Files {
		final := filepath.Join(dir, f.Name)
		if !f.Exists {
			if err := os.Remove(final); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("configless: remove %s: %w", final, err)
			}
			continue
		}
		mode := fs.FileMode(0o644)
		if f.Execute {
			mode = 0o755
		}
		if err := writeFile(dir, f.Name, []byte(f.Content), mode); err != nil {
			return fmt.Errorf("configless: write %s: %w", final, err)
		}
	}
	return nil
}

// writeFile writes name in dir through a temporary file and a rename
// (rename replaces a link at name rather than following it).
func writeFile(dir, name string, data []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(dir, "."+name+".new*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename: nothing to remove
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	// The mode is set, not left to the umask.
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// Cached reports whether dir holds a slurm.conf from an earlier fetch.
func Cached(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "slurm.conf"))
	return err == nil && fi.Mode().IsRegular()
}
