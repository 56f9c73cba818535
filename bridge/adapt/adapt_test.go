package adapt_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/droverhq/drover/bridge/adapt"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/restapi"
)

// router loads a version's document for kin-openapi, without the
// "required" entries that name nested fields with a slash ("cpus/count"):
// no JSON object has such keys, real slurmrestd's answers included.
func router(t *testing.T, version string) routers.Router {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join("..", "..", "openapi", "spec", "slurmrestd-"+version+".json"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[*openapi3.Schema]bool{}
	var drop func(s *openapi3.Schema)
	drop = func(s *openapi3.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		s.Required = slices.DeleteFunc(s.Required, func(n string) bool { return strings.Contains(n, "/") })
		for _, p := range s.Properties {
			drop(p.Value)
		}
		if s.Items != nil {
			drop(s.Items.Value)
		}
		if s.AdditionalProperties.Schema != nil {
			drop(s.AdditionalProperties.Schema.Value)
		}
	}
	for _, ref := range doc.Components.Schemas {
		drop(ref.Value)
	}
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestVersionsFollowTheirSpecs asks every version served through the
// v0.0.44 bridge for the answers a dashboard reads, and a submission and
// a refused one, and checks each answer against that version's document.
func TestVersionsFollowTheirSpecs(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Now = nil })
	c.RegisterAll()
	c.Ctl.Start()
	running := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.TimeLimit = 30 }))
	waitRunning(t, c, running)
	srv := serveREST(t, c)

	for _, version := range []string{"v0.0.42", "v0.0.43", "v0.0.45"} {
		t.Run(version, func(t *testing.T) {
			rt := router(t, version)
			submit := `{"job":{"script":"#!/bin/sh\ntrue","current_working_directory":"/tmp","environment":["PATH=/bin"],"name":"v","time_limit":{"set":true,"number":5}}}`
			badSubmit := `{"job":{"script":"#!/bin/sh\ntrue","partition":"nosuch","current_working_directory":"/tmp","environment":["PATH=/bin"]}}`
			for _, q := range []struct {
				method, path, body string
				status             int
			}{
				{"GET", "/slurm/%s/jobs/", "", 200},
				{"GET", fmt.Sprintf("/slurm/%%s/job/%d", running), "", 200},
				{"GET", "/slurm/%s/job/999999", "", 404},
				{"GET", "/slurm/%s/nodes/", "", 200},
				{"GET", "/slurm/%s/node/n1", "", 200},
				{"GET", "/slurm/%s/partitions/", "", 200},
				{"GET", "/slurm/%s/ping/", "", 200},
				{"GET", "/slurm/%s/diag/", "", 200},
				{"GET", "/slurm/%s/reservations/", "", 200},
				{"GET", "/slurm/%s/shares", "", 200},
				{"GET", "/slurm/%s/licenses/", "", 200},
				{"GET", "/slurm/%s/jobs/state/", "", 200},
				{"GET", "/slurmdb/%s/qos/", "", 200},
				{"GET", "/slurmdb/%s/accounts/", "", 200},
				{"GET", "/slurmdb/%s/users/", "", 200},
				{"GET", "/slurmdb/%s/associations/", "", 200},
				{"GET", "/slurmdb/%s/tres/", "", 200},
				{"GET", "/slurmdb/%s/clusters/", "", 200},
				{"GET", "/slurmdb/%s/ping/", "", 200},
				{"GET", "/slurmdb/%s/wckeys/", "", 200},
				{"GET", "/slurmdb/%s/instances/", "", 200},
				{"GET", "/slurmdb/%s/config", "", 200},
				{"GET", "/slurmdb/%s/diag/", "", 200},
				{"GET", "/slurmdb/%s/jobs/", "", 200},
				{"POST", "/slurm/%s/job/submit", submit, 200},
				{"POST", "/slurm/%s/job/submit", badSubmit, 500},
			} {
				path := fmt.Sprintf(q.path, version)
				var body io.Reader
				if q.body != "" {
					body = strings.NewReader(q.body)
				}
				req, _ := http.NewRequest(q.method, srv.URL+path, body)
				req.Header.Set("X-SLURM-USER-NAME", "root")
				if q.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := ctltest.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != q.status {
					t.Errorf("%s %s: HTTP %d, want %d: %s", q.method, path, resp.StatusCode, q.status, b)
					continue
				}
				if !bytes.Contains(b, []byte(`"data_parser":"data_parser/`+version+`"`)) {
					t.Errorf("%s %s: answer does not name data_parser/%s", q.method, path, version)
				}
				validate(t, rt, q.method, path, q.body, resp, b)
			}
		})
	}
}

func validate(t *testing.T, rt routers.Router, method, path, body string, resp *http.Response, b []byte) {
	t.Helper()
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "application/json" {
		t.Errorf("%s %s: content type %q", method, path, resp.Header.Get("Content-Type"))
		return
	}
	req, _ := http.NewRequest(method, path, strings.NewReader(body))
	route, params, err := rt.FindRoute(req)
	if err != nil {
		t.Errorf("%s %s: not in the document: %v", method, path, err)
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
		Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(b)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		msg := err.Error()
		if len(msg) > 3000 {
			msg = msg[:3000] + "..."
		}
		t.Errorf("%s %s -> %d does not follow the document: %s", method, path, resp.StatusCode, msg)
	}
}

func TestProject(t *testing.T) {
	s := adapt.MustLoadSpec("v0.0.45")
	schema := s.ResponseSchema("SlurmV0045GetPartitions", "200")
	if schema == nil {
		t.Fatal("no schema for slurm_v0045_get_partitions")
	}
	// A v0.0.44 answer: task_binding was a number (v0.0.45 has flags),
	// max_time a {set, infinite, number} object; "extra" is unknown.
	in := map[string]any{
		"partitions": []any{map[string]any{
			"name":  "gpu",
			"cpus":  map[string]any{"task_binding": json.Number("0"), "total": json.Number("8")},
			"extra": "x",
		}},
	}
	got := s.Project(in, schema).(map[string]any)
	part := got["partitions"].([]any)[0].(map[string]any)
	if _, ok := part["extra"]; ok {
		t.Error("unknown field kept")
	}
	cpus := part["cpus"].(map[string]any)
	if tb, ok := cpus["task_binding"].([]any); !ok || len(tb) != 0 {
		t.Errorf("task_binding = %#v, want an empty flags array", cpus["task_binding"])
	}
	if cpus["total"] != json.Number("8") {
		t.Errorf("total = %#v", cpus["total"])
	}
	if lu, ok := got["last_update"].(map[string]any); !ok || lu["number"] != json.Number("0") || lu["set"] != false {
		t.Errorf("required last_update not filled: %#v", got["last_update"])
	}
	// A number where an object of {set, infinite, number} is wanted, and
	// the reverse.
	noVal := map[string]any{"type": "object", "properties": map[string]any{
		"set": map[string]any{"type": "boolean"}, "infinite": map[string]any{"type": "boolean"}, "number": map[string]any{"type": "integer"}}}
	if v := s.Project(json.Number("5"), noVal).(map[string]any); v["number"] != json.Number("5") || v["set"] != true {
		t.Errorf("number to object: %#v", v)
	}
	if v := s.Project(map[string]any{"set": true, "number": json.Number("7")}, map[string]any{"type": "integer"}); v != json.Number("7") {
		t.Errorf("object to number: %#v", v)
	}
	flags := map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"A", "B"}}}
	if v := s.Project([]any{"A", "C", "B"}, flags).([]any); len(v) != 2 {
		t.Errorf("flags outside the enum kept: %#v", v)
	}
}

// TestV0045Requeue: the requeue operations v0.0.45 adds, answered from
// the controller and checked against the document.
func TestV0045Requeue(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Now = nil })
	c.RegisterAll()
	c.Ctl.Start()
	running := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.TimeLimit = 30; r.Requeue = true }))
	waitRunning(t, c, running)
	srv := serveREST(t, c)
	rt := router(t, "v0.0.45")
	call := func(method, path, body string) (int, map[string]any) {
		return callValidated(t, srv, rt, method, path, "root", body)
	}
	code, v := call("POST", "/slurm/v0.0.45/jobs/requeue", fmt.Sprintf(`{"jobs":["%d"],"flags":["Hold"]}`, running))
	st, _ := v["status"].([]any)
	if code != 200 || len(st) != 1 {
		t.Fatalf("POST jobs/requeue: HTTP %d %v", code, v)
	}
	entry := st[0].([]any)[0].(map[string]any)
	if entry["error_code"] != 0.0 || entry["job_id"] != float64(running) {
		t.Errorf("requeue entry %v", entry)
	}
	// The running job's processes are told to end; it goes back to the
	// queue, held, once its node says they have.
	if j := c.Job(running); !j.RequeueOnEnd || !j.RequeueHold {
		t.Errorf("after requeue with Hold: requeue %v hold %v", j.RequeueOnEnd, j.RequeueHold)
	}
	if code, _ := call("GET", "/slurm/v0.0.45/job/999999/requeue", ""); code != 404 {
		t.Errorf("unknown job: HTTP %d", code)
	}
	// A pending job cannot be requeued: the refusal is in the answer.
	held := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.TimeLimit = 30 }))
	c.Ctl.Update(context.Background(), ctltest.Root, controller.JobSelector{ID: held}, controller.JobUpdate{Hold: ptr(true)})
	if code, v := call("GET", fmt.Sprintf("/slurm/v0.0.45/job/%d/requeue", held), ""); code != 500 || len(v["errors"].([]any)) != 1 {
		t.Errorf("requeue of a pending job: HTTP %d %v", code, v)
	}
}

func ptr[T any](v T) *T { return &v }

// TestV0045Refusals: v0.0.45's operations Drover cannot do yet are
// refused in the document's error shape, never 501.
func TestV0045Refusals(t *testing.T) {
	c := ctltest.New(t)
	srv := serveREST(t, c)
	rt := router(t, "v0.0.45")
	for _, q := range []struct{ method, path, body string }{
		{"GET", "/slurm/v0.0.45/reconfigure/", ""},
	} {
		req, _ := http.NewRequest(q.method, srv.URL+q.path, strings.NewReader(q.body))
		req.Header.Set("X-SLURM-USER-NAME", "root")
		if q.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := ctltest.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 500 || !bytes.Contains(b, []byte(`"error_number":2036`)) {
			t.Errorf("%s %s: HTTP %d %s", q.method, q.path, resp.StatusCode, b)
			continue
		}
		validate(t, rt, q.method, q.path, q.body, resp, b)
	}
}

// TestV0045Conf: GET /conf dumps slurm.conf typed as the document wants,
// defaults filled; GET /slurmdb/conf names the controller, which keeps
// the accounting.
func TestV0045Conf(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(conf, []byte("ClusterName=testcluster\nSlurmctldHost=ctl(127.0.0.1)\nSlurmctldPort=7000\n"+
		"PrivateData=jobs,usage\nDefMemPerCPU=100\nJobRequeue=0\nTrackWCKey=yes\nAccountingStorageEnforce=associations,limits\n"+
		"NodeName=n1 CPUs=4\nPartitionName=p Nodes=n1 Default=YES\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.SlurmConfPath = conf })
	srv := serveREST(t, c)
	rt := router(t, "v0.0.45")
	get := func(p string) map[string]any {
		req, _ := http.NewRequest("GET", srv.URL+p, nil)
		req.Header.Set("X-SLURM-USER-NAME", "root")
		resp, err := ctltest.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: HTTP %d %s", p, resp.StatusCode, b)
		}
		validate(t, rt, "GET", p, "", resp, b)
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	v := get("/slurm/v0.0.45/conf")
	sc, _ := v["slurm_conf"].(map[string]any)
	for name, want := range map[string]any{
		"ClusterName":   "testcluster",
		"SlurmctldPort": 7000.0,
		"SlurmdPort":    6818.0, // Slurm's default
		"JobRequeue":    false,
		"SlurmUser":     "root",
		"SlurmUserId":   0.0,
		"KillWait":      30.0,
		"SchedulerType": "sched/backfill",
	} {
		if sc[name] != want {
			t.Errorf("%s: %v, want %v", name, sc[name], want)
		}
	}
	if got := fmt.Sprint(sc["PrivateData"]); got != "[jobs usage]" {
		t.Errorf("PrivateData: %s", got)
	}
	if got := fmt.Sprint(sc["AccountingStorageEnforce"]); got != "[associations limits]" {
		t.Errorf("AccountingStorageEnforce: %s", got)
	}
	if got := fmt.Sprint(sc["ConfFlags"]); got != "[TrackWCKey]" {
		t.Errorf("ConfFlags: %s", got)
	}
	if got := fmt.Sprint(sc["DefMemPerCPU"]); got != "map[infinite:false number:100 set:true]" {
		t.Errorf("DefMemPerCPU: %s", got)
	}
	if got := fmt.Sprint(sc["controllers"]); got != "[map[address:127.0.0.1 machine:ctl]]" {
		t.Errorf("controllers: %s", got)
	}
	if m, _ := v["slurm_conf_meta"].(map[string]any); m["SLURM_CONF"] != conf {
		t.Errorf("slurm_conf_meta: %v", m)
	}
	db := get("/slurmdb/v0.0.45/conf")
	if d, _ := db["slurmdbd_conf"].(map[string]any); d["TrackWCKey"] != false || d["DefaultQOS"] != "normal" {
		t.Errorf("slurmdbd_conf: %v", d)
	}
}

// TestV0045Partitions: POST /partitions/ makes and changes partitions
// (only the members given), DELETE takes one away unless a job is in it,
// and what was set outlives a restart. Each refusal is slurmctld's.
func TestV0045Partitions(t *testing.T) {
	c := ctltest.New(t)
	srv := serveREST(t, c)
	rt := router(t, "v0.0.45")
	call := func(method, p, user, body string) (int, map[string]any) {
		return callValidated(t, srv, rt, method, p, user, body)
	}
	errNo := func(v map[string]any) float64 {
		errs, _ := v["errors"].([]any)
		if len(errs) == 0 {
			return 0
		}
		n, _ := errs[0].(map[string]any)["error_number"].(float64)
		return n
	}
	post := func(user, body string) (int, map[string]any) {
		return call("POST", "/slurm/v0.0.45/partitions/", user, `{"partitions":[`+body+`]}`)
	}
	if code, v := post("root", `{"name":"extra","nodes":{"configured":"n[1-2]"},"maximums":{"time":{"set":true,"number":60}},"flags":["HIDDEN"]}`); code != 200 || errNo(v) != 0 {
		t.Fatalf("create extra: HTTP %d %v", code, v)
	}
	if code, v := post("root", `{"name":"extra","partition":{"state":["DOWN"]}}`); code != 200 || errNo(v) != 0 {
		t.Errorf("update extra: HTTP %d %v", code, v)
	}
	p, err := c.Ctl.Partition("extra")
	if err != nil || p.Partition.State != partition.Down || p.Partition.MaxTime != 60 || !p.Partition.Hidden || strings.Join(p.Partition.Nodes, ",") != "n1,n2" {
		t.Errorf("extra after create and update: %+v %v", p.Partition, err)
	}
	for _, q := range []struct {
		user, body string
		want       float64
	}{
		{"nobody", `{"name":"other"}`, 2010},
		{"root", `{"name":"other","nodes":{"configured":"n9"}}`, 2018},
		{"root", `{"name":"bad","defaults":{"time":{"set":true,"number":90}},"maximums":{"time":{"set":true,"number":30}}}`, 2051},
	} {
		if code, v := post(q.user, q.body); code == 200 || errNo(v) != q.want {
			t.Errorf("%s as %s: HTTP %d %v, want error %v", q.body, q.user, code, v, q.want)
		}
	}
	held := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.Partition = "debug" }))
	c.Ctl.Update(context.Background(), ctltest.Root, controller.JobSelector{ID: held}, controller.JobUpdate{Hold: ptr(true)})
	if code, v := call("DELETE", "/slurm/v0.0.45/partition/debug", "root", ""); code == 200 || errNo(v) != 2075 {
		t.Errorf("delete a partition in use: HTTP %d %v", code, v)
	}
	if code, v := call("DELETE", "/slurm/v0.0.45/partition/gpu", "root", ""); code != 200 {
		t.Errorf("delete gpu: HTTP %d %v", code, v)
	}
	c.Close()
	c.Open()
	if _, err := c.Ctl.Partition("gpu"); err == nil {
		t.Errorf("gpu is back after a restart")
	}
	if p, err := c.Ctl.Partition("extra"); err != nil || p.Partition.State != partition.Down {
		t.Errorf("extra after a restart: %+v %v", p.Partition, err)
	}
}

// serveREST serves c's REST API for the test's length.
func serveREST(t *testing.T, c *ctltest.Cluster) *httptest.Server {
	t.Helper()
	h, err := restapi.Handler(c.Ctl, slog.New(slog.DiscardHandler), restapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// waitRunning waits until the controller's loops have started job id.
func waitRunning(t *testing.T, c *ctltest.Cluster, id job.ID) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); c.Job(id).State != job.Running; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job %d did not start", id)
		}
	}
}

// callValidated sends one request as user, checks the answer against
// rt's document and decodes it.
func callValidated(t *testing.T, srv *httptest.Server, rt routers.Router, method, path, user, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("X-SLURM-USER-NAME", user)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := ctltest.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	validate(t, rt, method, path, body, resp, b)
	var v map[string]any
	json.Unmarshal(b, &v)
	return resp.StatusCode, v
}
