package e2e

import (
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestJWTTokens turns auth/jwt on, gets tokens from `scontrol token` and
// uses them against the REST API, as a dashboard on another host would.
func TestJWTTokens(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "jwt_hs256.key")
	key := make([]byte, 32)
	rand.Read(key)
	must(t, os.WriteFile(keyFile, key, 0o600))
	c := NewCluster(t, ClusterOptions{Nodes: 1, Extra: "AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=" + keyFile + ",max_token_lifespan=3600\n"})

	out := c.MustRun("", "scontrol", "token", "lifespan=600", "username=nobody")
	tok, ok := strings.CutPrefix(strings.TrimSpace(out), "SLURM_JWT=")
	if !ok || strings.Count(tok, ".") != 2 {
		t.Fatalf("scontrol token: %q", out)
	}
	get := func(headers map[string]string) (int, string) {
		req, _ := http.NewRequest("GET", "http://127.0.0.1:"+strconv.Itoa(c.CtlPort)+"/slurm/v0.0.44/ping/", nil)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(map[string]string{"X-SLURM-USER-TOKEN": tok}); code != 200 || !strings.Contains(body, `"user":"nobody"`) {
		t.Errorf("with the token: HTTP %d %s", code, body)
	}
	if code, body := get(map[string]string{"Authorization": "Bearer " + tok}); code != 200 || !strings.Contains(body, `"user":"nobody"`) {
		t.Errorf("as a bearer: HTTP %d %s", code, body)
	}
	bad := tok[:len(tok)-2] + "xx"
	if code, body := get(map[string]string{"X-SLURM-USER-TOKEN": bad}); code != 401 || body != "Invalid authentication credential" {
		t.Errorf("tampered token: HTTP %d %q", code, body)
	}
	if r := c.Run("", "scontrol", "token", "lifespan=forever"); r.Code != 1 || r.Stderr != "Invalid lifespan value: forever\n" {
		t.Errorf("bad lifespan: %+v", r)
	}
	if r := c.Run("", "scontrol", "token", "colour=red"); r.Code != 1 || r.Stderr != "Invalid option: `colour=red`\n" {
		t.Errorf("bad option: %+v", r)
	}

	plain := NewCluster(t, ClusterOptions{Nodes: 1})
	r := plain.Run("", "scontrol", "token")
	if r.Code != 1 || r.Stderr != "scontrol: error: slurm_fetch_token: error with request: Required plugin type not loaded or initialized\n" {
		t.Errorf("token without auth/jwt: %+v", r)
	}
}
