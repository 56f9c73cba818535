package e2e

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestControllerCrashLosesNoJob submits 200 jobs, kills the controller
// with SIGKILL while they run, restarts it, and checks that every
// acknowledged job is still known and all of them complete.
func TestControllerCrashLosesNoJob(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 8})
	const n = 200
	ids := make([]string, 0, n)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n/4; i++ {
				id := c.Submit("", "--wrap", "sleep 0.2")
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	c.KillController()
	c.StartController()
	c.WaitNodesUp()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("job id %s acknowledged twice", id)
		}
		seen[id] = true
	}
	deadline := time.Now().Add(120 * time.Second)
	for _, id := range ids {
		for {
			s := c.State(id)
			if s == "COMPLETED" {
				break
			}
			if s == "" {
				t.Fatalf("acknowledged job %s lost after the crash", id)
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s still %s", id, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Ids keep increasing across the restart.
	next := c.Submit("", "--wrap", "true")
	last, _ := strconv.Atoi(ids[len(ids)-1])
	for _, id := range ids {
		if v, _ := strconv.Atoi(id); v > last {
			last = v
		}
	}
	if v, _ := strconv.Atoi(next); v <= last {
		t.Errorf("job id after restart %d, want > %d", v, last)
	}
}

// TestBadInput sends malformed requests and commands; each gets Slurm's
// answer and the controller keeps serving.
func TestBadInput(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	url := "http://localhost/slurm/v0.0.44/job/submit"
	hc := c.SocketClient()
	post := func(body []byte) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("post: %v", err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String()
	}
	if code, body := post([]byte("{not json")); code != 400 || body != "Failure during parsing" {
		t.Errorf("garbage JSON: %d %q", code, body)
	}
	if code, _ := post(bytes.Repeat([]byte("x"), 17<<20)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d", code)
	}
	if code, body := post([]byte(`{"job":{"tasks":"four","script":"#!/bin/sh\ntrue"}}`)); code == 200 || !strings.Contains(body, "errors") {
		t.Errorf("wrong type: %d %s", code, body)
	}
	if code, body := post([]byte(`{}`)); code != 422 || !strings.Contains(body, `Populated \"script\" field is required`) {
		t.Errorf("missing script: %d %s", code, body)
	}
	cases := []struct {
		args     []string
		code     int
		stderr   string
		stdinArg string
	}{
		{[]string{"-p", "nosuch", "--wrap", "true"}, 1, "sbatch: error: invalid partition specified: nosuch\nsbatch: error: Batch job submission failed: Invalid partition name specified\n", ""},
		{[]string{"--time=abc", "--wrap", "true"}, 255, "sbatch: error: Invalid --time specification\n", ""},
		{[]string{"--nosuchoption", "--wrap", "true"}, 255, "sbatch: unrecognized option '--nosuchoption'\nTry \"sbatch --help\" for more information\n", ""},
		{[]string{"-N", "5", "--wrap", "true"}, 1, "sbatch: error: Batch job submission failed: Requested node configuration is not available\n", ""},
	}
	for _, tc := range cases {
		r := c.Run(tc.stdinArg, "sbatch", tc.args...)
		if r.Code != tc.code || r.Stderr != tc.stderr || r.Stdout != "" {
			t.Errorf("sbatch %v: code %d stdout %q stderr %q; want %d %q", tc.args, r.Code, r.Stdout, r.Stderr, tc.code, tc.stderr)
		}
	}
	for _, prog := range []string{"squeue", "scontrol"} {
		args := []string{"-j", "999999"}
		if prog == "scontrol" {
			args = []string{"show", "job", "999999"}
		}
		r := c.Run("", prog, args...)
		if r.Code != 1 || r.Stderr != "slurm_load_jobs error: Invalid job id specified\n" {
			t.Errorf("%s unknown job: %+v", prog, r)
		}
	}
	// Not a batch script.
	r := c.Run("echo no shebang\n", "sbatch")
	if r.Code == 0 {
		t.Errorf("script without #! accepted: %+v", r)
	}
	// The controller still works.
	id := c.Submit("", "--wrap", "true")
	c.WaitState(id, "COMPLETED", 20*time.Second)
}

// TestNodeFailure kills a node daemon with SIGKILL: after SlurmdTimeout the
// node is DOWN ("Not responding") and its job, which may not be requeued,
// ends NODE_FAIL; the daemon comes back, registers, and the node returns to
// service (ReturnToService=2); the killed job's processes are gone.
func TestNodeFailure(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2})
	id := c.Submit("", "--no-requeue", "-w", "n2", "--wrap", "touch started; sleep 600")
	c.WaitState(id, "RUNNING", 20*time.Second)
	// RUNNING is committed before the launch reaches the node: wait for
	// the script itself.
	c.WaitFile("started", 20*time.Second)
	c.KillNode("n2")
	j := c.WaitState(id, "NODE_FAIL", 40*time.Second)
	if j.StateReason.Value != "NodeDown" {
		t.Errorf("reason %q, want NodeDown", j.StateReason.Value)
	}
	out := c.MustRun("", "sinfo", "-h", "-N", "-o", "%N %t %E")
	if !strings.Contains(out, "n2 down* Not responding") && !strings.Contains(out, "n2 down Not responding") {
		t.Errorf("sinfo after the node died:\n%s", out)
	}
	c.StartNode("n2")
	c.WaitNodesUp()
	next := c.Submit("", "-w", "n2", "--wrap", "true")
	c.WaitState(next, "COMPLETED", 20*time.Second)
}
