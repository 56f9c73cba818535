package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/droverapi"
)

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
	c := startReplicaCluster(t)
	daemons, stop := c.daemons, c.stop
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
