package tlsconf

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"time"
)

// A pinned connection is one whose server a signed message names by its
// certificate's SHA-256 rather than through the cluster's CA: srun, run
// by any user, holds no certificate of the CA, so it listens for its
// step's node daemons with a certificate of its own making, and the step
// credential the controller signs carries its fingerprint to them.

// Ephemeral returns a server configuration with a new self-signed
// certificate (ECDSA P-256) and the certificate's fingerprint, as
// Fingerprint writes it.
func Ephemeral(name string) (*tls.Config, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, "", fmt.Errorf("make a TLS key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, "", fmt.Errorf("make a TLS certificate: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		// The fingerprint, not the dates, is what the peer checks; the
		// dates cover a step that runs for weeks anyway.
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.AddDate(1, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, "", fmt.Errorf("make a TLS certificate: %w", err)
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		MinVersion:   tls.VersionTLS13,
	}
	return cfg, Fingerprint(der), nil
}

// Fingerprint is the hex SHA-256 of a DER certificate.
func Fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// ErrPinMismatch: the server's certificate is not the one pinned.
var ErrPinMismatch = errors.New("the peer's certificate is not the one its credential names")

// Pinned returns a client configuration that accepts only a server whose
// certificate has the given fingerprint. The CA, names and dates are not
// consulted: the fingerprint came in a message signed with the cluster
// key, which is a stronger statement than any of them.
func Pinned(fingerprint string) (*tls.Config, error) {
	want, err := hex.DecodeString(fingerprint)
	if err != nil || len(want) != sha256.Size {
		return nil, fmt.Errorf("certificate fingerprint %q: not a hex SHA-256", fingerprint)
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		// Chain and name checks are replaced by the pin below.
		InsecureSkipVerify: true, //nolint:gosec // pinned in VerifyPeerCertificate
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 {
				return ErrPinMismatch
			}
			got := sha256.Sum256(raw[0])
			if subtle.ConstantTimeCompare(got[:], want) != 1 {
				return ErrPinMismatch
			}
			return nil
		},
	}, nil
}
