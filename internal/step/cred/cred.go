// Package cred signs and checks the credential of a job step, the part
// Slurm's job credential (slurm_cred_t, signed by slurmctld with the cluster
// key) plays: the controller signs one per step, each node daemon verifies
// it before launching tasks, and srun verifies the Hello of every node that
// dials back with it, so neither side acts for a forger.
//
// A token is base64url(JSON) "." base64url(HMAC-SHA256(key, JSON)), both
// unpadded. The key is the cluster's slurm.key (KeyPath, WriteKey, LoadKey).
// Nothing here reads the clock: callers pass "now".
package cred

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Cred says who may launch what on which nodes, and where srun listens.
type Cred struct {
	JobID, StepID uint32
	UID, GID      uint32
	User          string
	// Nodes are the names of the step's nodes, in step order (the Node
	// index of a stepio Hello indexes this list).
	Nodes []string
	// SrunAddr is the host:port srun listens on for the step's I/O.
	SrunAddr string
	// SrunCert is the SHA-256 of the certificate srun's port presents
	// when the cluster speaks TLS (hex; "": plain TCP): the node daemons
	// talk to no other.
	SrunCert string
	// Expires is when the credential stops being accepted.
	Expires time.Time
	// Nonce is random and unique per credential; Sign fills it when empty.
	// ReplayCache keys on it.
	Nonce string
}

// Errors, with the wording of Slurm's ESLURMD_INVALID_JOB_CREDENTIAL (4004),
// ESLURMD_CREDENTIAL_EXPIRED (4007) and ESLURMD_CREDENTIAL_REPLAYED (4009).
// Returned errors wrap them with detail; match with errors.Is.
var (
	// ErrBadCred: the token is malformed, or was not signed with the key.
	ErrBadCred = errors.New("Invalid job credential")
	// ErrExpired: the token is authentic but past its Expires.
	ErrExpired = errors.New("Job credential expired")
	// ErrReplayed: the credential was already used for this purpose here.
	ErrReplayed = errors.New("Job credential replayed")
	// ErrBadKey: the key, or the key file, is unfit for signing.
	ErrBadKey = errors.New("unusable credential key")
)

// KeySize is the length of a key WriteKey makes, and the least that Sign,
// Verify and LoadKey accept: HMAC-SHA256's full strength.
const KeySize = 32

// MaxTokenLen bounds a token, so that a forged one costs the verifier
// little; it equals stepio.MaxData, the most a Hello frame carries. A
// step on thousands of nodes fits in a fraction of it.
const MaxTokenLen = 1 << 20

// format tags the signed JSON so that a token of another kind signed with
// the same key can never pass for a step credential.
const format = "drover-step-cred-v1"

// wire is the signed JSON.
type wire struct {
	Format   string    `json:"format"`
	JobID    uint32    `json:"job_id"`
	StepID   uint32    `json:"step_id"`
	UID      uint32    `json:"uid"`
	GID      uint32    `json:"gid"`
	User     string    `json:"user"`
	Nodes    []string  `json:"nodes"`
	SrunAddr string    `json:"srun_addr"`
	SrunCert string    `json:"srun_cert,omitempty"`
	Expires  time.Time `json:"expires"`
	Nonce    string    `json:"nonce"`
}

var b64 = base64.RawURLEncoding.Strict()

func checkKey(key []byte) error {
	if len(key) < KeySize {
		return fmt.Errorf("stepcred: key of %d bytes, need at least %d: %w", len(key), KeySize, ErrBadKey)
	}
	return nil
}

func mac(key, payload []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(payload)
	return h.Sum(nil)
}

// Sign returns the token for c, signed with key. It fills an empty Nonce
// with 128 random bits, and refuses a credential that never expires (the
// replay cache must be able to forget it).
func Sign(key []byte, c Cred) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if c.Expires.IsZero() {
		return "", errors.New("stepcred: credential without an expiry")
	}
	if c.Nonce == "" {
		var n [16]byte
		rand.Read(n[:])
		c.Nonce = b64.EncodeToString(n[:])
	}
	payload, err := json.Marshal(wire{
		Format: format,
		JobID:  c.JobID, StepID: c.StepID, UID: c.UID, GID: c.GID, User: c.User,
		Nodes: c.Nodes, SrunAddr: c.SrunAddr, SrunCert: c.SrunCert, Expires: c.Expires.UTC(), Nonce: c.Nonce,
	})
	if err != nil {
		return "", fmt.Errorf("stepcred: encoding credential: %w", err)
	}
	token := b64.EncodeToString(payload) + "." + b64.EncodeToString(mac(key, payload))
	if len(token) > MaxTokenLen {
		return "", fmt.Errorf("stepcred: credential for job %d step %d is %d bytes, limit %d", c.JobID, c.StepID, len(token), MaxTokenLen)
	}
	return token, nil
}

// Verify checks that token was signed with key and has not expired at now,
// and returns its credential. The MAC is compared in constant time and
// before anything in the payload is looked at.
//
// Errors wrap ErrBadCred for a malformed or forged token, ErrBadKey for a
// short key, and ErrExpired for an authentic token past its Expires; with
// ErrExpired the credential is returned too, for the log line.
func Verify(key []byte, token string, now time.Time) (Cred, error) {
	if err := checkKey(key); err != nil {
		return Cred{}, err
	}
	if len(token) > MaxTokenLen {
		return Cred{}, fmt.Errorf("stepcred: token of %d bytes: %w", len(token), ErrBadCred)
	}
	body, sig, ok := strings.Cut(token, ".")
	if !ok {
		return Cred{}, fmt.Errorf("stepcred: token has no signature: %w", ErrBadCred)
	}
	payload, err := b64.DecodeString(body)
	if err != nil {
		return Cred{}, fmt.Errorf("stepcred: token payload is not base64url: %w", ErrBadCred)
	}
	got, err := b64.DecodeString(sig)
	if err != nil {
		return Cred{}, fmt.Errorf("stepcred: token signature is not base64url: %w", ErrBadCred)
	}
	if !hmac.Equal(got, mac(key, payload)) {
		return Cred{}, fmt.Errorf("stepcred: signature mismatch: %w", ErrBadCred)
	}

	// Authentic from here on: a failure below means a signer bug or a
	// different format version, not a forgery.
	var w wire
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil || dec.More() {
		return Cred{}, fmt.Errorf("stepcred: signed payload does not decode: %w", ErrBadCred)
	}
	if w.Format != format {
		return Cred{}, fmt.Errorf("stepcred: credential format %q, want %q: %w", w.Format, format, ErrBadCred)
	}
	if w.Nonce == "" || w.Expires.IsZero() {
		return Cred{}, fmt.Errorf("stepcred: credential without nonce or expiry: %w", ErrBadCred)
	}
	c := Cred{
		JobID: w.JobID, StepID: w.StepID, UID: w.UID, GID: w.GID, User: w.User,
		Nodes: w.Nodes, SrunAddr: w.SrunAddr, SrunCert: w.SrunCert, Expires: w.Expires, Nonce: w.Nonce,
	}
	if !now.Before(c.Expires) {
		return c, fmt.Errorf("stepcred: credential for job %d step %d expired at %s: %w",
			c.JobID, c.StepID, c.Expires.Format(time.RFC3339), ErrExpired)
	}
	return c, nil
}
