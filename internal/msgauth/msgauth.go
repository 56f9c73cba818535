// Package msgauth authenticates the messages between Drover's daemons, and
// the requests of users whose host vouches for them, with the cluster key,
// as Slurm's auth/slurm (or munge) authenticates every RPC: each request
// carries a JSON Web Token (RFC 7519, HS256 with the cluster key, or a key
// derived from it for a session, session.go) that says
// who sent it (iss), to whom (aud), for which request (method, path and
// query, and a SHA-256 of the body), until when (exp, a minute by
// default, AuthInfo's ttl=), and a nonce (jti) that the receiver refuses
// to see twice. A token therefore cannot be replayed, redirected to
// another daemon or moved onto another request; a user token also names
// the uid and gid its host's credential service saw on its socket.
package msgauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/jwtauth"
)

// Header carries the token on a request.
const Header = "X-Drover-Auth"

// Kinds of token.
const (
	// KindDaemon is a daemon speaking for itself (the controller, a node).
	KindDaemon = "daemon"
	// KindUser is a host vouching for a local user (the credential
	// service, sackd's part).
	KindUser = "user"
)

// Controller names the controller as sender and receiver.
const Controller = "slurmctld"

// Node names a node daemon as sender and receiver.
func Node(name string) string { return "slurmd:" + name }

// Host names a host's credential service as a user token's issuer.
func Host(name string) string { return "sack:" + name }

// DefaultTTL is a token's life unless AuthInfo's ttl= says otherwise
// (auth/slurm's default).
const DefaultTTL = 60 * time.Second

// DefaultSkew is the clock difference between hosts that is tolerated.
const DefaultSkew = 5 * time.Second

// MaxTokenLen bounds a token; a forged long one costs the receiver little.
const MaxTokenLen = 8 << 10

// Errors wrap jwtauth's, so the REST front answers as it answers a bad
// auth/jwt token ("Invalid authentication credential", or "...expired").
var (
	ErrInvalid  = jwtauth.ErrInvalid
	ErrExpired  = jwtauth.ErrExpired
	ErrReplayed = fmt.Errorf("%w: replayed", jwtauth.ErrInvalid)
)

// Claims are a token's contents.
type Claims struct {
	// Iss, Aud, Iat, Exp and Jti are RFC 7519's registered claims in
	// plain types: golang-jwt's own types decode each value with a JSON
	// decoder of its own, which made checking a token a third slower.
	// Drover's tokens write them only in these forms (aud an array,
	// times whole seconds); another form does not decode.
	Iss  string   `json:"iss"`
	Aud  []string `json:"aud"`
	Iat  int64    `json:"iat"`
	Exp  int64    `json:"exp"`
	Jti  string   `json:"jti"`
	Kind string   `json:"knd"`
	// Req is the request the token is for: "POST /drover/v1/launch"
	// (method, then path and query as sent).
	Req string `json:"req"`
	// BodyHash is the base64url SHA-256 of the request's body.
	BodyHash string `json:"bh"`
	// User, UID and GID are a user token's user as its host saw it.
	User string  `json:"sun,omitempty"`
	UID  *uint32 `json:"uid,omitempty"`
	GID  *uint32 `json:"gid,omitempty"`
	// Session is the description of the session whose derived key
	// signed a user token (session.go); the user is the session's.
	Session string `json:"ses,omitempty"`
}

// Issuer is the token's sender.
func (c *Claims) Issuer() string { return c.Iss }

// FromController reports whether the token is a controller's own (a
// daemon token issued by msgauth.Controller), the only sender the
// controllers' peers, raft and the node daemons' control requests take.
func (c *Claims) FromController() bool { return c.Iss == Controller && c.Kind == KindDaemon }

// ExpiresAt is when the token expires.
func (c *Claims) ExpiresAt() time.Time { return time.Unix(c.Exp, 0) }

// IssuedAt is when the token was signed.
func (c *Claims) IssuedAt() time.Time { return time.Unix(c.Iat, 0) }

// The jwt.Claims methods, for golang-jwt's checks of the times and the
// audience.

func (c *Claims) GetExpirationTime() (*jwt.NumericDate, error) { return numericDate(c.Exp), nil }
func (c *Claims) GetIssuedAt() (*jwt.NumericDate, error)       { return numericDate(c.Iat), nil }
func (c *Claims) GetNotBefore() (*jwt.NumericDate, error)      { return nil, nil }
func (c *Claims) GetIssuer() (string, error)                   { return c.Iss, nil }
func (c *Claims) GetSubject() (string, error)                  { return "", nil }
func (c *Claims) GetAudience() (jwt.ClaimStrings, error)       { return c.Aud, nil }

// numericDate is a claim's time; nil when the claim is missing.
func numericDate(sec int64) *jwt.NumericDate {
	if sec == 0 {
		return nil
	}
	return jwt.NewNumericDate(time.Unix(sec, 0))
}

// BodyHash returns what a token says of a body.
func BodyHash(body []byte) string {
	sum := sha256.Sum256(body)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// Request names a request as a token does.
func Request(method, uri string) string { return method + " " + uri }

// UserID is the user a credential service vouches for.
type UserID struct {
	Name     string
	UID, GID uint32
}

// Signer makes tokens for one sender.
type Signer struct {
	Keys   *clusterkey.Holder
	Issuer string
	// TTL is each token's life (0: DefaultTTL).
	TTL time.Duration
	// Now replaces time.Now in tests.
	Now func() time.Time
}

// Sign returns a daemon token for a request to aud.
func (s *Signer) Sign(aud, method, uri string, body []byte) (string, error) {
	return s.sign(KindDaemon, aud, method, uri, BodyHash(body), nil)
}

// SignUser returns a user token for a request to aud, whose body hashes
// to bodyHash (the credential service sees only the hash).
func (s *Signer) SignUser(u UserID, aud, method, uri, bodyHash string) (string, error) {
	return s.sign(KindUser, aud, method, uri, bodyHash, &u)
}

func (s *Signer) sign(kind, aud, method, uri, bodyHash string, u *UserID) (string, error) {
	ring := s.Keys.Ring()
	if ring == nil {
		return "", fmt.Errorf("msgauth: no cluster key to sign with")
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	ttl := s.TTL
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	c := newClaims(s.Issuer, aud, kind, method, uri, bodyHash, now, now.Add(ttl))
	if u != nil {
		uid, gid := u.UID, u.GID
		c.User, c.UID, c.GID = u.Name, &uid, &gid
	}
	key := ring.Signing()
	return signClaims(&c, key.ID, key.Secret)
}

// newClaims are a token's claims for one request, with a fresh nonce.
func newClaims(iss, aud, kind, method, uri, bodyHash string, now, exp time.Time) Claims {
	var nonce [16]byte
	rand.Read(nonce[:])
	return Claims{
		Iss: iss, Aud: []string{aud}, Iat: now.Unix(), Exp: exp.Unix(),
		Jti:  base64.RawURLEncoding.EncodeToString(nonce[:]),
		Kind: kind, Req: Request(method, uri), BodyHash: bodyHash,
	}
}

// signClaims makes the HS256 token of c with the key named kid.
func signClaims(c *Claims, kid string, key []byte) (string, error) {
	t := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	t.Header["kid"] = kid
	tok, err := t.SignedString(key)
	if err != nil {
		return "", fmt.Errorf("msgauth: sign: %w", err)
	}
	return tok, nil
}

// Verifier checks the tokens sent to one receiver.
type Verifier struct {
	Keys *clusterkey.Holder
	// Audience is the receiver's own name: a token for another is
	// misdirected.
	Audience string
	// MaxTTL refuses tokens that live longer (0: DefaultTTL), which bounds
	// what the replay cache must remember.
	MaxTTL time.Duration
	// Skew is the clock difference tolerated (0: DefaultSkew).
	Skew time.Duration
	// Since refuses tokens issued before it (less Skew): the receiver's
	// start, since a restart empties the replay cache.
	Since time.Time
	// Replay remembers the nonces seen (nil: a cache of the verifier's
	// own, made on first use).
	Replay *Replay
	once   sync.Once
	// Now replaces time.Now in tests.
	Now func() time.Time
	// sessions keeps what was derived and decoded for the sessions seen.
	sessions sessionCache
}

// Verify checks a token sent with a request and returns its claims.
// The signature is checked before anything else is believed; then the
// algorithm (HS256 only: "none" and the rest are refused), the receiver,
// the times, the request and body, and last the nonce, which is
// remembered until the token expires.
func (v *Verifier) Verify(token, method, uri string, body []byte) (*Claims, error) {
	if token == "" {
		return nil, fmt.Errorf("%w: no credential (%s)", ErrInvalid, Header)
	}
	if len(token) > MaxTokenLen {
		return nil, fmt.Errorf("%w: credential of %d bytes", ErrInvalid, len(token))
	}
	ring := v.Keys.Ring()
	if ring == nil {
		return nil, fmt.Errorf("%w: this daemon has no cluster key", ErrInvalid)
	}
	now := time.Now()
	if v.Now != nil {
		now = v.Now()
	}
	skew, maxTTL := v.Skew, v.MaxTTL
	if skew <= 0 {
		skew = DefaultSkew
	}
	if maxTTL <= 0 {
		maxTTL = DefaultTTL
	}
	var c Claims
	// derived is the session key the token was checked with, kept once
	// the check passes.
	var derived []byte
	var derivedKID string
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		// The claims are decoded, not yet believed: a session token is
		// checked with the key derived from the session it names,
		// every other token with the cluster key itself.
		key := func(secret []byte) []byte {
			if c.Session == "" {
				return secret
			}
			return deriveKey(secret, c.Session)
		}
		if kid, _ := t.Header["kid"].(string); kid != "" {
			if k, ok := ring.Lookup(kid); ok {
				if c.Session == "" {
					return k.Secret, nil
				}
				if derived = v.sessions.key(ring, kid, c.Session); derived == nil {
					derived, derivedKID = deriveKey(k.Secret, c.Session), kid
				}
				return derived, nil
			}
		}
		// An unknown kid: a host whose slurm.key is the same secret
		// under another name. Every accepted key is tried.
		set := jwt.VerificationKeySet{}
		for _, s := range ring.Secrets() {
			set.Keys = append(set.Keys, key(s))
		}
		return set, nil
	},
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithLeeway(skew),
		jwt.WithAudience(v.Audience),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return nil, fmt.Errorf("%w: from %s, expired at %v", ErrExpired, c.Iss, c.ExpiresAt())
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return nil, fmt.Errorf("%w: from %s for %v, not for %s", ErrInvalid, c.Iss, c.Aud, v.Audience)
	case err != nil:
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	switch {
	case c.Kind != KindDaemon && c.Kind != KindUser:
		return nil, fmt.Errorf("%w: token of kind %q", ErrInvalid, c.Kind)
	case c.Iat == 0 || c.Jti == "" || c.Iss == "":
		return nil, fmt.Errorf("%w: token without iat, jti or iss", ErrInvalid)
	case c.ExpiresAt().Sub(c.IssuedAt()) > maxTTL:
		return nil, fmt.Errorf("%w: from %s, lives %v, over %v", ErrInvalid, c.Iss, c.ExpiresAt().Sub(c.IssuedAt()), maxTTL)
	case !v.Since.IsZero() && c.IssuedAt().Before(v.Since.Add(-skew)):
		return nil, fmt.Errorf("%w: from %s, issued at %v, before this daemon started", ErrExpired, c.Iss, c.IssuedAt())
	case c.Req != Request(method, uri):
		return nil, fmt.Errorf("%w: from %s for %q, used for %q", ErrInvalid, c.Iss, c.Req, Request(method, uri))
	case c.BodyHash != BodyHash(body):
		return nil, fmt.Errorf("%w: from %s for %q: the body is not the one signed", ErrInvalid, c.Iss, c.Req)
	case c.Session != "":
		if err := v.sessions.check(&c, now, skew, maxTTL); err != nil {
			return nil, err
		}
		if derivedKID != "" {
			v.sessions.keep(ring, derivedKID, c.Session, derived)
		}
	case c.Kind == KindUser && (c.UID == nil || c.GID == nil):
		return nil, fmt.Errorf("%w: user token from %s without uid or gid", ErrInvalid, c.Iss)
	}
	v.once.Do(func() {
		if v.Replay == nil {
			v.Replay = NewReplay()
		}
	})
	if !v.Replay.Use(c.Jti, c.ExpiresAt().Add(skew), now) {
		return nil, fmt.Errorf("%w: from %s for %q", ErrReplayed, c.Iss, c.Req)
	}
	return &c, nil
}
