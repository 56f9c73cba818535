package daemon

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The probes answer before any authentication, say only their status,
// and leave every other path to the daemon.
func TestHealthProbes(t *testing.T) {
	ready := true
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) })
	h := health(next, func() bool { return ready })
	get := func(method, path string) (int, string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
		return w.Code, w.Body.String()
	}
	for _, c := range []struct {
		ready        bool
		method, path string
		code         int
		body         string
	}{
		{true, "GET", "/livez", 200, "ok\n"},
		{true, "GET", "/readyz", 200, "ok\n"},
		{false, "GET", "/readyz", 503, "not ready\n"},
		{false, "GET", "/livez", 200, "ok\n"},
		{true, "HEAD", "/readyz", 200, ""},
		{true, "POST", "/livez", 405, "method not allowed\n"},
		{true, "GET", "/slurm/v0.0.44/ping", 401, ""},
		{true, "GET", "/livez/x", 401, ""},
	} {
		ready = c.ready
		code, body := get(c.method, c.path)
		if code != c.code || (c.method != "HEAD" && body != c.body) {
			t.Errorf("%s %s (ready %v): %d %q, want %d %q", c.method, c.path, c.ready, code, body, c.code, c.body)
		}
	}
}
