// Package clusterkey reads and writes the cluster key: the secret that the
// controller, the node daemons and the login hosts' credential services
// share, and that every message between them is signed with, as Slurm's
// auth/slurm shares slurm.key (or munge its munge.key). A key is one file,
// slurm.key beside slurm.conf; during a rotation it is slurm.jwks there, a
// JSON Web Key Set holding the old and the new keys, one of them marked
// for signing, as auth/slurm reads it.
package clusterkey

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// maxKeyFile bounds what a load reads: a key is a few dozen bytes (Slurm's
// documentation makes 1024), and a path pointing at something huge is a
// configuration mistake.
const maxKeyFile = 64 << 10

// KeySize is the length of a key WriteKey makes, and the least a load
// accepts: HMAC-SHA256's full strength.
const KeySize = 32

// ErrBadKey is wrapped by every error about a key file's contents, mode or
// owner.
var ErrBadKey = errors.New("unusable cluster key")

// KeyPath returns where the cluster key lives for a slurm.conf path: beside
// it, as slurm.key, like the key of Slurm's auth/slurm and cred/slurm
// plugins.
func KeyPath(slurmConf string) string {
	return filepath.Join(filepath.Dir(slurmConf), "slurm.key")
}

// JWKSPath returns where the key set of a rotation lives for a slurm.conf
// path: slurm.jwks beside it, which wins over slurm.key when present.
func JWKSPath(slurmConf string) string {
	return filepath.Join(filepath.Dir(slurmConf), "slurm.jwks")
}

// WriteKey creates path holding KeySize new random bytes, mode 0600. It
// refuses to overwrite an existing file (an error wrapping fs.ErrExist): a
// new key invalidates every credential signed with the old one, on every
// host that still has it.
func WriteKey(path string) error {
	key := make([]byte, KeySize)
	rand.Read(key)
	return writeNew(path, key)
}

// writeNew creates path with data, mode 0600, synced; never over an
// existing file.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("creating key file: %w", err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("writing key file %s: %w", path, err)
	}
	return nil
}

// readSecure reads a key file. Like Slurm, which stops with "key file is
// insecure" when others may read slurm.key, it refuses a file that group
// or others have any permission on (Slurm checks others only), and one
// owned by a user other than root, the process's own or one of owners
// (SlurmUser), who could have read it. Errors name the path and say the
// fix; those about the file's mode or owner wrap ErrBadKey.
func readSecure(path string, owners []uint32) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Stat the open file, not the path, so the checks apply to what is read.
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("key file '%s' is not a regular file (%v): %w", path, st.Mode().Type(), ErrBadKey)
	}
	if perm := st.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("key file is insecure: '%s' mode=0%o (run chmod 600 '%s'): %w", path, perm, path, ErrBadKey)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid != 0 && int(sys.Uid) != os.Geteuid() && !slices.Contains(owners, sys.Uid) {
		return nil, fmt.Errorf("key file is insecure: '%s' is owned by uid %d, not root, SlurmUser or this daemon's uid %d (chown it): %w", path, sys.Uid, os.Geteuid(), ErrBadKey)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("reading key file '%s': %w", path, err)
	}
	if len(data) > maxKeyFile {
		return nil, fmt.Errorf("key file '%s' is over %d bytes: %w", path, maxKeyFile, ErrBadKey)
	}
	return data, nil
}

// checkSecret refuses a secret too short to sign with.
func checkSecret(path, what string, secret []byte) error {
	if len(secret) < KeySize {
		return fmt.Errorf("%s '%s' holds %d bytes, need at least %d (make a new one with `drover keygen`): %w", what, path, len(secret), KeySize, ErrBadKey)
	}
	return nil
}
