package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/daemon"
)

// TestReconfigureUnderLoad reconfigures a controller again and again
// while clients keep asking it things: every request is answered as if
// nothing happened, each reconfigure takes, and a job submitted before
// is still there after.
func TestReconfigureUnderLoad(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	port := freePort(t)
	base := fmt.Sprintf("ClusterName=reconf\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=%d\nStateSaveLocation=%s/state\n"+
		"NodeName=n1 NodeAddr=127.0.0.1 Port=%d CPUs=4 RealMemory=4000\nPartitionName=batch Nodes=n1 Default=YES State=UP\n", port, dir, freePort(t))
	if err := os.WriteFile(conf, []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := clusterkey.WriteKey(clusterkey.KeyPath(conf)); err != nil {
		t.Fatal(err)
	}
	v := daemon.Settings()
	v.Set("conf", conf)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	var logs bytes.Buffer
	var logMu sync.Mutex
	go func() {
		done <- daemon.RunController(ctx, v, daemon.Logger(lockedWriter{&logs, &logMu}, "info"), func(a net.Addr) { ready <- a })
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
		if t.Failed() {
			logMu.Lock()
			t.Log(logs.String())
			logMu.Unlock()
		}
	}()
	url := "http://localhost/slurm/v0.0.44/"
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("controller did not start: %v", err)
	}
	// The controller's own host: its unix socket says who asks.
	sock := filepath.Join(dir, "state", "drover.sock")
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	do := func(method, path, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, url+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, map[string]any{"transport": err.Error()}
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var out map[string]any
		_ = json.Unmarshal(data, &out)
		return resp.StatusCode, out
	}
	code, sub := do("POST", "job/submit", `{"job":{"script":"#!/bin/sh\ntrue\n","hold":true,"environment":["PATH=/bin"],"current_working_directory":"/tmp"}}`)
	if code != 200 {
		t.Fatalf("submit: HTTP %d %v", code, sub)
	}
	jobID := fmt.Sprint(sub["job_id"])

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var served, failed atomic.Int64
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, p := range []string{"ping/", "jobs/", "partitions/"} {
					if code, body := do("GET", p, ""); code != 200 {
						failed.Add(1)
						t.Errorf("GET %s during reconfigures: HTTP %d %v", p, code, body)
					}
					served.Add(1)
				}
			}
		}()
	}
	for i := 1; i <= 3; i++ {
		extra := ""
		for k := 1; k <= i; k++ {
			extra += fmt.Sprintf("PartitionName=p%d Nodes=n1 State=UP\n", k)
		}
		if err := os.WriteFile(conf, []byte(base+extra), 0o644); err != nil {
			t.Fatal(err)
		}
		if code, body := do("GET", "reconfigure/", ""); code != 200 || len(body["errors"].([]any)) != 0 {
			t.Fatalf("reconfigure %d: HTTP %d %v", i, code, body)
		}
		_, parts := do("GET", "partitions/", "")
		if n := len(parts["partitions"].([]any)); n != 1+i {
			t.Errorf("after reconfigure %d: %d partitions, want %d", i, n, 1+i)
		}
	}
	close(stop)
	wg.Wait()
	if served.Load() == 0 || failed.Load() != 0 {
		t.Errorf("%d requests served during the reconfigures, %d failed", served.Load(), failed.Load())
	}
	if code, body := do("GET", "job/"+jobID, ""); code != 200 || len(body["jobs"].([]any)) != 1 {
		t.Errorf("job %s after the reconfigures: HTTP %d %v", jobID, code, body)
	}
}

type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
