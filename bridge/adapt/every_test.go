package adapt_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/restapi"
)

// TestEveryOperation drives every operation of every served version, as
// its document lists them, and checks every answer against the document:
// status, content type and schema, error answers included. Path
// parameters name things that exist (made per version where an operation
// deletes them); each write carries a body a real client sends (the
// request is checked against the document too) and must succeed, except
// the ones Drover refuses (listed in docs/REST.md), which get an empty
// object. Deletions run last, so that they find what the others made.
func TestEveryOperation(t *testing.T) {
	if testing.Short() {
		t.Skip("drives some 270 operations")
	}
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Now = nil })
	c.RegisterAll()
	c.Ctl.Start()
	running := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.TimeLimit = 30 }))
	waitRunning(t, c, running)
	srv := serveREST(t, c)
	for _, version := range []string{"v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"} {
		t.Run(version, func(t *testing.T) {
			rt := router(t, version)
			v := strings.ReplaceAll(strings.TrimPrefix(version, "v0.0."), ".", "")
			res, err := c.Ctl.Submit(context.Background(), ctltest.Root, controller.Submission{Req: ctltest.Request(), Hold: true})
			if err != nil {
				t.Fatal(err)
			}
			params := map[string]string{
				"job_id": strconv.Itoa(int(res.JobID)), "node_name": "n1", "partition_name": "p" + v, "reservation_name": "r" + v,
				"qos": "q" + v, "account_name": "a" + v, "name": "nobody", "cluster_name": c.Ctl.ClusterName(), "id": "1",
			}
			bodies := writeBodies(v, c.Ctl.ClusterName())
			res, err = c.Ctl.Submit(context.Background(), ctltest.Root, controller.Submission{Req: ctltest.Request(), Hold: true})
			if err != nil {
				t.Fatal(err)
			}
			bodies["DELETE /slurm/jobs/"] = write{`{"jobs":["` + strconv.Itoa(int(res.JobID)) + `"],"signal":"SIGKILL"}`, true}
			var doc struct {
				Paths map[string]map[string]json.RawMessage `json:"paths"`
			}
			b, err := os.ReadFile(filepath.Join("..", "..", "openapi", "spec", "slurmrestd-"+version+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			type op struct {
				method, path, body string
				ok                 bool // must succeed
			}
			var ops []op
			for p, item := range doc.Paths {
				for m, raw := range item {
					m = strings.ToUpper(m)
					if m != "GET" && m != "POST" && m != "DELETE" {
						continue
					}
					key := m + " " + strings.Replace(strings.Replace(p, "/"+version, "", 1), "v0.0.", "", 1)
					w, known := bodies[key]
					body := w.body
					if !known && strings.Contains(string(raw), `"requestBody"`) {
						body = "{}"
					}
					for k, v := range params {
						p = strings.ReplaceAll(p, "{"+k+"}", v)
					}
					ops = append(ops, op{m, p, body, known && w.ok})
				}
			}
			sort.Slice(ops, func(i, j int) bool {
				di, dj := ops[i].method == "DELETE", ops[j].method == "DELETE"
				if di != dj {
					return dj
				}
				return ops[i].method+ops[i].path < ops[j].method+ops[j].path
			})
			for _, o := range ops {
				req, _ := http.NewRequestWithContext(context.Background(), o.method, srv.URL+o.path, strings.NewReader(o.body))
				req.Header.Set("X-SLURM-USER-NAME", "root")
				if o.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := ctltest.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusNotImplemented {
					t.Errorf("%s %s: 501", o.method, o.path)
					continue
				}
				validate(t, rt, o.method, o.path, o.body, resp, body)
				if o.body != "" && o.body != "{}" {
					validateRequest(t, rt, o.method, o.path, o.body)
				}
				if o.ok {
					var env struct {
						Errors []any `json:"errors"`
					}
					if json.Unmarshal(body, &env); resp.StatusCode != 200 || len(env.Errors) > 0 {
						t.Errorf("%s %s %s: HTTP %d %s", o.method, o.path, o.body, resp.StatusCode, body)
					}
				}
			}
		})
	}
}

// write is a request body for an operation, and whether it must succeed.
type write struct {
	body string
	ok   bool
}

// writeBodies are the bodies of the writes, keyed "METHOD path" with the
// version left out of the path; v ("42") keeps the names each version
// makes apart. They are what real clients send: the submission and
// reservation come from the captures of real slurmrestd requests.
func writeBodies(v, cluster string) map[string]write {
	start := time.Now().Add(time.Hour).Unix()
	resv := `{"name":"r` + v + `","start_time":{"set":true,"number":` + strconv.FormatInt(start, 10) + `},"duration":{"set":true,"number":60},` +
		`"node_list":["n4"],"users":["root"],"flags":["MAINT","IGNORE_JOBS"]}`
	job := `{"name":"conformance","partition":"debug","account":"root","qos":"normal","script":"#!/bin/bash\nsrun hostname\n",` +
		`"current_working_directory":"/tmp","environment":["PATH=/usr/bin:/bin","HOME=/tmp"],"tasks":2,"cpus_per_task":1,` +
		`"minimum_nodes":1,"memory_per_node":{"set":true,"number":200},"time_limit":{"set":true,"infinite":false,"number":15},` +
		`"standard_output":"/tmp/conf_%j.out","comment":"conformance","hold":true,"requeue":false,"mail_type":["END","FAIL"]}`
	return map[string]write{
		"POST /slurm/job/submit": {`{"job":` + job + `}`, true},
		"POST /slurm/job/allocate": {`{"job":{"name":"interactive","partition":"debug","current_working_directory":"/tmp",` +
			`"environment":["PATH=/usr/bin:/bin"],"tasks":1,"time_limit":{"set":true,"infinite":false,"number":5},"hold":true}}`, true},
		"POST /slurm/job/{job_id}":                     {`{"time_limit":{"set":true,"infinite":false,"number":30},"comment":"updated"}`, true},
		"DELETE /slurm/job/{job_id}":                   {"", true},
		"POST /slurm/node/{node_name}":                 {`{"state":["DRAIN"],"reason":"conformance"}`, true},
		"POST /slurm/nodes/":                           {`{"name":["n1"],"state":["UNDRAIN"]}`, true},
		"POST /slurm/reservation":                      {resv, true},
		"POST /slurm/reservations/":                    {`{"reservations":[` + strings.Replace(resv, `"duration":{"set":true,"number":60}`, `"duration":{"set":true,"number":90}`, 1) + `]}`, true},
		"DELETE /slurm/reservation/{reservation_name}": {"", true},
		"POST /slurm/new/node/":                        {`{"node_conf":"NodeName=dyn` + v + ` CPUs=2 RealMemory=1000 State=FUTURE"}`, true},
		"POST /slurm/partitions/":                      {`{"partitions":[{"name":"p` + v + `","nodes":{"configured":"n[1-2]"},"maximums":{"time":{"set":true,"number":60}}}]}`, true},
		"DELETE /slurm/partition/{partition_name}":     {"", true},
		"POST /slurmdb/qos/":                           {`{"qos":[{"name":"q` + v + `","description":"conformance","priority":{"set":true,"number":10}}]}`, true},
		"DELETE /slurmdb/qos/{qos}":                    {"", true},
		"POST /slurmdb/accounts/":                      {`{"accounts":[{"name":"a` + v + `","description":"conformance","organization":"drover"}]}`, true},
		"POST /slurmdb/accounts_association/": {`{"association_condition":{"accounts":["b` + v + `"],"clusters":["` + cluster + `"],` +
			`"association":{"parent_account":"root"}},"account":{"description":"conformance","organization":"drover"}}`, true},
		"POST /slurmdb/associations/": {`{"associations":[{"account":"a` + v + `","cluster":"` + cluster + `","user":"","parent_account":"root"}]}`, true},
		"POST /slurmdb/users_association/": {`{"association_condition":{"accounts":["b` + v + `"],"users":["nobody"],"clusters":["` + cluster + `"]},` +
			`"user":{"default":{"account":"b` + v + `"}}}`, true},
		"POST /slurmdb/users/":                   {`{"users":[{"name":"root","default":{"account":"root"}}]}`, true},
		"POST /slurmdb/tres/":                    {`{"TRES":[{"type":"cpu"},{"type":"mem"}]}`, true},
		"POST /slurmdb/clusters/":                {`{"clusters":[{"name":"` + cluster + `"}]}`, true},
		"POST /slurmdb/config":                   {`{"accounts":[{"name":"c` + v + `","description":"loaded","organization":"drover"}],"qos":[{"name":"normal"}]}`, true},
		"DELETE /slurmdb/user/{name}":            {"", true},
		"DELETE /slurmdb/account/{account_name}": {"", true},
	}
}

// validateRequest checks a request body against the document.
func validateRequest(t *testing.T, rt routers.Router, method, path, body string) {
	t.Helper()
	req, _ := http.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	route, params, err := rt.FindRoute(req)
	if err != nil {
		t.Errorf("%s %s: not in the document: %v", method, path, err)
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
		msg := err.Error()
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		t.Errorf("%s %s: the request does not follow the document: %s", method, path, msg)
	}
}

// FuzzEveryOperation sends arbitrary bodies to every write of every
// version: each is answered (no panic, never 501) in JSON or slurmrestd's
// plain-text refusals, and the controller keeps serving.
func FuzzEveryOperation(f *testing.F) {
	c := ctltest.New(f, func(cfg *controller.Config) { cfg.Now = nil })
	c.RegisterAll()
	h, err := restapi.Handler(c.Ctl, slog.New(slog.DiscardHandler), restapi.Options{})
	if err != nil {
		f.Fatal(err)
	}
	var paths []string
	for key := range writeBodies("0", c.Ctl.ClusterName()) {
		paths = append(paths, key)
	}
	sort.Strings(paths)
	for i, key := range paths {
		f.Add(uint8(i), uint8(2), []byte(writeBodies("0", c.Ctl.ClusterName())[key].body))
	}
	f.Add(uint8(0), uint8(0), []byte(`{"job":{"script":7}}`))
	f.Add(uint8(1), uint8(1), []byte(`[]`))
	versions := []string{"v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"}
	params := strings.NewReplacer("{job_id}", "1", "{node_name}", "n1", "{partition_name}", "debug", "{reservation_name}", "r",
		"{qos}", "normal", "{account_name}", "root", "{name}", "root")
	f.Fuzz(func(t *testing.T, op, version uint8, body []byte) {
		method, p, _ := strings.Cut(paths[int(op)%len(paths)], " ")
		v := versions[int(version)%len(versions)]
		prefix, rest, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		url := "/" + prefix + "/" + v + "/" + params.Replace(rest)
		req := httptest.NewRequest(method, url, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-SLURM-USER-NAME", "root")
		req.RemoteAddr = "127.0.0.1:1234"
		rec := httptest.NewRecorder()
		ctltest.SignAs(req, "")
		h.ServeHTTP(rec, req)
		ct := rec.Header().Get("Content-Type")
		if rec.Code == http.StatusNotImplemented || (!strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/plain")) {
			t.Fatalf("%s %s %q: HTTP %d %q %s", method, url, body, rec.Code, ct, rec.Body.String())
		}
		if strings.HasPrefix(ct, "application/json") && !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s %q: invalid JSON answer %s", method, url, body, rec.Body.String())
		}
	})
}
