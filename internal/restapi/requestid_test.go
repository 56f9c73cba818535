package restapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/jobsubmit"
	"github.com/droverhq/drover/internal/restapi"
	"github.com/droverhq/drover/plugins/host"
)

// The submissions a client request id may name, as bodies of POST
// /slurm/v0.0.4N/job/submit and job/allocate.
const (
	jobDesc      = `{"script":"#!/bin/sh\ntrue\n","current_working_directory":"/tmp","environment":["A=1"]%s}`
	allocDesc    = `{"current_working_directory":"/tmp","environment":["A=1"],"tasks":1}`
	allocatePath = "/slurm/v0.0.44/job/allocate"
)

func desc(extra string) string { return strings.Replace(jobDesc, "%s", extra, 1) }

// submitAnswer is what a submission's answer says, meta left out: a retry
// must get the same.
type submitAnswer struct {
	Status   int    `json:"-"`
	JobID    *int   `json:"job_id"`
	StepID   string `json:"step_id"`
	UserMsg  string `json:"job_submit_user_msg"`
	Errors   []envelopeEntry
	Warnings []envelopeEntry
}

type envelopeEntry struct {
	Number      int    `json:"error_number"`
	Description string `json:"description"`
	Source      string `json:"source"`
}

// submission is a POST of body to path as user, with one header
// X-Drover-Request-Id per id.
func submission(path, user, body string, ids ...string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.RemoteAddr = "127.0.0.1:4000"
	req.Header.Set("Content-Type", "application/json")
	for _, id := range ids {
		req.Header.Add(droverapi.RequestIDHeader, id)
	}
	ctltest.SignAs(req, user)
	return req
}

// send serves req with h and decodes the answer.
func send(h http.Handler, req *http.Request) (submitAnswer, error) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	a := submitAnswer{Status: rec.Code}
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		return a, fmt.Errorf("POST %s: HTTP %d: %w: %s", req.URL.Path, rec.Code, err, rec.Body)
	}
	return a, nil
}

// postAs sends body to path through h as user, with one header
// X-Drover-Request-Id per id.
func postAs(t *testing.T, h http.Handler, path, user, body string, ids ...string) submitAnswer {
	t.Helper()
	a, err := send(h, submission(path, user, body, ids...))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func (a submitAnswer) job(t *testing.T) int {
	t.Helper()
	if a.Status != http.StatusOK || a.JobID == nil {
		t.Fatalf("submission refused: %+v", a)
	}
	return *a.JobID
}

func jobCount(c *ctltest.Cluster) int { return len(c.Ctl.Jobs(controller.JobFilter{})) }

// TestRequestIDSubmitsOnce: through the REST front, a submission or
// allocation sent again with the same X-Drover-Request-Id by the same
// user gets the first answer, job id and warnings alike, and makes no
// job; another id, or another user's request of the same id, makes one.
func TestRequestIDSubmitsOnce(t *testing.T) {
	tests := map[string]struct {
		path, body string
		// records is how many job records the submission makes.
		records int
	}{
		"batch job":           {submitPath, `{"job":` + desc("") + `}`, 1},
		"held batch job":      {submitPath, `{"job":` + desc(`,"hold":true`) + `}`, 1},
		"job array":           {submitPath, `{"job":` + desc(`,"array":"0-3"`) + `}`, 1},
		"heterogeneous job":   {submitPath, `{"jobs":[` + desc("") + `,` + desc("") + `]}`, 2},
		"allocation":          {allocatePath, `{"job":` + allocDesc + `}`, 1},
		"het allocation":      {allocatePath, `{"hetjob":[` + allocDesc + `,` + allocDesc + `]}`, 2},
		"batch job, v0.0.42":  {"/slurm/v0.0.42/job/submit", `{"job":` + desc("") + `}`, 1},
		"allocation, v0.0.45": {"/slurm/v0.0.45/job/allocate", `{"job":` + allocDesc + `}`, 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := ctltest.New(t)
			h := handler(t, c, restapi.Options{})
			first := postAs(t, h, tc.path, "root", tc.body, "req-1")
			id := first.job(t)
			if got := jobCount(c); got != tc.records {
				t.Fatalf("%d job records after the first submission, want %d", got, tc.records)
			}
			retry := postAs(t, h, tc.path, "root", tc.body, "req-1")
			if diff := cmp.Diff(first, retry); diff != "" {
				t.Errorf("the retry's answer (-first +retry):\n%s", diff)
			}
			if got := jobCount(c); got != tc.records {
				t.Errorf("%d job records after the retry, want %d", got, tc.records)
			}
			if other := postAs(t, h, tc.path, "root", tc.body, "req-2").job(t); other == id {
				t.Errorf("another request id answered job %d again", id)
			}
			if other := postAs(t, h, tc.path, "nobody", tc.body, "req-1").job(t); other == id {
				t.Errorf("another user's request of the same id answered job %d", id)
			}
			if other := postAs(t, h, tc.path, "root", tc.body).job(t); other == id {
				t.Errorf("a submission without an id answered job %d", id)
			}
			if got := jobCount(c); got != 4*tc.records {
				t.Errorf("%d job records after four distinct submissions, want %d", got, 4*tc.records)
			}
		})
	}
}

// TestRequestIDConcurrentRetries: tries of one request that reach the
// controller together (a client that gave up on one controller while
// its request was being applied) all get one job: they may all pass the
// controller's check before the first is applied, and the state machine
// decides in log order.
func TestRequestIDConcurrentRetries(t *testing.T) {
	c := ctltest.New(t)
	h := handler(t, c, restapi.Options{})
	const tries = 8
	ids := make([]int, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Go(func() {
			a, err := send(h, submission(submitPath, "root", `{"job":`+desc("")+`}`, "together"))
			if err != nil || a.JobID == nil {
				t.Errorf("try %d: %v %+v", i, err, a)
				return
			}
			ids[i] = *a.JobID
		})
	}
	wg.Wait()
	for i, id := range ids {
		if id != ids[0] {
			t.Errorf("try %d got job %d, try 0 job %d", i, id, ids[0])
		}
	}
	if n := jobCount(c); n != 1 {
		t.Errorf("%d jobs made by %d tries of one request", n, tries)
	}
}

// TestRequestIDAcrossRestart: a controller that restarts (or a replica
// that replays the log) still answers a retry with the first job, until
// ctlstate.RequestTTL after the submission; a retry after that is a new
// submission.
func TestRequestIDAcrossRestart(t *testing.T) {
	c := ctltest.New(t)
	body := `{"job":` + desc("") + `}`
	id := postAs(t, handler(t, c, restapi.Options{}), submitPath, "root", body, "across").job(t)
	c.Restart()
	h := handler(t, c, restapi.Options{})
	if got := postAs(t, h, submitPath, "root", body, "across").job(t); got != id {
		t.Errorf("after a restart the retry got job %d, want %d", got, id)
	}
	c.Clock.Advance(ctlstate.RequestTTL)
	if got := postAs(t, h, submitPath, "root", body, "across").job(t); got == id {
		t.Errorf("a retry %v after the submission answered its job %d", ctlstate.RequestTTL, id)
	}
	if n := jobCount(c); n != 2 {
		t.Errorf("%d jobs, want 2", n)
	}
}

// TestRequestIDInvalid: a request id that is not 1 to 64 characters of
// [A-Za-z0-9_-], or more than one of them, is refused with 400 and
// slurmrestd's error envelope, before anything is submitted.
func TestRequestIDInvalid(t *testing.T) {
	c := ctltest.New(t)
	h := handler(t, c, restapi.Options{})
	tests := map[string][]string{
		"empty":           {""},
		"65 characters":   {strings.Repeat("a", 65)},
		"space":           {"a b"},
		"dot":             {"a.b"},
		"non-ASCII":       {"réq"},
		"two values":      {"a", "b"},
		"two equal ones":  {"a", "a"},
		"comma separated": {"a,b"},
	}
	want := submitAnswer{Status: http.StatusBadRequest, Errors: []envelopeEntry{{
		Number:      9000,
		Description: "X-Drover-Request-Id must be one value of 1 to 64 characters of A-Z, a-z, 0-9, _ and -",
		Source:      "X-Drover-Request-Id",
	}}, Warnings: []envelopeEntry{}}
	for name, ids := range tests {
		for _, p := range []struct{ path, body string }{
			{submitPath, `{"job":` + desc("") + `}`},
			{allocatePath, `{"job":` + allocDesc + `}`},
		} {
			got := postAs(t, h, p.path, "root", p.body, ids...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s to %s (-want +got):\n%s", name, p.path, diff)
			}
		}
	}
	if n := jobCount(c); n != 0 {
		t.Errorf("%d jobs made by refused requests", n)
	}
	if got := postAs(t, h, submitPath, "root", `{"job":`+desc("")+`}`, strings.Repeat("aZ09_-", 10)+"abcd"); got.Status != http.StatusOK {
		t.Errorf("a 64-character id was refused: %+v", got)
	}
	// Other requests do not use the id, but a bad one is refused on them
	// too (the job list is streamed by a handler of its own).
	for _, path := range []string{"/slurm/v0.0.44/diag/", "/slurm/v0.0.44/jobs/", "/slurm/v0.0.42/jobs/"} {
		for id, status := range map[string]int{"a.b": http.StatusBadRequest, "ok": http.StatusOK} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.RemoteAddr = "127.0.0.1:4000"
			req.Header.Set(droverapi.RequestIDHeader, id)
			ctltest.SignAs(req, "root")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != status {
				t.Errorf("GET %s with id %q: HTTP %d, want %d: %s", path, id, rec.Code, status, rec.Body)
			}
		}
	}
}

// TestRequestIDKeepsUserMessage: the retry's answer tells the user what
// the job_submit plugins told the first time, though they do not see the
// retry (here a retry that would have drawn no message).
func TestRequestIDKeepsUserMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example job_submit plugin")
	}
	bin := filepath.Join(t.TempDir(), "job-submit-limits")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/droverhq/drover/examples/job-submit-limits").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	chain := jobsubmit.New(host.OpenJobSubmit(host.Spec{Path: bin, Name: "limits"}))
	t.Cleanup(chain.Close)
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.JobSubmit = chain })
	h := handler(t, c, restapi.Options{})
	first := postAs(t, h, submitPath, "root", `{"job":`+desc("")+`}`, "noted")
	if first.job(t); first.UserMsg != "no time limit given: the job gets 60 minutes" {
		t.Fatalf("the plugin said %q", first.UserMsg)
	}
	retry := postAs(t, h, submitPath, "root", `{"job":`+desc(`,"time_limit":{"set":true,"number":5}`)+`}`, "noted")
	if diff := cmp.Diff(first, retry); diff != "" {
		t.Errorf("the retry's answer (-first +retry):\n%s", diff)
	}
}
