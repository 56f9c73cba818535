package msgauth

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/internal/clusterkey"
)

var (
	keyA = bytes.Repeat([]byte{0xa}, 32)
	keyB = bytes.Repeat([]byte{0xb}, 32)
	t0   = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
)

func clock(t *time.Time) func() time.Time { return func() time.Time { return *t } }

func TestSignVerify(t *testing.T) {
	now := t0
	signer := &Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyA)), Issuer: Controller, Now: clock(&now)}
	body := []byte(`{"job_id":1,"uid":1000}`)
	tok, err := signer.Sign(Node("n1"), "POST", "/drover/v1/launch", body)
	if err != nil {
		t.Fatal(err)
	}
	v := func() *Verifier {
		return &Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyA)), Audience: Node("n1"), Now: clock(&now)}
	}
	good := v()
	c, err := good.Verify(tok, "POST", "/drover/v1/launch", body)
	if err != nil {
		t.Fatal(err)
	}
	if c.Issuer() != Controller || c.Kind != KindDaemon || c.UID != nil {
		t.Errorf("claims %+v", c)
	}

	// The same token again: replayed.
	if _, err := good.Verify(tok, "POST", "/drover/v1/launch", body); !errors.Is(err, ErrReplayed) {
		t.Errorf("replay: %v", err)
	}
	tests := map[string]struct {
		verifier func() *Verifier
		token    string
		method   string
		uri      string
		body     []byte
		later    time.Duration
		want     error
		says     string
	}{
		"other node":        {verifier: func() *Verifier { x := v(); x.Audience = Node("n2"); return x }, want: ErrInvalid, says: "not for slurmd:n2"},
		"controller":        {verifier: func() *Verifier { x := v(); x.Audience = Controller; return x }, want: ErrInvalid, says: "not for slurmctld"},
		"other key":         {verifier: func() *Verifier { x := v(); x.Keys = clusterkey.NewHolder(clusterkey.FromSecret(keyB)); return x }, want: ErrInvalid, says: "signature"},
		"other path":        {uri: "/drover/v1/signal", want: ErrInvalid, says: "used for"},
		"other method":      {method: "PUT", want: ErrInvalid, says: "used for"},
		"other body":        {body: []byte(`{"job_id":1,"uid":0}`), want: ErrInvalid, says: "body"},
		"expired":           {later: 66 * time.Second, want: ErrExpired},
		"before a restart":  {verifier: func() *Verifier { x := v(); x.Since = t0.Add(10 * time.Second); return x }, want: ErrExpired, says: "before this daemon started"},
		"long-lived":        {verifier: func() *Verifier { x := v(); x.MaxTTL = 10 * time.Second; return x }, want: ErrInvalid, says: "lives"},
		"none":              {token: "", want: ErrInvalid, says: "no credential"},
		"garbage":           {token: "a.b.c", want: ErrInvalid},
		"huge":              {token: strings.Repeat("a", MaxTokenLen+1), want: ErrInvalid},
		"alg none":          {token: algNone(t, tok), want: ErrInvalid},
		"HS512 same key":    {token: resign(t, tok, jwt.SigningMethodHS512, keyA), want: ErrInvalid},
		"no jti":            {token: resignClaims(t, tok, func(m map[string]any) { delete(m, "jti") }), want: ErrInvalid, says: "jti"},
		"no exp":            {token: resignClaims(t, tok, func(m map[string]any) { delete(m, "exp") }), want: ErrInvalid},
		"user without uid":  {token: resignClaims(t, tok, func(m map[string]any) { m["knd"] = KindUser }), want: ErrInvalid, says: "without uid"},
		"unknown kind":      {token: resignClaims(t, tok, func(m map[string]any) { m["knd"] = "root" }), want: ErrInvalid, says: "kind"},
		"issued in future":  {later: -time.Minute, want: ErrInvalid},
		"within clock skew": {later: -3 * time.Second},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			now = t0.Add(tt.later)
			defer func() { now = t0 }()
			verifier := v()
			if tt.verifier != nil {
				verifier = tt.verifier()
			}
			token, method, uri, b := tok, "POST", "/drover/v1/launch", body
			if tt.token != "" || name == "none" {
				token = tt.token
			}
			if tt.method != "" {
				method = tt.method
			}
			if tt.uri != "" {
				uri = tt.uri
			}
			if tt.body != nil {
				b = tt.body
			}
			_, err := verifier.Verify(token, method, uri, b)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("Verify = %v, want %v saying %q", err, tt.want, tt.says)
			}
		})
	}
}

func TestRotation(t *testing.T) {
	old := &clusterkey.Ring{Keys: []clusterkey.Key{{ID: "old", Secret: keyA}}}
	both := &clusterkey.Ring{Keys: []clusterkey.Key{{ID: "new", Secret: keyB}, {ID: "old", Secret: keyA}}}
	sOld := &Signer{Keys: clusterkey.NewHolder(old), Issuer: Node("n1")}
	sNew := &Signer{Keys: clusterkey.NewHolder(both), Issuer: Node("n1")}
	vBoth := &Verifier{Keys: clusterkey.NewHolder(both), Audience: Controller}
	vOld := &Verifier{Keys: clusterkey.NewHolder(old), Audience: Controller}
	for name, s := range map[string]*Signer{"old": sOld, "new": sNew} {
		tok, _ := s.Sign(Controller, "POST", "/x", nil)
		if _, err := vBoth.Verify(tok, "POST", "/x", nil); err != nil {
			t.Errorf("%s key during the changeover: %v", name, err)
		}
	}
	tok, _ := sNew.Sign(Controller, "POST", "/x", nil)
	if _, err := vOld.Verify(tok, "POST", "/x", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("a host without the new key took its token: %v", err)
	}
	// A lone slurm.key under a derived kid verifies a set's token of the
	// same secret.
	lone := &Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyB)), Audience: Controller}
	tok, _ = sNew.Sign(Controller, "POST", "/y", nil)
	if _, err := lone.Verify(tok, "POST", "/y", nil); err != nil {
		t.Errorf("same secret, other kid: %v", err)
	}
}

func TestUserToken(t *testing.T) {
	s := &Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyA)), Issuer: Host("login1")}
	body := []byte(`{"script":"#!/bin/sh"}`)
	tok, err := s.SignUser(UserID{Name: "alice", UID: 1000, GID: 100}, Controller, "POST", "/slurm/v0.0.44/job/submit?x=1", BodyHash(body))
	if err != nil {
		t.Fatal(err)
	}
	v := &Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyA)), Audience: Controller}
	r := httptest.NewRequest("POST", "/slurm/v0.0.44/job/submit?x=1", bytes.NewReader(body))
	r.Header.Set(Header, tok)
	c, err := v.VerifyRequest(r, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != KindUser || *c.UID != 1000 || *c.GID != 100 || c.User != "alice" || c.Issuer() != "sack:login1" {
		t.Errorf("claims %+v", c)
	}
	again := make([]byte, len(body))
	if n, _ := r.Body.Read(again); n != len(body) {
		t.Error("the body was not put back")
	}
}

// algNone rewrites a token as an unsigned one with the same claims.
func algNone(t *testing.T, tok string) string {
	parts := strings.Split(tok, ".")
	head := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	return head + "." + parts[1] + "."
}

func resign(t *testing.T, tok string, m jwt.SigningMethod, key []byte) string {
	return resignWith(t, tok, m, key, nil)
}

func resignClaims(t *testing.T, tok string, edit func(map[string]any)) string {
	return resignWith(t, tok, jwt.SigningMethodHS256, keyA, edit)
}

func resignWith(t *testing.T, tok string, m jwt.SigningMethod, key []byte, edit func(map[string]any)) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	raw, _ := base64.RawURLEncoding.DecodeString(parts[1])
	claims := map[string]any{}
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(claims)
	}
	out, err := jwt.NewWithClaims(m, jwt.MapClaims(claims)).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestReplayForgets(t *testing.T) {
	r := NewReplay()
	if !r.Use("a", t0.Add(time.Minute), t0) || r.Use("a", t0.Add(time.Minute), t0.Add(time.Second)) {
		t.Fatal("a nonce was not refused the second time")
	}
	r.Use("b", t0.Add(2*time.Minute), t0.Add(2*time.Second))
	r.Use("c", t0.Add(3*time.Minute), t0.Add(61*time.Second+time.Millisecond))
	if r.Len() != 2 {
		t.Errorf("%d nonces kept, want the 2 unexpired", r.Len())
	}
}

// FuzzVerify: no input makes Verify accept a token it did not sign, or
// panic.
func FuzzVerify(f *testing.F) {
	s := &Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyA)), Issuer: Controller, Now: func() time.Time { return t0 }}
	tok, _ := s.Sign(Controller, "POST", "/p", []byte("b"))
	f.Add(tok, "POST", "/p", []byte("b"))
	f.Add(algNone(nil, tok), "POST", "/p", []byte("b"))
	f.Add("e30.e30.", "GET", "/", []byte{})
	now := t0
	ss := grant(f, Host("login1"), &now)
	stok, _ := ss.Sign(Controller, "POST", "/p", BodyHash([]byte("b")), t0)
	f.Add(stok, "POST", "/p", []byte("b"))
	f.Fuzz(func(t *testing.T, token, method, uri string, body []byte) {
		v := &Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyB)), Audience: Controller, Now: func() time.Time { return t0 }}
		if c, err := v.Verify(token, method, uri, body); err == nil {
			t.Fatalf("accepted a token not signed with the key: %+v", c)
		}
		good := &Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyA)), Audience: Controller, Now: func() time.Time { return t0 }}
		if c, err := good.Verify(token, method, uri, body); err == nil && (c.Req != Request(method, uri) || c.BodyHash != BodyHash(body)) {
			t.Fatalf("accepted a token for another request: %+v", c)
		}
	})
}
