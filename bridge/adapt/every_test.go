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
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/restapi"
)

// TestEveryOperation drives every operation of every served version, as
// its document lists them, with the path parameters naming things that
// exist and an empty object for a body, and checks every answer against
// the document: status, content type and schema, error answers included.
// Deletions run last, so that they find what the others used.
func TestEveryOperation(t *testing.T) {
	if testing.Short() {
		t.Skip("drives some 270 operations")
	}
	c := ctltest.New(t, func(cfg *controller.Config) { cfg.Now = nil })
	c.RegisterAll()
	c.Ctl.Start()
	running := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.TimeLimit = 30 }))
	for deadline := time.Now().Add(10 * time.Second); c.Job(running).State != job.Running; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job %d did not start", running)
		}
	}
	h, err := restapi.Handler(c.Ctl, slog.New(slog.DiscardHandler), restapi.Options{TrustLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	params := map[string]string{
		"job_id": "1", "node_name": "n1", "partition_name": "gpu", "reservation_name": "none",
		"qos": "normal", "account_name": "root", "name": "root", "cluster_name": c.Ctl.ClusterName(), "id": "1",
	}
	for _, version := range []string{"v0.0.42", "v0.0.43", "v0.0.44", "v0.0.45"} {
		t.Run(version, func(t *testing.T) {
			rt := router(t, version)
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
			type op struct{ method, path, body string }
			var ops []op
			for p, item := range doc.Paths {
				for m, raw := range item {
					m = strings.ToUpper(m)
					if m != "GET" && m != "POST" && m != "DELETE" {
						continue
					}
					body := ""
					if strings.Contains(string(raw), `"requestBody"`) {
						body = "{}"
					}
					for k, v := range params {
						p = strings.ReplaceAll(p, "{"+k+"}", v)
					}
					ops = append(ops, op{m, p, body})
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
				resp, err := http.DefaultClient.Do(req)
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
			}
		})
	}
}
