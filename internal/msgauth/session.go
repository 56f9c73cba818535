package msgauth

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
)

// A session spares a program one round trip to its host's credential
// service per request: the service grants it, for the uid and gid the
// kernel reports, a key derived from the cluster key (HMAC-SHA256 of a
// description of the session: issuer, user, times and a random id), with
// which the program signs user tokens for its own requests. Each token
// carries the description (claim "ses"), so the controller derives the
// same key and checks the token as any other: bound to its request and
// body, short-lived, its nonce refused a second time. The key is only as
// strong a statement as a credential per request: the service grants one
// to any local program, for that program's own uid only, and it dies
// with the session (AuthInfo's ttl) or the cluster key's retirement.

// sessionContext separates derived keys from every other use of the
// cluster key.
const sessionContext = "drover-session-v1:"

// sessionIssuerPrefix is the only kind of issuer that may grant sessions:
// a host's credential service (Host).
const sessionIssuerPrefix = "sack:"

// SessionDesc describes a session; it is what the derived key is derived
// from.
type SessionDesc struct {
	Issuer    string `json:"iss"`
	User      string `json:"sun"`
	UID       uint32 `json:"uid"`
	GID       uint32 `json:"gid"`
	IssuedAt  int64  `json:"iat"`
	ExpiresAt int64  `json:"exp"`
	ID        string `json:"sid"`
}

// Session is a granted session: its encoded description, the cluster
// key's id and the key derived from it.
type Session struct {
	Desc    string
	KeyID   string
	Key     []byte
	Expires time.Time
	// Issuer is the description's issuer (the granting host).
	Issuer string
}

func deriveKey(secret []byte, desc string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(sessionContext))
	m.Write([]byte(desc))
	return m.Sum(nil)
}

// GrantSession returns a session for u, for the signer's TTL, under the
// signer's name (a credential service's, Host).
func (s *Signer) GrantSession(u UserID) (Session, error) {
	ring := s.Keys.Ring()
	if ring == nil {
		return Session{}, fmt.Errorf("msgauth: no cluster key to sign with")
	}
	if !strings.HasPrefix(s.Issuer, sessionIssuerPrefix) {
		return Session{}, fmt.Errorf("msgauth: %s may not grant sessions", s.Issuer)
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	ttl := s.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	var id [16]byte
	rand.Read(id[:])
	exp := now.Add(ttl)
	d := SessionDesc{Issuer: s.Issuer, User: u.Name, UID: u.UID, GID: u.GID,
		IssuedAt: now.Unix(), ExpiresAt: exp.Unix(), ID: base64.RawURLEncoding.EncodeToString(id[:])}
	raw, err := json.Marshal(d)
	if err != nil {
		return Session{}, fmt.Errorf("msgauth: encode session: %w", err)
	}
	desc := base64.RawURLEncoding.EncodeToString(raw)
	key := ring.Signing()
	return Session{Desc: desc, KeyID: key.ID, Key: deriveKey(key.Secret, desc), Expires: time.Unix(d.ExpiresAt, 0), Issuer: s.Issuer}, nil
}

// Sign returns a user token of the session for a request to aud whose
// body hashes to bodyHash. It lives until the session ends.
func (ss *Session) Sign(aud, method, uri, bodyHash string, now time.Time) (string, error) {
	exp := ss.Expires
	if !now.Before(exp) {
		return "", fmt.Errorf("msgauth: the session ended at %v", ss.Expires)
	}
	c := newClaims(ss.Issuer, aud, KindUser, method, uri, bodyHash, now, exp)
	c.Session = ss.Desc
	return signClaims(&c, ss.KeyID, ss.Key)
}

// decodeSession reads a session description strictly.
func decodeSession(desc string) (SessionDesc, error) {
	var d SessionDesc
	raw, err := base64.RawURLEncoding.Strict().DecodeString(desc)
	if err != nil {
		return d, fmt.Errorf("session description is not base64url")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil || dec.More() {
		return d, fmt.Errorf("session description does not decode")
	}
	return d, nil
}

// sessionCache keeps the keys derived for the sessions whose tokens
// passed, and their decoded descriptions: a program signs many requests
// in one session, and each would otherwise cost an HMAC and a JSON
// decode more. Only what a verified token showed is kept, for one ring
// of cluster keys (a reload empties it), and at most maxSessions.
type sessionCache struct {
	mu    sync.Mutex
	ring  *clusterkey.Ring
	keys  map[string][]byte
	descs map[string]SessionDesc
}

// maxSessions bounds the cache; past it, it starts again empty.
const maxSessions = 4096

// key returns the key derived for the session desc under the ring's key
// kid, if kept.
func (sc *sessionCache) key(ring *clusterkey.Ring, kid, desc string) []byte {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.ring != ring {
		return nil
	}
	return sc.keys[kid+"\x00"+desc]
}

// keep remembers a derived key that checked a token.
func (sc *sessionCache) keep(ring *clusterkey.Ring, kid, desc string, key []byte) {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.ring != ring || len(sc.keys) >= maxSessions {
		sc.ring, sc.keys = ring, map[string][]byte{}
	}
	sc.keys[kid+"\x00"+desc] = key
}

// desc decodes a session description, or returns it decoded before.
func (sc *sessionCache) desc(desc string) (SessionDesc, error) {
	sc.mu.Lock()
	d, ok := sc.descs[desc]
	sc.mu.Unlock()
	if ok {
		return d, nil
	}
	d, err := decodeSession(desc)
	if err != nil {
		return d, err
	}
	sc.mu.Lock()
	if sc.descs == nil || len(sc.descs) >= maxSessions {
		sc.descs = map[string]SessionDesc{}
	}
	sc.descs[desc] = d
	sc.mu.Unlock()
	return d, nil
}

// check applies a verified session token's description to its claims:
// the token must be a user token of the description's issuer, within
// the session's life, and its user is the description's.
func (sc *sessionCache) check(c *Claims, now time.Time, skew, maxTTL time.Duration) error {
	d, err := sc.desc(c.Session)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	exp := time.Unix(d.ExpiresAt, 0)
	switch {
	case c.Kind != KindUser:
		return fmt.Errorf("%w: a session signs user tokens only, not %q", ErrInvalid, c.Kind)
	case !strings.HasPrefix(d.Issuer, sessionIssuerPrefix) || c.Iss != d.Issuer:
		return fmt.Errorf("%w: session of %q in a token from %q", ErrInvalid, d.Issuer, c.Iss)
	case d.ID == "" || d.ExpiresAt <= d.IssuedAt:
		return fmt.Errorf("%w: session from %s without id or life", ErrInvalid, d.Issuer)
	case exp.Sub(time.Unix(d.IssuedAt, 0)) > maxTTL:
		return fmt.Errorf("%w: session from %s lives %v, over %v", ErrInvalid, d.Issuer, exp.Sub(time.Unix(d.IssuedAt, 0)), maxTTL)
	case !now.Before(exp.Add(skew)):
		return fmt.Errorf("%w: session from %s ended at %v", ErrExpired, d.Issuer, exp)
	case c.ExpiresAt().After(exp.Add(skew)):
		return fmt.Errorf("%w: token from %s outlives its session", ErrInvalid, d.Issuer)
	case c.UID != nil || c.GID != nil || c.User != "":
		return fmt.Errorf("%w: a session token names its user in its session only", ErrInvalid)
	}
	uid, gid := d.UID, d.GID
	c.User, c.UID, c.GID = d.User, &uid, &gid
	return nil
}
