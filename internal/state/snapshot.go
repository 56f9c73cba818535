package state

import (
	"bufio"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Snapshot files live in a folder beside the bbolt file, one per snapshot,
// as hashicorp/raft's FileSnapshotStore keeps them: a snapshot streams to
// disk through a small buffer instead of being built in memory and copied
// into bbolt's pages, which for 100,000 jobs meant two transient copies of
// a 130 MB value.
const (
	snapshotSuffix = ".snap"
	// tmpSuffix marks a snapshot still being written. Recovery never reads
	// one: a file reaches its final name only once it is complete and
	// synced.
	tmpSuffix = ".tmp"
	// snapshotBufSize is the write and read buffer of a snapshot file:
	// large enough that the syscalls cost nothing next to the encoding.
	snapshotBufSize = 256 << 10
)

// crcTable is CRC-32C, computed in hardware on amd64 and arm64, so that
// checking a snapshot costs a fraction of reading it.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// SnapshotDir returns the folder that holds the snapshot files of the
// store at path.
func SnapshotDir(path string) string {
	return path + ".snapshots"
}

// snapshotName is the file name of the snapshot covering index; zero
// padding makes names sort in index order.
func snapshotName(index uint64) string {
	return fmt.Sprintf("%020d%s", index, snapshotSuffix)
}

// validSnapshotName reports whether name can only refer to a file inside
// the snapshot folder. The name comes from the bbolt file and is later
// opened and, once superseded, deleted: a damaged or foreign value must not
// reach anything else.
func validSnapshotName(name string) bool {
	return name != "" && name != "." && name != ".." &&
		!strings.ContainsAny(name, `/\`+"\x00") && filepath.IsLocal(name)
}

// snapshotFile is what bbolt records about the snapshot a file holds.
type snapshotFile struct {
	Index uint64
	Name  string
	Size  uint64
	CRC   uint32
}

// checksumWriter counts and checksums what goes through it to the file.
type checksumWriter struct {
	w    io.Writer
	size uint64
	crc  uint32
}

func (c *checksumWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.crc = crc32.Update(c.crc, crcTable, p[:n])
	c.size += uint64(n)
	return n, err
}

// testHookSnapshot, when set, is called at each step of writing a
// snapshot, so that the crash test can kill the process at that step.
var testHookSnapshot func(stage string)

func snapshotStage(stage string) {
	if h := testHookSnapshot; h != nil {
		h(stage)
	}
}

// writeSnapshotFile streams fsm's snapshot at index into a temporary file in
// dir, syncs it, renames it to its final name and syncs dir, so that the
// file is complete on disk before anything refers to it.
func writeSnapshotFile(dir string, index uint64, fsm FSM, noSync bool) (snapshotFile, error) {
	name := snapshotName(index)
	final := filepath.Join(dir, name)
	tmp := final + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return snapshotFile{}, fmt.Errorf("create snapshot file: %w", err)
	}
	written := false
	defer func() {
		if !written {
			f.Close()
			os.Remove(tmp)
		}
	}()
	cw := &checksumWriter{w: f}
	buf := bufio.NewWriterSize(cw, snapshotBufSize)
	if err := fsm.Snapshot(buf); err != nil {
		return snapshotFile{}, err
	}
	if err := buf.Flush(); err != nil {
		return snapshotFile{}, fmt.Errorf("write %s: %w", tmp, err)
	}
	if !noSync {
		if err := f.Sync(); err != nil {
			return snapshotFile{}, fmt.Errorf("sync %s: %w", tmp, err)
		}
	}
	written = true
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return snapshotFile{}, fmt.Errorf("close %s: %w", tmp, err)
	}
	snapshotStage("written")
	if err := os.Rename(tmp, final); err != nil {
		os.Remove(tmp)
		return snapshotFile{}, fmt.Errorf("rename snapshot file: %w", err)
	}
	if !noSync {
		// The rename is durable only once the folder is: without this a
		// crash could leave bbolt naming a file the folder does not hold.
		if err := syncDir(dir); err != nil {
			return snapshotFile{}, err
		}
	}
	return snapshotFile{Index: index, Name: name, Size: cw.size, CRC: cw.crc}, nil
}

// openSnapshotFile opens the snapshot file bbolt names and checks its size
// and checksum, streaming, before anything of it reaches the FSM: Restore
// only ever reads bytes this package wrote. The returned file is positioned
// at its start.
func openSnapshotFile(dir string, want snapshotFile) (*os.File, error) {
	path := filepath.Join(dir, want.Name)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("snapshot at index %d: %w", want.Index, err)
	}
	crc := crc32.New(crcTable)
	size, err := io.CopyBuffer(crc, f, make([]byte, snapshotBufSize))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("snapshot at index %d: read %s: %w", want.Index, path, err)
	}
	if uint64(size) != want.Size {
		f.Close()
		return nil, fmt.Errorf("snapshot at index %d: %s holds %d bytes, the state file recorded %d", want.Index, path, size, want.Size)
	}
	if got := crc.Sum32(); got != want.CRC {
		f.Close()
		return nil, fmt.Errorf("snapshot at index %d: %s has checksum %08x, the state file recorded %08x", want.Index, path, got, want.CRC)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("snapshot at index %d: rewind %s: %w", want.Index, path, err)
	}
	return f, nil
}

// ensureSnapshotDir creates the snapshot folder if it is missing, and makes
// its creation durable before any snapshot file relies on it.
func ensureSnapshotDir(dir string, noSync bool) error {
	err := os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		info, statErr := os.Stat(dir)
		if statErr != nil {
			return fmt.Errorf("snapshot folder: %w", statErr)
		}
		if !info.IsDir() {
			return fmt.Errorf("snapshot folder %s is not a folder", dir)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("create snapshot folder: %w", err)
	}
	if noSync {
		return nil
	}
	return syncDir(filepath.Dir(dir))
}

// removeStaleSnapshots deletes every snapshot file in dir but keep (""
// keeps none): files superseded by a later snapshot, and strays a crash
// left behind (a temporary file, or a complete one whose commit never
// happened). Other files are not this package's and stay. It is best
// effort: a file it fails to delete is harmless and tried again next time.
func removeStaleSnapshots(dir, keep string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("list snapshot folder: %w", err)
	}
	var errs []error
	for _, e := range entries {
		name := e.Name()
		if name == keep || !e.Type().IsRegular() ||
			!(strings.HasSuffix(name, snapshotSuffix) || strings.HasSuffix(name, snapshotSuffix+tmpSuffix)) {
			continue
		}
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync folder: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}
