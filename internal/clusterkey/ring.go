package clusterkey

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"
)

// Key is one secret of a ring.
type Key struct {
	// ID names the key in a signed token's header ("kid"): slurm.jwks
	// gives it; for a lone slurm.key it is derived from the secret.
	ID     string
	Secret []byte
}

// Ring is the keys a daemon accepts: the first signs, every one verifies.
// Two keys are accepted while a rotation goes on (docs/SECURITY.md).
type Ring struct {
	// Path is the file the ring was read from.
	Path string
	Keys []Key
}

// Signing is the key new credentials are signed with.
func (r *Ring) Signing() Key { return r.Keys[0] }

// Lookup returns the key a token's "kid" names.
func (r *Ring) Lookup(kid string) (Key, bool) {
	for _, k := range r.Keys {
		if k.ID == kid {
			return k, true
		}
	}
	return Key{}, false
}

// Secrets lists every accepted secret, the signing one first.
func (r *Ring) Secrets() [][]byte {
	out := make([][]byte, len(r.Keys))
	for i, k := range r.Keys {
		out[i] = k.Secret
	}
	return out
}

// KeyID derives a lone key's identifier from its secret: a MAC, so that
// the identifier tells nothing about the secret.
func KeyID(secret []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("drover cluster key id"))
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// FromSecret is a ring of one key.
func FromSecret(secret []byte) *Ring {
	return &Ring{Keys: []Key{{ID: KeyID(secret), Secret: slices.Clone(secret)}}}
}

// ErrNoKey is wrapped when neither slurm.jwks nor slurm.key exists.
var ErrNoKey = errors.New("no cluster key")

// Load reads the cluster key for a slurm.conf path: slurm.jwks beside it
// if there is one, else slurm.key beside it; override, when given (the
// key-file setting), names either kind of file instead (".jwks" is a set).
// A missing, short, unreadable or insecure key is an error that says the
// fix.
func Load(slurmConf, override string, owners ...uint32) (*Ring, error) {
	if override != "" {
		return LoadFile(override, owners...)
	}
	r, err := LoadFile(JWKSPath(slurmConf), owners...)
	if !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	r, err = LoadFile(KeyPath(slurmConf), owners...)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: neither %s nor %s exists (make one with `drover keygen --conf %s` and copy it, mode 0600, to every controller, node and login host): %w",
			ErrNoKey, KeyPath(slurmConf), JWKSPath(slurmConf), slurmConf, err)
	}
	return r, err
}

// LoadFile reads one key file: a JSON Web Key Set when its name ends in
// ".jwks", else a raw key.
func LoadFile(path string, owners ...uint32) (*Ring, error) {
	data, err := readSecure(path, owners)
	if err != nil {
		return nil, err
	}
	if strings.HasSuffix(path, ".jwks") {
		r, err := ParseJWKS(data)
		if err != nil {
			return nil, fmt.Errorf("key set '%s': %w", path, err)
		}
		r.Path = path
		return r, nil
	}
	if err := checkSecret(path, "key file", data); err != nil {
		return nil, err
	}
	r := FromSecret(data)
	r.Path = path
	return r, nil
}

// jwk is one key of a JSON Web Key Set (RFC 7517) as auth/slurm's
// slurm.jwks holds it: a symmetric ("oct") HS256 key, its bytes base64url
// in "k"; "use": "default" marks the one that signs; "exp", a Unix time,
// retires a key.
type jwk struct {
	Kty string `json:"kty"`
	Alg string `json:"alg,omitempty"`
	Kid string `json:"kid"`
	K   string `json:"k"`
	Use string `json:"use,omitempty"`
	Exp int64  `json:"exp,omitempty"`
}

type jwks struct {
	Keys []jwk `json:"keys"`
}

// now is the clock key expiry is read against; tests replace it.
var now = time.Now

// ParseJWKS reads a key set. Every key must be a symmetric HS256 key of at
// least KeySize bytes with a unique "kid"; keys past their "exp" are left
// out; exactly one key left must be marked "use": "default" unless only
// one is left, which then signs.
func ParseJWKS(data []byte) (*Ring, error) {
	var set jwks
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("not a JSON Web Key Set: %v: %w", err, ErrBadKey)
	}
	r := &Ring{}
	signing := -1
	seen := map[string]bool{}
	for i, k := range set.Keys {
		if k.Kty != "oct" || (k.Alg != "" && k.Alg != "HS256") {
			return nil, fmt.Errorf("key %d (%q): kty %q alg %q, want an \"oct\" HS256 key: %w", i, k.Kid, k.Kty, k.Alg, ErrBadKey)
		}
		if k.Kid == "" || seen[k.Kid] {
			return nil, fmt.Errorf("key %d: missing or repeated kid %q: %w", i, k.Kid, ErrBadKey)
		}
		seen[k.Kid] = true
		secret, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(k.K, "="))
		if err != nil {
			return nil, fmt.Errorf("key %q: \"k\" is not base64url: %w", k.Kid, ErrBadKey)
		}
		if len(secret) < KeySize {
			return nil, fmt.Errorf("key %q holds %d bytes, need at least %d: %w", k.Kid, len(secret), KeySize, ErrBadKey)
		}
		if k.Exp != 0 && !now().Before(time.Unix(k.Exp, 0)) {
			continue
		}
		if k.Use == "default" {
			if signing >= 0 {
				return nil, fmt.Errorf("keys %q and %q are both \"use\": \"default\": %w", r.Keys[signing].ID, k.Kid, ErrBadKey)
			}
			signing = len(r.Keys)
		}
		r.Keys = append(r.Keys, Key{ID: k.Kid, Secret: secret})
	}
	switch {
	case len(r.Keys) == 0:
		return nil, fmt.Errorf("no usable key: %w", ErrBadKey)
	case signing < 0 && len(r.Keys) > 1:
		return nil, fmt.Errorf("%d keys and none is \"use\": \"default\": %w", len(r.Keys), ErrBadKey)
	case signing > 0:
		r.Keys[0], r.Keys[signing] = r.Keys[signing], r.Keys[0]
	}
	return r, nil
}

// MarshalJWKS writes a ring as a key set, its signing key marked
// "use": "default".
func MarshalJWKS(r *Ring) ([]byte, error) {
	var set jwks
	for i, k := range r.Keys {
		j := jwk{Kty: "oct", Alg: "HS256", Kid: k.ID, K: base64.RawURLEncoding.EncodeToString(k.Secret)}
		if i == 0 {
			j.Use = "default"
		}
		set.Keys = append(set.Keys, j)
	}
	return json.MarshalIndent(set, "", "  ")
}

// WriteJWKS replaces path with r's key set, mode 0600, atomically (a
// daemon reading it meanwhile sees the old set or the new one).
func WriteJWKS(path string, r *Ring) error {
	data, err := MarshalJWKS(r)
	if err != nil {
		return err
	}
	tmp := path + ".new"
	os.Remove(tmp)
	if err := writeNew(tmp, append(data, '\n')); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("replace %s: %w", path, err)
	}
	return nil
}

// Holder holds the ring a daemon uses now, replaced whole when the key
// files are read again (scontrol reconfigure during a rotation).
type Holder struct{ p atomic.Pointer[Ring] }

// NewHolder holds r.
func NewHolder(r *Ring) *Holder {
	h := &Holder{}
	h.p.Store(r)
	return h
}

// Ring returns the current ring (nil when none was ever stored).
func (h *Holder) Ring() *Ring {
	if h == nil {
		return nil
	}
	return h.p.Load()
}

// Store replaces the ring.
func (h *Holder) Store(r *Ring) { h.p.Store(r) }
