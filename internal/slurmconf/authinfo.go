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

// ParsePortRange reads a port range such as SrunPortRange ("60001-63000");
// "" and "0-0" are no range (0, 0: any port).
func ParsePortRange(v string) (lo, hi int, err error) {
	v = strings.TrimSpace(v)
	if v == "" || v == "0-0" {
		return 0, 0, nil
	}
	a, b, ok := strings.Cut(v, "-")
	lo, err1 := strconv.Atoi(strings.TrimSpace(a))
	hi, err2 := strconv.Atoi(strings.TrimSpace(b))
	if !ok || err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, fmt.Errorf("invalid port range %q (want low-high, 1-65535)", v)
	}
	return lo, hi, nil
}
