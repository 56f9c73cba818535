package stepcred

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// maxKeyFile bounds what LoadKey reads: a key is a few dozen bytes, and a
// path pointing at something huge is a configuration mistake.
const maxKeyFile = 64 << 10

// KeyPath returns where the cluster key lives for a slurm.conf path: beside
// it, as slurm.key, like the key of Slurm's auth/slurm and cred/slurm
// plugins.
func KeyPath(slurmConf string) string {
	return filepath.Join(filepath.Dir(slurmConf), "slurm.key")
}

// WriteKey creates path holding KeySize new random bytes, mode 0600. It
// refuses to overwrite an existing file (an error wrapping fs.ErrExist): a
// new key invalidates every credential signed with the old one, on every
// node that still has it.
func WriteKey(path string) error {
	key := make([]byte, KeySize)
	rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("stepcred: creating key file: %w", err)
	}
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("stepcred: writing key file %s: %w", path, err)
	}
	return nil
}

// LoadKey reads the key at path. Like Slurm, which stops with "key file is
// insecure" when others may read slurm.key, it refuses a file that group or
// others have any permission on (Slurm checks others only), and it refuses
// a key shorter than KeySize. Errors name the path; those about the file's
// contents or mode wrap ErrBadKey.
func LoadKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("stepcred: %w", err)
	}
	defer f.Close()
	// Stat the open file, not the path, so the checks apply to what is read.
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stepcred: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("stepcred: key file '%s' is not a regular file (%v): %w", path, st.Mode().Type(), ErrBadKey)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("stepcred: key file is insecure: '%s' mode=0%o (want 0600 or stricter): %w", path, perm, ErrBadKey)
	}
	key, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("stepcred: reading key file '%s': %w", path, err)
	}
	switch {
	case len(key) < KeySize:
		return nil, fmt.Errorf("stepcred: key file '%s' holds %d bytes, need at least %d: %w", path, len(key), KeySize, ErrBadKey)
	case len(key) > maxKeyFile:
		return nil, fmt.Errorf("stepcred: key file '%s' is over %d bytes: %w", path, maxKeyFile, ErrBadKey)
	}
	return key, nil
}
