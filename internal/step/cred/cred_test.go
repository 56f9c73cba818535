package cred

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var (
	testKey  = bytes.Repeat([]byte("k3y!"), 8)
	otherKey = bytes.Repeat([]byte("0th3r"), 7)
	t0       = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)
)

// stepCred is a credential of job 42 step 0 on three nodes, expiring ten
// minutes after t0.
func stepCred() Cred {
	return Cred{
		JobID: 42, StepID: 0, UID: 1000, GID: 100, User: "alice",
		Nodes:    []string{"gpu01", "gpu02", "gpu07"},
		SrunAddr: "10.0.0.5:41237",
		Expires:  t0.Add(10 * time.Minute),
	}
}

func mustSign(t testing.TB, key []byte, c Cred) string {
	t.Helper()
	tok, err := Sign(key, c)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	return tok
}

// signRaw makes a token of any payload with a valid MAC, to reach the checks
// made after the signature.
func signRaw(key []byte, payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(mac(key, []byte(payload)))
}

func TestSignVerify(t *testing.T) {
	want := stepCred()
	got, err := Verify(testKey, mustSign(t, testKey, want), t0)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if len(got.Nonce) < 20 {
		t.Errorf("Sign filled nonce %q, want 128 random bits", got.Nonce)
	}
	want.Nonce = got.Nonce
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("verified credential (-want +got):\n%s", diff)
	}

	t.Run("nonce given is kept", func(t *testing.T) {
		c := stepCred()
		c.Nonce = "fixed"
		got, err := Verify(testKey, mustSign(t, testKey, c), t0)
		if err != nil || got.Nonce != "fixed" {
			t.Errorf("Verify = nonce %q, %v; want %q, nil", got.Nonce, err, "fixed")
		}
	})
	t.Run("nonces differ", func(t *testing.T) {
		a, _ := Verify(testKey, mustSign(t, testKey, stepCred()), t0)
		b, _ := Verify(testKey, mustSign(t, testKey, stepCred()), t0)
		if a.Nonce == b.Nonce {
			t.Errorf("two credentials share nonce %q", a.Nonce)
		}
	})
	t.Run("other time zone", func(t *testing.T) {
		c := stepCred()
		c.Expires = c.Expires.In(time.FixedZone("CET", 3600))
		got, err := Verify(testKey, mustSign(t, testKey, c), t0)
		if err != nil || !got.Expires.Equal(c.Expires) {
			t.Errorf("Verify = expires %v, %v; want %v", got.Expires, err, c.Expires)
		}
	})
}

func TestSignRefuses(t *testing.T) {
	tests := map[string]struct {
		key  []byte
		c    func(*Cred)
		want error
	}{
		"short key":       {key: testKey[:31], want: ErrBadKey},
		"no key":          {want: ErrBadKey},
		"never expires":   {key: testKey, c: func(c *Cred) { c.Expires = time.Time{} }},
		"oversized token": {key: testKey, c: func(c *Cred) { c.Nodes = []string{strings.Repeat("n", MaxTokenLen)} }},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := stepCred()
			if tt.c != nil {
				tt.c(&c)
			}
			tok, err := Sign(tt.key, c)
			if err == nil || (tt.want != nil && !errors.Is(err, tt.want)) {
				t.Errorf("Sign = %.20q, %v; want an error wrapping %v", tok, err, tt.want)
			}
		})
	}
}

func TestVerifyRefuses(t *testing.T) {
	good := mustSign(t, testKey, stepCred())
	body, sig, _ := strings.Cut(good, ".")
	tests := map[string]struct {
		key   []byte
		token string
		now   time.Time
		want  error
	}{
		"other key":          {key: otherKey, token: good, want: ErrBadCred},
		"signed by other":    {token: mustSign(t, otherKey, stepCred()), want: ErrBadCred},
		"empty":              {token: "", want: ErrBadCred},
		"no signature":       {token: body, want: ErrBadCred},
		"empty signature":    {token: body + ".", want: ErrBadCred},
		"signature only":     {token: "." + sig, want: ErrBadCred},
		"two dots":           {token: good + ".", want: ErrBadCred},
		"padded":             {token: good + "=", want: ErrBadCred},
		"std base64":         {token: strings.NewReplacer("-", "+", "_", "/").Replace(good) + "+", want: ErrBadCred},
		"swapped halves":     {token: sig + "." + body, want: ErrBadCred},
		"too long":           {token: strings.Repeat("A", MaxTokenLen) + "." + sig, want: ErrBadCred},
		"short key":          {key: testKey[:16], token: good, want: ErrBadKey},
		"expired":            {token: good, now: t0.Add(10*time.Minute + time.Nanosecond), want: ErrExpired},
		"expires right now":  {token: good, now: t0.Add(10 * time.Minute), want: ErrExpired},
		"other format":       {token: signRaw(testKey, `{"format":"jwt","nonce":"n","expires":"2030-01-01T00:00:00Z"}`), want: ErrBadCred},
		"unknown field":      {token: signRaw(testKey, `{"format":"drover-step-cred-v1","nonce":"n","expires":"2030-01-01T00:00:00Z","admin":true}`), want: ErrBadCred},
		"trailing data":      {token: signRaw(testKey, `{"format":"drover-step-cred-v1","nonce":"n","expires":"2030-01-01T00:00:00Z"}{}`), want: ErrBadCred},
		"no nonce":           {token: signRaw(testKey, `{"format":"drover-step-cred-v1","expires":"2030-01-01T00:00:00Z"}`), want: ErrBadCred},
		"no expiry":          {token: signRaw(testKey, `{"format":"drover-step-cred-v1","nonce":"n"}`), want: ErrBadCred},
		"not json":           {token: signRaw(testKey, `job=42`), want: ErrBadCred},
		"signed empty":       {token: signRaw(testKey, ``), want: ErrBadCred},
		"minimal still good": {token: signRaw(testKey, `{"format":"drover-step-cred-v1","nonce":"n","expires":"2030-01-01T00:00:00Z"}`)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if tt.key == nil {
				tt.key = testKey
			}
			if tt.now.IsZero() {
				tt.now = t0
			}
			_, err := Verify(tt.key, tt.token, tt.now)
			if !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
				t.Errorf("Verify = %v, want %v", err, tt.want)
			}
		})
	}

	t.Run("expired credential is returned", func(t *testing.T) {
		c, err := Verify(testKey, good, t0.Add(time.Hour))
		if !errors.Is(err, ErrExpired) || c.JobID != 42 {
			t.Errorf("Verify = job %d, %v; want job 42, ErrExpired", c.JobID, err)
		}
		if !strings.Contains(err.Error(), "Job credential expired") {
			t.Errorf("error %q lacks Slurm's wording", err)
		}
	})
}

// TestVerifyEveryByte flips every character of a token to every other
// character of the alphabet and more: none may verify. Strict decoding
// matters here: the last character of each part carries unused low bits.
func TestVerifyEveryByte(t *testing.T) {
	good := mustSign(t, testKey, stepCred())
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ \x00"
	tried := 0
	for i := range len(good) {
		for _, c := range []byte(alphabet) {
			if c == good[i] {
				continue
			}
			bad := []byte(good)
			bad[i] = c
			if _, err := Verify(testKey, string(bad), t0); !errors.Is(err, ErrBadCred) {
				t.Fatalf("token with byte %d set to %q: Verify = %v, want ErrBadCred", i, c, err)
			}
			tried++
		}
	}
	for n := range len(good) {
		if _, err := Verify(testKey, good[:n], t0); !errors.Is(err, ErrBadCred) {
			t.Fatalf("token cut to %d of %d bytes: Verify = %v, want ErrBadCred", n, len(good), err)
		}
	}
	t.Logf("%d altered and %d truncated tokens refused", tried, len(good))
}
