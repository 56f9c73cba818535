package restd

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/failover"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/restapi"
)

// TestEveryControllerTried: a unix socket caller's submission through
// restd reaches the third controller when the first is down and the
// second in standby, vouched for afresh on each attempt (the
// controllers share one replay cache, so a credential sent twice would
// be refused), with one request id across the attempts.
func TestEveryControllerTried(t *testing.T) {
	key := clusterkey.NewHolder(clusterkey.FromSecret(bytes.Repeat([]byte{3}, 32)))
	v := &msgauth.Verifier{Keys: key, Audience: msgauth.Controller, Replay: msgauth.NewReplay()}
	type seen struct {
		controller, requestID, body string
		uid                         uint32
	}
	var mu sync.Mutex
	var got []seen
	controller := func(name string, standby bool) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c, err := v.VerifyRequest(r, restapi.MaxBody)
			if err != nil {
				t.Errorf("%s refused the credential: %v", name, err)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, seen{name, r.Header.Get(droverapi.RequestIDHeader), string(b), *c.UID})
			mu.Unlock()
			if standby {
				w.Header().Set(droverapi.StandbyHeader, "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			io.WriteString(w, `{"job_id":1}`)
		}))
		t.Cleanup(s.Close)
		return s
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	follower, leader := controller("follower", true), controller("leader", false)

	h := Handler(Options{
		Controllers: []string{dead, follower.URL, leader.URL},
		Retry:       failover.Options{ConnectWindow: 2 * time.Second, StandbyWindow: 2 * time.Second},
		Cluster:     &msgauth.Signer{Keys: key, Issuer: msgauth.Host("restd")},
		Logger:      slog.New(slog.DiscardHandler),
	})
	sock := filepath.Join(t.TempDir(), "restd.sock")
	ul, err := restapi.ListenUnix(sock, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	restapi.ServeListeners(ctx, h, []net.Listener{ul})
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	const body = `{"job":{"script":"#!/bin/sh\ntrue\n"}}`
	resp, err := hc.Post("http://restd/slurm/v0.0.44/job/submit", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(out) != `{"job_id":1}` {
		t.Fatalf("HTTP %d %s, want the leader's answer", resp.StatusCode, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].controller != "follower" || got[1].controller != "leader" {
		t.Fatalf("reached %+v, want the follower then the leader", got)
	}
	uid := uint32(os.Getuid())
	for _, s := range got {
		if s.body != body || s.uid != uid || s.requestID == "" || s.requestID != got[0].requestID {
			t.Errorf("%s got %+v: want the body, uid %d and one request id", s.controller, s, uid)
		}
	}
}
