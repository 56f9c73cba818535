package v0044_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/restapi"
	"github.com/droverhq/drover/internal/state"
)

func TestBadInputKeepsServing(t *testing.T) {
	r := newREST(t)
	var acked []job.ID
	ack := func() { acked = append(acked, r.submitRaw("root", minimalDesc(`"hold":true`))) }
	ack()
	bad := []struct {
		method, path string
		body         []byte
		status       int
		contentType  string
	}{
		{"POST", v44 + "/job/submit", []byte("{not json"), 400, "text/plain"},
		{"POST", v44 + "/job/submit", []byte(`{"job":{"script":"x"}`), 400, "text/plain"},
		{"POST", v44 + "/job/submit", []byte("\x00\xff\xfe"), 400, "text/plain"},
		{"POST", v44 + "/job/submit", []byte(" \n\t"), 422, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`"just a string"`), 500, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`42`), 500, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`null`), 500, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`{"job":[]}`), 422, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`{"job":{"script":7}}`), 422, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`{"job":` + minimalDesc(`"environment":"A=1"`) + `}`), 422, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`{"job":` + minimalDesc(`"time_limit":"soon"`) + `}`), 422, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`{"job":` + minimalDesc(`"tasks":1e99`) + `}`), 422, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`{"job":` + minimalDesc(`"partition":"nosuch"`) + `}`), 500, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`{"job":` + minimalDesc(`"array":"1-"`) + `}`), 422, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`{"job":` + minimalDesc(`"nodes":"x-y"`) + `}`), 422, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`{"job":` + minimalDesc(`"tres_per_node":"gres/fpga:1"`) + `}`), 422, "application/json"},
		{"POST", v44 + "/job/submit", []byte(`{"job":` + minimalDesc(`"user_id":"alice"`) + `}`), 422, "application/json"},
		{"POST", v44 + "/job/1", []byte(`{"time_limit":"abc"}`), 500, "application/json"},
		{"POST", v44 + "/job/1", []byte(`[1]`), 500, "application/json"},
		{"POST", v44 + "/job/1", []byte(`{"hold":`), 400, "text/plain"},
		{"POST", v44 + "/job/999999", []byte(`{"hold":true}`), 404, "application/json"},
		{"POST", v44 + "/job/abc", []byte(`{"hold":true}`), 404, "application/json"},
		{"POST", v44 + "/job/1_[", []byte(`{"hold":true}`), 404, "application/json"},
		{"GET", v44 + "/job/99999999999999999999", nil, 404, "application/json"},
		{"GET", v44 + "/job/1_0-2000000000", nil, 404, "application/json"},
		{"DELETE", v44 + "/job/1_0-4000000", nil, 200, "application/json"},
		{"GET", v44 + "/jobs/?update_time=-", nil, 422, "application/json"},
		{"GET", v44 + "/partition/nosuch", nil, 422, "application/json"},
		{"GET", v44 + "/node/nosuch", nil, 200, "application/json"},
		{"POST", v44 + "/node/n1", []byte(`{"state":"DRAIN"}`), 422, "application/json"},
		{"POST", v44 + "/node/n%5B1-", []byte(`{"state":["DRAIN"],"reason":"x"}`), 500, "application/json"},
		{"GET", v44 + "/nosuchendpoint", nil, 404, "text/plain"},
		{"GET", "/openapi/v3", nil, 404, "text/plain"},
	}
	for _, b := range bad {
		a := r.do(b.method, b.path, "root", b.body)
		if a.Status != b.status || a.ContentType != b.contentType {
			t.Errorf("%s %s %q: HTTP %d %s, want %d %s\n%s", b.method, b.path, b.body, a.Status, a.ContentType, b.status, b.contentType, a.Body)
		}
		if a.ContentType == "application/json" && !json.Valid(a.Body) {
			t.Errorf("%s %s: invalid JSON %q", b.method, b.path, a.Body)
		}
		// Each time: the server still answers and takes jobs.
		if p := r.do("GET", v44+"/ping/", "root", nil); p.Status != 200 {
			t.Fatalf("ping after %s %s: HTTP %d", b.method, b.path, p.Status)
		}
		ack()
	}
	// No acknowledged job was lost or changed.
	for _, id := range acked {
		j := r.c.Job(id)
		if j.State != job.Pending || j.Hold == job.NotHeld {
			t.Errorf("job %d: %v hold %v", id, j.State, j.Hold)
		}
	}
	if n := len(r.c.Ctl.Jobs(controller.JobFilter{})); n != len(acked) {
		t.Errorf("%d jobs, want the %d acknowledged ones", n, len(acked))
	}
	// And they survive a restart.
	r.c.Restart()
	for _, id := range acked {
		r.c.Job(id)
	}
}

// fuzzHandler is the real HTTP front over a controller that is not
// started (no scheduling: the fuzzer's jobs only queue) and does not
// fsync, so that an iteration costs little.
func fuzzHandler(f *testing.F) (*ctltest.Cluster, http.Handler) {
	c := ctltest.New(f, func(cfg *controller.Config) { cfg.StoreOptions = state.Options{NoSync: true} })
	c.RegisterAll()
	h, err := restapi.Handler(c.Ctl, slog.New(slog.DiscardHandler), restapi.Options{})
	if err != nil {
		f.Fatal(err)
	}
	return c, h
}

// serveInProcess sends one request to h from loopback as root.
func serveInProcess(h http.Handler, method, target string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, bytes.NewReader(body))
	req.RemoteAddr = "127.0.0.1:4000"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-SLURM-USER-NAME", "root")
	rec := httptest.NewRecorder()
	ctltest.SignAs(req, "")
	h.ServeHTTP(rec, req)
	return rec
}

// checkFuzzAnswer checks the invariants of any answer to arbitrary input:
// an expected status, a JSON envelope (or slurmrestd's fixed text), and a
// server that still answers ping.
func checkFuzzAnswer(t *testing.T, h http.Handler, rec *httptest.ResponseRecorder, statuses ...int) {
	t.Helper()
	if !slices.Contains(statuses, rec.Code) {
		t.Fatalf("HTTP %d, want one of %v: %s", rec.Code, statuses, rec.Body)
	}
	switch ct := rec.Header().Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/json"):
		var v map[string]json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("HTTP %d: body is not a JSON object: %v: %q", rec.Code, err, rec.Body)
		}
		if _, ok := v["errors"]; !ok {
			t.Fatalf("HTTP %d: no errors[] in %s", rec.Code, rec.Body)
		}
	case strings.HasPrefix(ct, "text/plain"):
		if rec.Code != 400 || rec.Body.String() != "Failure during parsing" {
			t.Fatalf("text answer HTTP %d %q", rec.Code, rec.Body)
		}
	default:
		t.Fatalf("content type %q", ct)
	}
	if p := serveInProcess(h, http.MethodGet, v44+"/ping/", nil); p.Code != 200 {
		t.Fatalf("ping after the request: HTTP %d", p.Code)
	}
}

func FuzzJobSubmitBody(f *testing.F) {
	for _, name := range []string{
		"job_submit_minimal.req.json", "job_submit_rich.req.json", "job_submit_array.req.json",
		"submit_huge_time_limit.req.json", "submit_unknown_field.req.json", "err_submit_empty_body.req.json",
		"err_submit_malformed_json.req.json", "err_submit_not_object.req.json", "err_submit_wrong_field_type.req.json",
		"err_submit_unknown_partition.req.json", "err_submit_no_environment.req.json", "err_submit_missing_script.req.json",
	} {
		f.Add(reference(f, name))
	}
	f.Add([]byte(`{"job":` + minimalDesc(`"time_limit":45,"memory_per_node":100,"array":"0-3%2"`) + `}`))
	f.Add([]byte(`{"jobs":[{"time_limit":1}],"job":{"priority":3}}`))
	c, h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		before := len(c.Ctl.Jobs(controller.JobFilter{}))
		rec := serveInProcess(h, http.MethodPost, v44+"/job/submit", body)
		checkFuzzAnswer(t, h, rec, 200, 400, 403, 422, 500)
		var v struct {
			JobID *int32 `json:"job_id"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &v)
		after := len(c.Ctl.Jobs(controller.JobFilter{}))
		// A job exists exactly when the answer is 200 with its id.
		if created := after > before; created != (rec.Code == 200 && v.JobID != nil) {
			t.Fatalf("HTTP %d job_id %v but %d -> %d jobs", rec.Code, v.JobID, before, after)
		}
	})
}

func FuzzJobUpdateBody(f *testing.F) {
	for _, name := range []string{
		"job_update_hold.req.json", "job_update_release.req.json", "job_update_time_limit.req.json",
		"job_update_time_limit_plain_number.req.json", "job_update_priority_zero.req.json",
		"err_job_update_bad_field_type.req.json", "err_submit_malformed_json.req.json",
	} {
		f.Add(reference(f, name))
	}
	f.Add([]byte(`{"name":"x","comment":"y","nice":5,"time_limit":{"infinite":true}}`))
	f.Add([]byte(`{"partition":"debug","minimum_nodes":2,"begin_time":1}`))
	c, h := fuzzHandler(f)
	id := c.Submit(ctltest.Root, ctltest.Request())
	target := fmt.Sprintf("%s/job/%d", v44, id)
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := serveInProcess(h, http.MethodPost, target, body)
		checkFuzzAnswer(t, h, rec, 200, 400, 403, 404, 422, 500)
		if rec.Code == 200 && strings.Contains(rec.Body.String(), `"results"`) {
			t.Fatalf("results in a successful update: %s", rec.Body)
		}
		// The job is still there, whatever the update did to it.
		if _, err := c.Ctl.Job(controller.JobSelector{ID: id}); err != nil {
			t.Fatalf("job %d after the update: %v", id, err)
		}
	})
}
