package restapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/restapi"
)

// TestSlowClients: a client that stops halfway through its headers or its
// body loses its connection once the timeout passes.
func TestSlowClients(t *testing.T) {
	saved := restapi.Timeouts
	restapi.Timeouts.ReadHeader, restapi.Timeouts.Read = 300*time.Millisecond, 600*time.Millisecond
	defer func() { restapi.Timeouts = saved }()
	c := ctltest.New(t)
	addr, _ := serve(t, c, restapi.Options{})
	for name, start := range map[string]string{
		"headers": "GET /slurm/v0.0.44/ping/ HTTP/1.1\r\nHost: x\r\nX-Slow: ",
		"body":    "POST /slurm/v0.0.44/job/submit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"job\":",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := io.WriteString(conn, start); err != nil {
				t.Fatal(err)
			}
			conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			begin := time.Now()
			_, err = io.ReadAll(bufio.NewReader(conn))
			if err != nil {
				t.Fatalf("connection not closed by the server: %v", err)
			}
			if took := time.Since(begin); took > 3*time.Second {
				t.Errorf("closed after %v", took)
			}
		})
	}
}

// TestManyConcurrentRequests sends thousands of requests at once, good
// and bad, and checks that the server answers them all and that no
// goroutine is left once the clients are gone.
func TestManyConcurrentRequests(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	ctx, cancel := context.WithCancel(context.Background())
	addr, _, err := restapi.Serve(ctx, handler(t, c, restapi.Options{}), "127.0.0.1:0", "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()
	reqs := []struct{ method, path, body string }{
		{"GET", "/slurm/v0.0.44/ping/", ""},
		{"GET", "/slurm/v0.0.42/jobs/", ""},
		{"GET", "/slurm/v0.0.45/nodes/", ""},
		{"POST", "/slurm/v0.0.44/job/submit", `{"job":`},
		{"POST", "/slurm/v0.0.44/job/submit", `{"job":{"script":"#!/bin/sh\ntrue","current_working_directory":"/tmp","environment":["PATH=/bin"],"hold":true}}`},
		{"GET", "/no/such/path", ""},
	}
	const n = 3000
	var wg sync.WaitGroup
	var mu sync.Mutex
	failures := map[string]int{}
	sem := make(chan struct{}, 256)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			r := reqs[i%len(reqs)]
			req, _ := http.NewRequest(r.method, "http://"+addr.String()+r.path, strings.NewReader(r.body))
			req.Header.Set("X-SLURM-USER-NAME", "root")
			resp, err := client.Do(req)
			if err != nil {
				mu.Lock()
				failures[err.Error()]++
				mu.Unlock()
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode >= 500 && r.body != `{"job":` {
				mu.Lock()
				failures[fmt.Sprintf("%s %s: HTTP %d", r.method, r.path, resp.StatusCode)]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("failures: %v", failures)
	}
	client.CloseIdleConnections()
	cancel()
	time.Sleep(200 * time.Millisecond)
}
