package v0044_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmconf"
)

func TestResources(t *testing.T) {
	r := newREST(t)
	id := r.submitRaw("root", minimalDesc(`"tres_per_node":"gres/gpu:2","memory_per_node":{"set":true,"number":500},"partition":"gpu"`))
	r.waitState(id, job.Running)
	a := r.do(http.MethodGet, fmt.Sprintf("%s/resources/%d", v44, id), "root", nil)
	if a.Status != 200 {
		t.Fatalf("HTTP %d %s", a.Status, a.Body)
	}
	nodes := asList(a.JSON(t)["nodes"])
	if len(nodes) != 1 {
		t.Fatalf("nodes %v", nodes)
	}
	n := nodes[0]
	if path(n, "mem_alloc") != 500.0 || path(n, "sockets_per_node") != 1.0 || path(n, "cores_per_socket") != 8.0 {
		t.Errorf("layout %v", n)
	}
	g := asList(path(n, "gres"))
	if len(g) != 1 || path(g[0], "name") != "gpu" || path(g[0], "count") != 2.0 || path(g[0], "index") != "0-1" {
		t.Errorf("gres %v", g)
	}
	if _, ok := n.(map[string]any)["core_bitmap"]; ok {
		t.Error("core_bitmap given, though the controller chooses no cores")
	}
	if a := r.do(http.MethodGet, v44+"/resources/999999", "root", nil); a.Status != 404 {
		t.Errorf("unknown job: HTTP %d %s", a.Status, a.Body)
	}
	held := r.submitRaw("root", minimalDesc(`"hold":true`))
	if a := r.do(http.MethodGet, fmt.Sprintf("%s/resources/%d", v44, held), "root", nil); a.Status != 200 || len(asList(a.JSON(t)["nodes"])) != 0 {
		t.Errorf("pending job: HTTP %d %s", a.Status, a.Body)
	}
}

func TestLicenses(t *testing.T) {
	r := newREST(t, func(cfg *controller.Config) { cfg.Licenses = []slurmconf.License{{Name: "fluent", Count: 10}} })
	a := r.do(http.MethodGet, v44+"/licenses/", "nobody", nil)
	if a.Status != 200 {
		t.Fatalf("HTTP %d %s", a.Status, a.Body)
	}
	got := asList(a.JSON(t)["licenses"])
	want := asList(referenceJSON(t, "licenses.json")["licenses"])
	if len(got) != 1 || len(want) != 1 {
		t.Fatalf("licenses %v", got)
	}
	for _, k := range []string{"LicenseName", "Total", "Used", "Free", "Remote", "Reserved", "LastConsumed", "LastDeficit", "LastUpdate", "Nodes"} {
		if path(got[0], k) != path(want[0], k) {
			t.Errorf("%s = %v, capture %v", k, path(got[0], k), path(want[0], k))
		}
	}
}
