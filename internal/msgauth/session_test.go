package msgauth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/internal/clusterkey"
)

func grant(t testing.TB, issuer string, now *time.Time) Session {
	t.Helper()
	s := &Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyA)), Issuer: issuer, Now: clock(now)}
	ss, err := s.GrantSession(UserID{Name: "alice", UID: 1000, GID: 100})
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// encodeDesc is a session description as GrantSession encodes it.
func encodeDesc(t *testing.T, d SessionDesc) string {
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(raw)
}

// TestSessionToken: a token the program signs with its session's key
// passes as a user token of the session's user and host, bound to its
// request, once.
func TestSessionToken(t *testing.T) {
	now := t0
	ss := grant(t, Host("login1"), &now)
	body := []byte(`{"job":{}}`)
	tok, err := ss.Sign(Controller, "POST", "/slurm/v0.0.44/job/submit", BodyHash(body), now)
	if err != nil {
		t.Fatal(err)
	}
	v := &Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyA)), Audience: Controller, Now: clock(&now)}
	c, err := v.Verify(tok, "POST", "/slurm/v0.0.44/job/submit", body)
	if err != nil {
		t.Fatal(err)
	}
	if c.Kind != KindUser || *c.UID != 1000 || *c.GID != 100 || c.User != "alice" || c.Issuer() != "sack:login1" {
		t.Errorf("claims %+v", c)
	}
	if _, err := v.Verify(tok, "POST", "/slurm/v0.0.44/job/submit", body); !errors.Is(err, ErrReplayed) {
		t.Errorf("replayed session token: %v", err)
	}
	if _, err := v.Verify(tok, "POST", "/slurm/v0.0.44/job/submit", []byte(`{"job":{"x":1}}`)); !errors.Is(err, ErrInvalid) {
		t.Errorf("session token on another body: %v", err)
	}
	// A second token of the session passes (with what the first left
	// in the verifier's cache) until the key is retired.
	for i, retire := range []bool{false, true} {
		if retire {
			v.Keys.Store(clusterkey.FromSecret(keyB))
		}
		tok, err := ss.Sign(Controller, "GET", "/x", BodyHash(nil), now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(tok, "GET", "/x", nil); (err == nil) == retire {
			t.Errorf("token %d, key retired %v: %v", i, retire, err)
		}
	}
}

// TestSessionRefusals: every way a session token can lie.
func TestSessionRefusals(t *testing.T) {
	now := t0
	ss := grant(t, Host("login1"), &now)
	body := []byte("b")
	tok, err := ss.Sign(Controller, "POST", "/p", BodyHash(body), now)
	if err != nil {
		t.Fatal(err)
	}
	d, err := decodeSession(ss.Desc)
	if err != nil {
		t.Fatal(err)
	}
	// A description that is the session's but for root: its key is not
	// the one the service gave.
	asRoot := d
	asRoot.UID, asRoot.GID, asRoot.User = 0, 0, "root"
	rootDesc := encodeDesc(t, asRoot)
	// A session a controller "granted": only credential services may.
	ctlDesc := d
	ctlDesc.Issuer = Controller
	long := d
	long.ExpiresAt = d.IssuedAt + int64(2*DefaultTTL/time.Second)

	tests := map[string]struct {
		token string
		later time.Duration
		keys  []byte
		want  error
	}{
		"root's description, alice's key": {token: resignWith(t, tok, jwt.SigningMethodHS256, ss.Key, func(m map[string]any) { m["ses"] = rootDesc }), want: ErrInvalid},
		"signed with the cluster key":     {token: resignWith(t, tok, jwt.SigningMethodHS256, keyA, nil), want: ErrInvalid},
		"a daemon token of a session":     {token: resignWith(t, tok, jwt.SigningMethodHS256, ss.Key, func(m map[string]any) { m["knd"] = KindDaemon }), want: ErrInvalid},
		"a uid besides the session's":     {token: resignWith(t, tok, jwt.SigningMethodHS256, ss.Key, func(m map[string]any) { m["uid"] = 0; m["gid"] = 0 }), want: ErrInvalid},
		"another issuer than the session": {token: resignWith(t, tok, jwt.SigningMethodHS256, ss.Key, func(m map[string]any) { m["iss"] = Host("n1") }), want: ErrInvalid},
		"a controller's session": {token: resignWith(t, tok, jwt.SigningMethodHS256, deriveKey(keyA, encodeDesc(t, ctlDesc)), func(m map[string]any) {
			m["ses"] = encodeDesc(t, ctlDesc)
			m["iss"] = Controller
		}), want: ErrInvalid},
		"a session over the longest life": {token: resignWith(t, tok, jwt.SigningMethodHS256, deriveKey(keyA, encodeDesc(t, long)), func(m map[string]any) { m["ses"] = encodeDesc(t, long) }), want: ErrInvalid},
		"a token outliving its session": {token: resignWith(t, tok, jwt.SigningMethodHS256, ss.Key, func(m map[string]any) {
			m["iat"] = t0.Add(30 * time.Second).Unix()
			m["exp"] = t0.Add(85 * time.Second).Unix()
		}), later: 40 * time.Second, want: ErrInvalid},
		"an ended session":    {token: tok, later: DefaultTTL + DefaultSkew + time.Second, want: ErrExpired},
		"a retired key":       {token: tok, keys: keyB, want: ErrInvalid},
		"garbage description": {token: resignWith(t, tok, jwt.SigningMethodHS256, deriveKey(keyA, "!!"), func(m map[string]any) { m["ses"] = "!!" }), want: ErrInvalid},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			at := t0.Add(tc.later)
			key := keyA
			if tc.keys != nil {
				key = tc.keys
			}
			v := &Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(key)), Audience: Controller, Now: clock(&at)}
			if c, err := v.Verify(tc.token, "POST", "/p", body); !errors.Is(err, tc.want) {
				t.Errorf("Verify = %+v, %v; want %v", c, err, tc.want)
			}
		})
	}
}

// TestSessionGrant: only a credential service grants sessions, and a
// session's tokens stop with it.
func TestSessionGrant(t *testing.T) {
	now := t0
	s := &Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(keyA)), Issuer: Controller, Now: clock(&now)}
	if _, err := s.GrantSession(UserID{UID: 1}); err == nil {
		t.Error("the controller's signer granted a session")
	}
	ss := grant(t, Host("login1"), &now)
	if ss.Expires.Sub(t0) != DefaultTTL {
		t.Errorf("session lives %v", ss.Expires.Sub(t0))
	}
	if _, err := ss.Sign(Controller, "GET", "/", BodyHash(nil), ss.Expires); err == nil {
		t.Error("signed with an ended session")
	}
}
