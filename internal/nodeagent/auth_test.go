package nodeagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
)

// TestControllerMessagesAuthenticated: a launch, signal or reconfigure
// reaches the daemon only signed by the controller with the cluster key,
// for this node, once. Each refused one runs nothing and is logged.
func TestControllerMessagesAuthenticated(t *testing.T) {
	ta := startAgent(t, nil)
	marker := filepath.Join(t.TempDir(), "ran")
	launch := nodeproto.Launch{JobID: 9, Name: "x", UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), WorkDir: t.TempDir(),
		Script: "#!/bin/sh\ntouch " + marker + "\n", Nodes: []string{"n1"}, CPUsPerNode: []uint32{1}, TasksPerNode: []uint32{1}, NumTasks: 1}
	other := clusterkey.NewHolder(clusterkey.FromSecret(bytes.Repeat([]byte{7}, 32)))
	ours := clusterkey.NewHolder(clusterkey.FromSecret(testStepKey))
	client := func(keys *clusterkey.Holder, issuer string) *nodeproto.Client {
		return &nodeproto.Client{HTTP: http.DefaultClient, Signer: &msgauth.Signer{Keys: keys, Issuer: issuer}}
	}
	post := func(c *nodeproto.Client, aud, path string, v any) error {
		return c.Post(context.Background(), aud, ta.url+path, v, nil)
	}
	attacks := map[string]func() error{
		"unsigned": func() error {
			return post(&nodeproto.Client{HTTP: http.DefaultClient}, "", nodeproto.PathLaunch, launch)
		},
		"another key": func() error {
			return post(client(other, msgauth.Controller), msgauth.Node("n1"), nodeproto.PathLaunch, launch)
		},
		"for another node": func() error {
			return post(client(ours, msgauth.Controller), msgauth.Node("n2"), nodeproto.PathLaunch, launch)
		},
		"from a node": func() error {
			return post(client(ours, msgauth.Node("n2")), msgauth.Node("n1"), nodeproto.PathLaunch, launch)
		},
		"signal unsigned": func() error {
			return post(&nodeproto.Client{HTTP: http.DefaultClient}, "", nodeproto.PathSignal, nodeproto.Signal{JobID: 9, Terminate: true})
		},
		"reconfigure unsigned": func() error {
			return post(&nodeproto.Client{HTTP: http.DefaultClient}, "", nodeproto.PathReconfigure, struct{}{})
		},
		"signed for a signal, sent as a launch": func() error {
			body, _ := json.Marshal(launch)
			tok, _ := (&msgauth.Signer{Keys: ours, Issuer: msgauth.Controller}).Sign(msgauth.Node("n1"), "POST", nodeproto.PathSignal, body)
			req, _ := http.NewRequest("POST", ta.url+nodeproto.PathLaunch, bytes.NewReader(body))
			req.Header.Set(msgauth.Header, tok)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			resp.Body.Close()
			return &nodeproto.StatusError{Code: resp.StatusCode}
		},
	}
	for name, attack := range attacks {
		err := attack()
		var se *nodeproto.StatusError
		if !errors.As(err, &se) || se.Code != http.StatusUnauthorized {
			t.Errorf("%s: %v, want 401", name, err)
		}
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a refused launch ran its script")
	}
	if !strings.Contains(ta.logs(), "request refused") {
		t.Error("refusals not logged")
	}

	// The real thing works once; the same signed request again is a replay.
	body, _ := json.Marshal(launch)
	tok, _ := (&msgauth.Signer{Keys: ours, Issuer: msgauth.Controller}).Sign(msgauth.Node("n1"), "POST", nodeproto.PathLaunch, body)
	send := func() int {
		req, _ := http.NewRequest("POST", ta.url+nodeproto.PathLaunch, bytes.NewReader(body))
		req.Header.Set(msgauth.Header, tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send(); code != http.StatusOK {
		t.Fatalf("signed launch: %d", code)
	}
	if code := send(); code != http.StatusUnauthorized {
		t.Fatalf("replayed launch: %d, want 401", code)
	}
}
