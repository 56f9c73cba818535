package failover

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/droverapi"
)

// NewRequestID returns a fresh request id: 16 random bytes in hex, which
// no other client will pick.
func NewRequestID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("request id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// ValidRequestID reports whether id is one a controller takes: 1 to 64
// characters of [A-Za-z0-9_-]. Only such an id makes a retry safe. The
// rule is droverapi's, which the controller's REST front applies.
func ValidRequestID(id string) bool { return droverapi.ValidRequestID(id) }

// IsCreation reports whether a request creates a job or a step, so that
// a retry after a lost answer could create a second one: POST
// /slurm/v0.0.4N/job/submit or /slurm/v0.0.4N/job/allocate, for every
// API version, and srun's POST /drover/v1/job/{job_id}/steps
// (internal/step/proto's PathCreate).
func IsCreation(method, path string) bool {
	if method != http.MethodPost {
		return false
	}
	if rest, ok := strings.CutPrefix(path, "/drover/v1/job/"); ok {
		id, op, ok := strings.Cut(rest, "/")
		return ok && digits(id) && strings.TrimSuffix(op, "/") == "steps"
	}
	rest, ok := strings.CutPrefix(path, "/slurm/v0.0.")
	if !ok {
		return false
	}
	ver, op, ok := strings.Cut(rest, "/")
	if !ok || !digits(ver) {
		return false
	}
	op = strings.TrimSuffix(op, "/")
	return op == "job/submit" || op == "job/allocate"
}

// digits reports whether s is one or more decimal digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseLeader reads droverapi.LeaderHeader ("host:port", an IPv6 host in
// brackets) into the form controllers are looked up by: the host in
// lower case, the port a number from 1 to 65535.
func ParseLeader(v string) (string, error) {
	host, port, err := net.SplitHostPort(strings.TrimSpace(v))
	if err != nil {
		return "", fmt.Errorf("leader %q: %w", v, err)
	}
	if host == "" || strings.ContainsAny(host, " \t/\\@?#[]%") {
		return "", fmt.Errorf("leader %q: %q is not a host", v, host)
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 || strconv.FormatUint(n, 10) != port {
		return "", fmt.Errorf("leader %q: %q is not a port", v, port)
	}
	return net.JoinHostPort(strings.ToLower(host), port), nil
}
