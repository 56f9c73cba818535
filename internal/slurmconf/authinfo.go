package slurmconf

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// AuthInfo is what Drover reads of slurm.conf's AuthInfo.
type AuthInfo struct {
	// CredExpire is cred_expire=: how long a job step credential stays
	// valid (120 s by default).
	CredExpire time.Duration
	// TTL is ttl=: how long a signed message between the daemons, or a
	// user's credential, lives (auth/slurm's 60 s by default).
	TTL time.Duration
}

// Defaults of AuthInfo.
const (
	DefaultCredExpire = 120 * time.Second
	DefaultAuthTTL    = 60 * time.Second
)

// ParseAuthInfo reads AuthInfo's comma-separated options; those Drover
// has no use for (socket=, use_client_ids...) are passed over.
func ParseAuthInfo(v string) (AuthInfo, error) {
	a := AuthInfo{CredExpire: DefaultCredExpire, TTL: DefaultAuthTTL}
	for _, opt := range strings.Split(v, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(opt), "=")
		if !ok {
			continue
		}
		var dst *time.Duration
		var least int
		switch strings.ToLower(key) {
		case "cred_expire":
			dst = &a.CredExpire
		case "ttl":
			dst, least = &a.TTL, 1
		default:
			continue
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < least || n > 1<<20 {
			return AuthInfo{}, fmt.Errorf("AuthInfo=%s: %s=%s: not a number of seconds", v, key, val)
		}
		*dst = time.Duration(n) * time.Second
	}
	return a, nil
}

// AuthInfo parses the file's AuthInfo.
func (c *Config) AuthInfo() (AuthInfo, error) {
	v, _ := c.Value("AuthInfo")
	return ParseAuthInfo(v)
}
