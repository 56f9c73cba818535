package e2e

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRestd runs `drover restd` beside a cluster, as a site runs
// slurmrestd on a host of its own: token callers over TCP and local
// callers over its unix socket reach the controller as themselves, a
// bare user name is refused, the node protocol is not served, and a
// controller that is gone is Slurm's connect failure.
func TestRestd(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "jwt_hs256.key")
	key := make([]byte, 32)
	rand.Read(key)
	must(t, os.WriteFile(keyFile, key, 0o600))
	c := NewCluster(t, ClusterOptions{Nodes: 1, Extra: "AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=" + keyFile + "\n"})
	port := freePorts(t, 1)[0]
	sock := filepath.Join(c.Dir, "restd.sock")
	restd := c.daemon("restd", "restd", "--conf", c.Conf, "127.0.0.1:"+strconv.Itoa(port), "unix:"+sock)
	t.Cleanup(func() { _ = syscall.Kill(-restd.Process.Pid, syscall.SIGKILL) })
	c.waitPort(port)

	tcp := "http://127.0.0.1:" + strconv.Itoa(port)
	local := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	do := func(cl *http.Client, method, url, body string, headers map[string]string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := cl.Do(req)
		must(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	tok, _ := strings.CutPrefix(strings.TrimSpace(c.MustRun("", "scontrol", "token", "username=nobody")), "SLURM_JWT=")
	for _, v := range []string{"v0.0.42", "v0.0.44", "v0.0.45"} {
		if code, body := do(http.DefaultClient, "GET", tcp+"/slurm/"+v+"/ping/", "", map[string]string{"X-SLURM-USER-TOKEN": tok}); code != 200 || !strings.Contains(body, `"user":"nobody"`) {
			t.Errorf("%s ping with a token: HTTP %d %s", v, code, body)
		}
	}
	if code, body := do(http.DefaultClient, "GET", tcp+"/slurm/v0.0.44/jobs/", "", map[string]string{"X-SLURM-USER-NAME": "root"}); code != 401 || body != "Invalid authentication credential" {
		t.Errorf("a bare user name over TCP: HTTP %d %q", code, body)
	}
	if code, _ := do(http.DefaultClient, "POST", tcp+"/drover/v1/node/register", "{}", nil); code != 404 {
		t.Errorf("the node protocol through restd: HTTP %d", code)
	}

	// The unix socket: the caller is the peer, here root.
	if code, body := do(local, "GET", "http://restd/slurm/v0.0.44/ping/", "", map[string]string{"X-SLURM-USER-NAME": "nobody"}); code != 200 || !strings.Contains(body, `"user":"root"`) {
		t.Errorf("ping on the socket: HTTP %d %s", code, body)
	}
	code, body := do(local, "POST", "http://restd/slurm/v0.0.44/job/submit",
		`{"job":{"script":"#!/bin/sh\ntrue\n","hold":true,"name":"via-restd","current_working_directory":"/tmp","environment":["PATH=/bin:/usr/bin"]}}`, nil)
	var sub struct {
		JobID int `json:"job_id"`
	}
	if json.Unmarshal([]byte(body), &sub); code != 200 || sub.JobID == 0 {
		t.Fatalf("submit on the socket: HTTP %d %s", code, body)
	}
	if out := c.MustRun("", "squeue", "-h", "-j", strconv.Itoa(sub.JobID), "-o", "%j %u"); strings.TrimSpace(out) != "via-restd root" {
		t.Errorf("squeue of the job submitted through restd: %q", out)
	}

	c.KillController()
	code, body = do(http.DefaultClient, "GET", tcp+"/slurm/v0.0.44/jobs/", "", map[string]string{"X-SLURM-USER-TOKEN": tok})
	if code != 500 || !strings.Contains(body, `"error_number":1800`) || !strings.Contains(body, "Unable to contact slurm controller (connect failure)") {
		t.Errorf("controller gone: HTTP %d %s", code, body)
	}
}
