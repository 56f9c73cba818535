package jwtauth

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var key = []byte("0123456789abcdef0123456789abcdef")

func TestIssueVerify(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	tok, err := Issue(key, "alice", time.Hour, now)
	if err != nil {
		t.Fatal(err)
	}
	if u, err := Verify(key, tok, now.Add(time.Minute)); err != nil || u != "alice" {
		t.Errorf("Verify = %q, %v", u, err)
	}
	if _, err := Verify(key, tok, now.Add(2*time.Hour)); !errors.Is(err, ErrExpired) {
		t.Errorf("expired: %v", err)
	}
	if _, err := Verify([]byte("another key another key another k"), tok, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("wrong key: %v", err)
	}
	// A forged payload with the old signature.
	parts := strings.Split(tok, ".")
	parts[1] = base64.RawURLEncoding.EncodeToString([]byte(`{"exp":1900000000,"iat":1800000000,"sun":"root"}`))
	if _, err := Verify(key, strings.Join(parts, "."), now); !errors.Is(err, ErrInvalid) {
		t.Errorf("forged: %v", err)
	}
	// alg none, and another HMAC.
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"exp": now.Add(time.Hour).Unix(), "sun": "root"}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if _, err := Verify(key, none, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("alg none: %v", err)
	}
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.MapClaims{"exp": now.Add(time.Hour).Unix(), "sun": "root"}).SignedString(key)
	if _, err := Verify(key, hs512, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("HS512: %v", err)
	}
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sun": "root"}).SignedString(key)
	if _, err := Verify(key, noExp, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("no expiry: %v", err)
	}
	noUser, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"exp": now.Add(time.Hour).Unix()}).SignedString(key)
	if _, err := Verify(key, noUser, now); !errors.Is(err, ErrInvalid) {
		t.Errorf("no user: %v", err)
	}
	legacy, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"exp": now.Add(time.Hour).Unix(), "username": "bob"}).SignedString(key)
	if u, err := Verify(key, legacy, now); err != nil || u != "bob" {
		t.Errorf("username claim: %q, %v", u, err)
	}
	for _, junk := range []string{"", "a.b", "a.b.c", "...."} {
		if _, err := Verify(key, junk, now); !errors.Is(err, ErrInvalid) {
			t.Errorf("Verify(%q): %v", junk, err)
		}
	}
}

func TestParseConfig(t *testing.T) {
	c, err := ParseConfig("auth/jwt", "jwt_key=/etc/slurm/jwt.key,max_token_lifespan=600,disable_token_creation", "/var/spool/slurmctld")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Enabled || c.KeyFile != "/etc/slurm/jwt.key" || c.MaxLifespan != 10*time.Minute || !c.NoCreation {
		t.Errorf("ParseConfig = %+v", c)
	}
	d, err := ParseConfig("", "", "/state")
	if err != nil || d.Enabled || d.KeyFile != "/state/jwt_hs256.key" {
		t.Errorf("defaults = %+v, %v", d, err)
	}
	for _, bad := range []string{"jwt_key=", "max_token_lifespan=x", "max_token_lifespan=0"} {
		if _, err := ParseConfig("auth/jwt", bad, "/s"); err == nil {
			t.Errorf("ParseConfig(%q) succeeded", bad)
		}
	}
}

func FuzzVerify(f *testing.F) {
	tok, _ := Issue(key, "alice", time.Hour, time.Unix(1_800_000_000, 0))
	f.Add(tok)
	f.Add("eyJhbGciOiJub25lIn0.e30.")
	f.Fuzz(func(t *testing.T, s string) {
		u, err := Verify(key, s, time.Unix(1_800_000_100, 0))
		if err == nil && u == "" {
			t.Fatal("accepted without a user")
		}
	})
}

func FuzzParseConfig(f *testing.F) {
	f.Add("auth/jwt", "jwt_key=/k,max_token_lifespan=60")
	f.Fuzz(func(t *testing.T, types, params string) {
		c, err := ParseConfig(types, params, "/s")
		if err == nil && c.KeyFile == "" {
			t.Fatal("no key file")
		}
	})
}
