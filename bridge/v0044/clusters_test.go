package v0044_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/slurmconf"
)

// TestSlurmdbCluster answers slurmdbd's questions about the cluster from
// the controller, in slurmdbd's shapes (checked against the spec by the
// harness): TRES numbered as slurmdbd numbers them (the capture's ids),
// the one cluster with its totals, and empty WCKeys and instances.
func TestSlurmdbCluster(t *testing.T) {
	r := newREST(t, func(cfg *controller.Config) { cfg.TRES = slurmconf.AccountingTRES("gres/gpu") })
	a := r.do(http.MethodGet, db44+"/tres/", "nobody", nil)
	if a.Status != 200 {
		t.Fatalf("tres: HTTP %d %s", a.Status, a.Body)
	}
	type tres struct {
		Type, Name string
		ID         float64
	}
	var got, want []tres
	for _, x := range asList(path(a.JSON(t), "TRES")) {
		got = append(got, tres{path(x, "type").(string), path(x, "name").(string), path(x, "id").(float64)})
	}
	for _, x := range asList(path(referenceJSON(t, "slurmdb_tres.json"), "TRES")) {
		want = append(want, tres{path(x, "type").(string), path(x, "name").(string), path(x, "id").(float64)})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("TRES (-capture +got):\n%s", diff)
	}

	a = r.do(http.MethodGet, db44+"/clusters/", "nobody", nil)
	cl := asList(path(a.JSON(t), "clusters"))
	if a.Status != 200 || len(cl) != 1 {
		t.Fatalf("clusters: HTTP %d %s", a.Status, a.Body)
	}
	name := path(cl[0], "name").(string)
	counts := map[string]float64{}
	for _, x := range asList(path(cl[0], "tres")) {
		counts[path(x, "type").(string)] = path(x, "count").(float64)
	}
	if counts["cpu"] != 32 || counts["node"] != 4 || counts["mem"] != 64000 {
		t.Errorf("cluster TRES counts %v", counts)
	}
	if path(cl[0], "associations", "root", "account") != "root" || path(cl[0], "nodes") != "n[1-4]" {
		t.Errorf("cluster %v", cl[0])
	}
	if a := r.do(http.MethodGet, db44+"/cluster/"+name, "nobody", nil); a.Status != 200 || len(asList(path(a.JSON(t), "clusters"))) != 1 {
		t.Errorf("cluster/%s: HTTP %d %s", name, a.Status, a.Body)
	}
	if a := r.do(http.MethodGet, db44+"/cluster/elsewhere", "nobody", nil); a.Status != 200 || len(asList(path(a.JSON(t), "clusters"))) != 0 {
		t.Errorf("cluster/elsewhere: HTTP %d %s", a.Status, a.Body)
	}
	for _, p := range []struct{ path, list string }{
		{"/wckeys/", "wckeys"}, {"/wckey/abc", "wckeys"}, {"/instances/", "instances"}, {"/instance/", "instances"},
	} {
		if a := r.do(http.MethodGet, db44+p.path, "nobody", nil); a.Status != 200 || len(asList(path(a.JSON(t), p.list))) != 0 {
			t.Errorf("%s: HTTP %d %s", p.path, a.Status, a.Body)
		}
	}
	a = r.do(http.MethodGet, db44+"/ping/", "nobody", nil)
	if a.Status != 200 || path(asList(path(a.JSON(t), "pings"))[0], "responding") != true {
		t.Errorf("ping: HTTP %d %s", a.Status, a.Body)
	}
}

// TestSlurmdbConfigAndJobs: the configuration dump holds what the
// separate queries answer, with the cluster's TRES as a cluster lists
// them (no dynamic_offset); slurmdb's job queries find nothing yet, in
// slurmdbd's words (the capture of an unknown job).
func TestSlurmdbConfigAndJobs(t *testing.T) {
	r := newREST(t, func(cfg *controller.Config) { cfg.TRES = slurmconf.AccountingTRES("gres/gpu") })
	a := r.do(http.MethodGet, db44+"/config", "root", nil)
	if a.Status != 200 {
		t.Fatalf("config: HTTP %d %s", a.Status, a.Body)
	}
	v := a.JSON(t)
	for _, k := range []string{"clusters", "tres", "accounts", "users", "qos", "associations"} {
		if len(asList(v[k])) == 0 {
			t.Errorf("config: no %s", k)
		}
	}
	for _, x := range asList(path(asList(v["clusters"])[0], "tres")) {
		if path(x, "type") == "dynamic_offset" {
			t.Error("a cluster's TRES list dynamic_offset")
		}
	}
	want := referenceJSON(t, "err_slurmdb_job_unknown.json")
	for _, p := range []string{"/jobs/", "/job/125"} {
		a := r.do(http.MethodGet, db44+p, "root", nil)
		if a.Status != 200 {
			t.Fatalf("%s: HTTP %d %s", p, a.Status, a.Body)
		}
		got := a.JSON(t)
		if diff := cmp.Diff(want["warnings"], got["warnings"]); diff != "" || len(asList(got["jobs"])) != 0 {
			t.Errorf("%s (-capture +got):\n%s", p, diff)
		}
	}
}

func TestSlurmdbDiag(t *testing.T) {
	r := newREST(t)
	r.do(http.MethodGet, db44+"/tres/", "root", nil)
	r.do(http.MethodGet, db44+"/tres/", "root", nil)
	a := r.do(http.MethodGet, db44+"/diag/", "root", nil)
	if a.Status != 200 {
		t.Fatalf("HTTP %d %s", a.Status, a.Body)
	}
	found := false
	for _, x := range asList(path(a.JSON(t), "statistics", "RPCs")) {
		if path(x, "rpc") == "DBD_GET_TRES" {
			found = path(x, "count") == 2.0
		}
		if path(x, "rpc") == "REQUEST_PING" {
			t.Error("a slurmctld request among slurmdbd's")
		}
	}
	if !found {
		t.Errorf("DBD_GET_TRES not counted twice: %s", a.Body)
	}
}
