package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/daemon"
	"github.com/droverhq/drover/internal/droverapi"
)

// replicas runs n controllers of one cluster in this process, each on a
// loopback address of its own, until the test ends; stop stops one.
func replicas(t *testing.T, n int) (daemons []*replicaDaemon, stop func(*replicaDaemon)) {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	var b strings.Builder
	fmt.Fprintf(&b, "ClusterName=ha\n")
	for i := 1; i <= n; i++ {
		d := &replicaDaemon{name: fmt.Sprintf("ctl%d", i), addr: fmt.Sprintf("127.0.0.%d", i)}
		d.sock = filepath.Join(dir, d.name+".sock")
		daemons = append(daemons, d)
		fmt.Fprintf(&b, "SlurmctldHost=%s(%s)\n", d.name, d.addr)
	}
	fmt.Fprintf(&b, "SlurmctldPort=%d\nSlurmctldTimeout=4\nAccountingStorageType=accounting_storage/none\nStateSaveLocation=%s/state\n"+
		"NodeName=n1 NodeAddr=127.0.0.1 Port=%d CPUs=4 RealMemory=4000\nPartitionName=batch Nodes=n1 Default=YES State=UP\n", freePort(t), dir, freePort(t))
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := clusterkey.WriteKey(clusterkey.KeyPath(conf)); err != nil {
		t.Fatal(err)
	}
	stop = func(d *replicaDaemon) {
		if d.cancel == nil {
			return
		}
		d.cancel()
		d.cancel = nil
		if err := <-d.done; err != nil {
			t.Errorf("%s: %v", d.name, err)
		}
	}
	t.Cleanup(func() {
		for _, d := range daemons {
			stop(d)
			if t.Failed() {
				t.Logf("%s log:\n%s", d.name, d.log())
			}
		}
	})
	for _, d := range daemons {
		v := daemon.Settings()
		v.Set("conf", conf)
		v.Set("name", d.name)
		v.Set("socket", d.sock)
		v.Set("state-dir", filepath.Join(dir, "state-"+d.name))
		ctx, cancel := context.WithCancel(context.Background())
		d.cancel, d.done = cancel, make(chan error, 1)
		ready := make(chan net.Addr, 1)
		go func() {
			d.done <- daemon.RunController(ctx, v, daemon.Logger(lockedWriter{&d.logs, &d.logMu}, "debug"), func(a net.Addr) { ready <- a })
		}()
		select {
		case <-ready:
		case err := <-d.done:
			// It has ended: there is nothing for stop to wait for.
			d.cancel()
			d.cancel = nil
			t.Fatalf("%s did not start: %v\n%s", d.name, err, d.log())
		}
	}
	return daemons, stop
}

// submitWithID sends a held batch job naming the client request id to
// d's socket, as a command on d's host would, and returns the status,
// the headers and the job id answered ("" for none).
func submitWithID(d *replicaDaemon, id string) (int, http.Header, string) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "unix", d.sock)
	}}}
	req, _ := http.NewRequest(http.MethodPost, "http://localhost/slurm/v0.0.44/job/submit",
		strings.NewReader(`{"job":{"script":"#!/bin/sh\ntrue\n","hold":true,"environment":["PATH=/bin"],"current_working_directory":"/tmp"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(droverapi.RequestIDHeader, id)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, ""
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out struct {
		JobID *int `json:"job_id"`
	}
	if json.Unmarshal(data, &out) != nil || out.JobID == nil {
		return resp.StatusCode, resp.Header, ""
	}
	return resp.StatusCode, resp.Header, fmt.Sprint(*out.JobID)
}

// TestReplicatedRequestID: a client that retries one submission, naming
// one request id, on every controller of a replicated cluster, before and
// after the leader stops, gets one job: the followers forward the id with
// the request, and the new leader's state holds what the old one
// applied.
func TestReplicatedRequestID(t *testing.T) {
	daemons, stop := replicas(t, 3)
	// retry sends the request to d until a controller leads and takes
	// it, as a client retries a 503 from a controller in standby.
	retry := func(d *replicaDaemon, id string, within time.Duration) string {
		t.Helper()
		deadline := time.Now().Add(within)
		for {
			code, h, job := submitWithID(d, id)
			if code == http.StatusOK && job != "" {
				return job
			}
			if code != http.StatusServiceUnavailable || h.Get(droverapi.StandbyHeader) != "1" {
				t.Fatalf("submit through %s: HTTP %d", d.name, code)
			}
			if time.Now().After(deadline) {
				t.Fatalf("no controller led within %v", within)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	first := retry(daemons[0], "fail-over-1", 20*time.Second)
	var leader *replicaDaemon
	for _, d := range daemons {
		code, h, job := submitWithID(d, "fail-over-1")
		if code != http.StatusOK || job != first {
			t.Errorf("retry through %s: HTTP %d, job %q; want job %s", d.name, code, job, first)
		}
		if h.Get(droverapi.LeaderHeader) == "" {
			leader = d
		}
	}
	if leader == nil {
		t.Fatal("no controller answered as leader")
	}
	stop(leader)
	var other *replicaDaemon
	for _, d := range daemons {
		if d != leader {
			other = d
			break
		}
	}
	if got := retry(other, "fail-over-1", 15*time.Second); got != first {
		t.Errorf("after %s stopped, the retry through %s got job %s, want %s", leader.name, other.name, got, first)
	}
	if got := retry(other, "fail-over-2", 15*time.Second); got == first {
		t.Errorf("another request id got job %s again", first)
	}
}
