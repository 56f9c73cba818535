// Package tlsconf is TLS for the cluster's TCP traffic, as Slurm 25.05+
// offers it with TLSType=tls/s2n: every component trusts one CA
// certificate, and each daemon that listens presents a certificate/key
// pair of its own that chains to it. Certificates are PEM files beside
// slurm.conf by default, under Slurm's names, or where TLSParameters (or
// Drover's tls-cert-file and tls-key-file settings) put them. Go's
// crypto/tls does the work; the unix sockets stay plain.
package tlsconf

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// Role is a component that listens with a certificate of its own.
type Role string

// Roles, named as Slurm names their files (ctld_cert.pem...).
const (
	Ctld   Role = "ctld"
	Slurmd Role = "slurmd"
	Restd  Role = "restd"
)

// Config is TLSType and TLSParameters.
type Config struct {
	// Enabled is TLSType naming a TLS plugin (tls/s2n).
	Enabled bool
	// CAFile is the CA certificate every component trusts.
	CAFile string
	// certs and keys are each role's files.
	certs, keys map[Role]string
}

// FromSlurm reads TLSType and TLSParameters of a slurm.conf at confPath
// (its folder holds the files by default). TLSType=tls/none or unset is
// no TLS.
func FromSlurm(tlsType, params, confPath string) (Config, error) {
	var c Config
	switch strings.TrimSpace(tlsType) {
	case "", "tls/none":
		return c, nil
	case "tls/s2n":
		c.Enabled = true
	default:
		return c, fmt.Errorf("TLSType=%s: not supported (tls/s2n or tls/none)", tlsType)
	}
	dir := filepath.Dir(confPath)
	c.CAFile = filepath.Join(dir, "ca_cert.pem")
	c.certs, c.keys = map[Role]string{}, map[Role]string{}
	for _, r := range []Role{Ctld, Slurmd, Restd} {
		c.certs[r] = filepath.Join(dir, string(r)+"_cert.pem")
		c.keys[r] = filepath.Join(dir, string(r)+"_cert_key.pem")
	}
	for _, p := range strings.Split(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if k == "" {
			continue
		}
		if v == "" {
			return Config{}, fmt.Errorf("TLSParameters: %s needs a file", k)
		}
		switch {
		case k == "ca_cert_file":
			c.CAFile = v
		case strings.HasSuffix(k, "_cert_key_file"):
			c.keys[Role(strings.TrimSuffix(k, "_cert_key_file"))] = v
		case strings.HasSuffix(k, "_cert_file"):
			c.certs[Role(strings.TrimSuffix(k, "_cert_file"))] = v
		}
	}
	return c, nil
}

// Override puts a daemon's own certificate and key files (Drover's
// settings) in place of the role's.
func (c *Config) Override(r Role, cert, key string) {
	if cert != "" {
		c.certs[r] = cert
	}
	if key != "" {
		c.keys[r] = key
	}
}

// Scheme is the URL scheme of the cluster's TCP traffic.
func (c Config) Scheme() string {
	if c.Enabled {
		return "https"
	}
	return "http"
}

// Server is the TLS configuration a daemon of role r listens with (nil
// when TLS is off). A missing or unreadable file is an error that names
// it.
func (c Config) Server(r Role) (*tls.Config, error) {
	if !c.Enabled {
		return nil, nil
	}
	pair, err := tls.LoadX509KeyPair(c.certs[r], c.keys[r])
	if err != nil {
		return nil, fmt.Errorf("TLS: %s certificate %s, key %s: %w", r, c.certs[r], c.keys[r], err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// Client is the TLS configuration a component connects with: the CA's
// certificate is the only root it trusts, and a server must present a
// certificate for the address or name dialled (nil when TLS is off).
func (c Config) Client() (*tls.Config, error) {
	if !c.Enabled {
		return nil, nil
	}
	pem, err := os.ReadFile(c.CAFile)
	if err != nil {
		return nil, fmt.Errorf("TLS: CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("TLS: CA certificate %s: %w", c.CAFile, errNoCert)
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

var errNoCert = errors.New("no PEM certificate in the file")

// Transport returns base with the client configuration in place (base
// itself when TLS is off).
func Transport(base *http.Transport, client *tls.Config) *http.Transport {
	if client == nil {
		return base
	}
	t := base.Clone()
	t.TLSClientConfig = client.Clone()
	return t
}
