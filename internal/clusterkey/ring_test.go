package clusterkey

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var testKey = bytes.Repeat([]byte("k3y!"), 8)

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func TestParseJWKS(t *testing.T) {
	k1, k2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 64)
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return time.Unix(1000, 0) }
	tests := map[string]struct {
		json    string
		signing string
		kids    []string
		err     string
	}{
		"one key signs without a mark": {json: fmt.Sprintf(`{"keys":[{"kty":"oct","kid":"a","k":%q}]}`, b64(k1)), signing: "a", kids: []string{"a"}},
		"default first": {json: fmt.Sprintf(`{"keys":[{"kty":"oct","alg":"HS256","kid":"old","k":%q},{"kty":"oct","kid":"new","k":%q,"use":"default"}]}`, b64(k1), b64(k2)),
			signing: "new", kids: []string{"new", "old"}},
		"expired key left out": {json: fmt.Sprintf(`{"keys":[{"kty":"oct","kid":"old","k":%q,"exp":999},{"kty":"oct","kid":"new","k":%q,"use":"default"}]}`, b64(k1), b64(k2)),
			signing: "new", kids: []string{"new"}},
		"two unmarked": {json: fmt.Sprintf(`{"keys":[{"kty":"oct","kid":"a","k":%q},{"kty":"oct","kid":"b","k":%q}]}`, b64(k1), b64(k2)), err: "none is"},
		"two defaults": {json: fmt.Sprintf(`{"keys":[{"kty":"oct","kid":"a","k":%q,"use":"default"},{"kty":"oct","kid":"b","k":%q,"use":"default"}]}`, b64(k1), b64(k2)), err: "both"},
		"short":        {json: fmt.Sprintf(`{"keys":[{"kty":"oct","kid":"a","k":%q}]}`, b64(k1[:31])), err: "31 bytes"},
		"rsa":          {json: `{"keys":[{"kty":"RSA","kid":"a","k":"AAAA"}]}`, err: "kty"},
		"other alg":    {json: fmt.Sprintf(`{"keys":[{"kty":"oct","alg":"none","kid":"a","k":%q}]}`, b64(k1)), err: "alg"},
		"repeated kid": {json: fmt.Sprintf(`{"keys":[{"kty":"oct","kid":"a","k":%q},{"kty":"oct","kid":"a","k":%q}]}`, b64(k1), b64(k2)), err: "repeated"},
		"not base64":   {json: `{"keys":[{"kty":"oct","kid":"a","k":"!!!"}]}`, err: "base64url"},
		"empty":        {json: `{"keys":[]}`, err: "no usable key"},
		"all expired":  {json: fmt.Sprintf(`{"keys":[{"kty":"oct","kid":"a","k":%q,"exp":5}]}`, b64(k1)), err: "no usable key"},
		"garbage":      {json: `{`, err: "not a JSON Web Key Set"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			r, err := ParseJWKS([]byte(tt.json))
			if tt.err != "" {
				if !errors.Is(err, ErrBadKey) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseJWKS = %v, want ErrBadKey saying %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var kids []string
			for _, k := range r.Keys {
				kids = append(kids, k.ID)
			}
			if r.Signing().ID != tt.signing || strings.Join(kids, ",") != strings.Join(tt.kids, ",") {
				t.Errorf("signing %s, keys %v; want %s, %v", r.Signing().ID, kids, tt.signing, tt.kids)
			}
		})
	}
}

func TestJWKSRoundTrip(t *testing.T) {
	dir := t.TempDir()
	r := &Ring{Keys: []Key{{ID: "new", Secret: bytes.Repeat([]byte{9}, 32)}, {ID: "old", Secret: testKey}}}
	path := filepath.Join(dir, "slurm.jwks")
	if err := WriteJWKS(path, r); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	got, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Keys) != 2 || got.Signing().ID != "new" || !bytes.Equal(got.Keys[1].Secret, testKey) {
		t.Errorf("read back %+v", got.Keys)
	}
	// Rewriting in place works (the rename replaces the file).
	r.Keys = r.Keys[:1]
	if err := WriteJWKS(path, r); err != nil {
		t.Fatal(err)
	}
	if got, _ := LoadFile(path); len(got.Keys) != 1 {
		t.Errorf("after rewrite: %d keys", len(got.Keys))
	}
}

func TestLoadPrefersJWKS(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	_, err := Load(conf, "")
	if !errors.Is(err, ErrNoKey) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "drover keygen") {
		t.Fatalf("no key: %v", err)
	}
	if err := WriteKey(KeyPath(conf)); err != nil {
		t.Fatal(err)
	}
	r, err := Load(conf, "")
	if err != nil || r.Path != KeyPath(conf) || len(r.Keys) != 1 || r.Keys[0].ID != KeyID(r.Keys[0].Secret) {
		t.Fatalf("slurm.key: %+v %v", r, err)
	}
	if err := WriteJWKS(JWKSPath(conf), &Ring{Keys: []Key{{ID: "x", Secret: testKey}}}); err != nil {
		t.Fatal(err)
	}
	if r, err := Load(conf, ""); err != nil || r.Signing().ID != "x" {
		t.Fatalf("slurm.jwks: %+v %v", r, err)
	}
	if r, err := Load(conf, KeyPath(conf)); err != nil || r.Path != KeyPath(conf) {
		t.Fatalf("override: %+v %v", r, err)
	}
	// An insecure set is refused, not passed over for slurm.key.
	os.Chmod(JWKSPath(conf), 0o644)
	if _, err := Load(conf, ""); !errors.Is(err, ErrBadKey) {
		t.Fatalf("world-readable slurm.jwks: %v", err)
	}
}

func FuzzParseJWKS(f *testing.F) {
	f.Add([]byte(fmt.Sprintf(`{"keys":[{"kty":"oct","kid":"a","k":%q,"use":"default"}]}`, b64(testKey))))
	f.Add([]byte(`{"keys":[{"kty":"oct","kid":"a","k":"","exp":1}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseJWKS(data)
		if err != nil {
			if !errors.Is(err, ErrBadKey) {
				t.Fatalf("error %v does not wrap ErrBadKey", err)
			}
			return
		}
		if len(r.Keys) == 0 {
			t.Fatal("a ring without keys")
		}
		for _, k := range r.Keys {
			if len(k.Secret) < KeySize || k.ID == "" {
				t.Fatalf("key %q of %d bytes accepted", k.ID, len(k.Secret))
			}
		}
		out, err := MarshalJWKS(r)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseJWKS(out)
		if err != nil || back.Signing().ID != r.Signing().ID || len(back.Keys) != len(r.Keys) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
