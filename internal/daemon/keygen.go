package daemon

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/jwtauth"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/usercred"
)

// KeygenOptions are `drover keygen`'s.
type KeygenOptions struct {
	Conf string
	// Add, Use and Retire are the steps of a key rotation; List shows
	// the keys. None of them: make the keys that are missing.
	Add          bool
	Use, Retire  string
	List         bool
	Out          io.Writer
	slurmUserUID *uint32
}

// Keygen makes the cluster key (slurm.key beside slurm.conf) and, with
// auth/jwt on, the JWT key, where they are missing, mode 0600 and owned by
// SlurmUser; an existing key is never overwritten. With Add, Use or
// Retire it takes one step of a rotation in slurm.jwks instead.
func Keygen(o KeygenOptions) error {
	path := ConfPath(o.Conf)
	sc, err := slurmconf.Load(path)
	if err != nil {
		return err
	}
	if id, err := usercred.LookupName(sc.SlurmUser); err == nil {
		o.slurmUserUID = &id.UID
	}
	switch {
	case o.List:
		return keyList(o, path)
	case o.Add || o.Use != "" || o.Retire != "":
		return keyRotate(o, path)
	}
	made := false
	write := func(what, file string) error {
		err := clusterkey.WriteKey(file)
		switch {
		case errors.Is(err, fs.ErrExist):
			fmt.Fprintf(o.Out, "%s %s exists, kept\n", what, file)
			return nil
		case err != nil:
			return err
		}
		made = true
		if err := o.own(file); err != nil {
			return err
		}
		fmt.Fprintf(o.Out, "wrote %s %s (mode 0600)\n", what, file)
		return nil
	}
	if _, err := os.Stat(clusterkey.JWKSPath(path)); err == nil {
		fmt.Fprintf(o.Out, "cluster key set %s exists, kept\n", clusterkey.JWKSPath(path))
	} else if err := write("cluster key", clusterkey.KeyPath(path)); err != nil {
		return err
	}
	types, _ := sc.Value("AuthAltTypes")
	params, _ := sc.Value("AuthAltParameters")
	if jc, err := jwtauth.ParseConfig(types, params, sc.StateSaveLocation); err != nil {
		return err
	} else if jc.Enabled {
		if err := os.MkdirAll(filepath.Dir(jc.KeyFile), 0o755); err != nil {
			return err
		}
		if err := write("auth/jwt key", jc.KeyFile); err != nil {
			return err
		}
	}
	if made {
		fmt.Fprintf(o.Out, "copy the cluster key to every controller, node and login host (mode 0600), as Slurm's slurm.key\n")
	}
	return nil
}

// own gives a key file to SlurmUser when root writes it, so that a
// controller running as SlurmUser reads it.
func (o KeygenOptions) own(file string) error {
	if os.Geteuid() != 0 || o.slurmUserUID == nil || *o.slurmUserUID == 0 {
		return nil
	}
	if err := os.Chown(file, int(*o.slurmUserUID), -1); err != nil {
		return fmt.Errorf("chown %s: %w", file, err)
	}
	return nil
}

// currentRing is the key set of a rotation, begun from slurm.key if
// there is none yet.
func currentRing(path string) (*clusterkey.Ring, error) {
	r, err := clusterkey.LoadFile(clusterkey.JWKSPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return clusterkey.LoadFile(clusterkey.KeyPath(path))
	}
	return r, err
}

func keyList(o KeygenOptions, path string) error {
	r, err := currentRing(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "%s\n", r.Path)
	for i, k := range r.Keys {
		use := "accepted"
		if i == 0 {
			use = "signs, accepted"
		}
		fmt.Fprintf(o.Out, "  %-24s %s\n", k.ID, use)
	}
	return nil
}

func keyRotate(o KeygenOptions, path string) error {
	r, err := currentRing(path)
	if err != nil {
		return err
	}
	keys := slices.Clone(r.Keys)
	index := func(kid string) (int, error) {
		for i, k := range keys {
			if k.ID == kid {
				return i, nil
			}
		}
		return -1, fmt.Errorf("no key %q in %s (drover keygen --list shows them)", kid, r.Path)
	}
	switch {
	case o.Add:
		secret := make([]byte, clusterkey.KeySize)
		rand.Read(secret)
		kid := "key-" + time.Now().UTC().Format("20060102-150405")
		keys = append(keys, clusterkey.Key{ID: kid, Secret: secret})
		fmt.Fprintf(o.Out, "added key %s: accepted, not signing yet; copy %s to every host and run scontrol reconfigure, then drover keygen --use %s\n",
			kid, clusterkey.JWKSPath(path), kid)
	case o.Use != "":
		i, err := index(o.Use)
		if err != nil {
			return err
		}
		keys[0], keys[i] = keys[i], keys[0]
		fmt.Fprintf(o.Out, "key %s now signs; copy %s to every host and run scontrol reconfigure; once the old credentials have expired, drover keygen --retire the old key\n",
			o.Use, clusterkey.JWKSPath(path))
	case o.Retire != "":
		i, err := index(o.Retire)
		if err != nil {
			return err
		}
		if i == 0 {
			return fmt.Errorf("key %s signs: make another key sign first (drover keygen --use KID)", o.Retire)
		}
		keys = slices.Delete(keys, i, i+1)
		fmt.Fprintf(o.Out, "retired key %s; copy %s to every host and run scontrol reconfigure\n", o.Retire, clusterkey.JWKSPath(path))
	}
	jwks := clusterkey.JWKSPath(path)
	if err := clusterkey.WriteJWKS(jwks, &clusterkey.Ring{Keys: keys}); err != nil {
		return err
	}
	return o.own(jwks)
}
