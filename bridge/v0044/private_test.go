package v0044_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/droverhq/drover/internal/controller"
)

// TestPrivateDataJobs: with PrivateData=jobs a user lists and reads only
// their own jobs; root sees every job. Each refusal is Slurm's access
// denied.
func TestPrivateDataJobs(t *testing.T) {
	r := newREST(t, func(cfg *controller.Config) { cfg.PrivateData = []string{"jobs"} })
	mine := r.submitRaw("nobody", minimalDesc(`"hold":true,"current_working_directory":"/tmp"`))
	theirs := r.submitRaw("root", minimalDesc(`"hold":true`))
	ids := func(user, p string) []float64 {
		a := r.do(http.MethodGet, v44+p, user, nil)
		if a.Status != 200 {
			t.Fatalf("%s as %s: HTTP %d %s", p, user, a.Status, a.Body)
		}
		var out []float64
		for _, j := range asList(a.JSON(t)["jobs"]) {
			out = append(out, path(j, "job_id").(float64))
		}
		return out
	}
	for _, p := range []string{"/jobs/", "/jobs/state/"} {
		if got := ids("nobody", p); len(got) != 1 || got[0] != float64(mine) {
			t.Errorf("%s as nobody: %v, want only %d", p, got, mine)
		}
		if got := ids("root", p); len(got) != 2 {
			t.Errorf("%s as root: %v", p, got)
		}
	}
	for _, p := range []string{fmt.Sprintf("/job/%d", theirs), fmt.Sprintf("/jobs/state/?job_id=%d", theirs), fmt.Sprintf("/resources/%d", theirs)} {
		a := r.do(http.MethodGet, v44+p, "nobody", nil)
		errs := asList(a.JSON(t)["errors"])
		if a.Status != 403 || len(errs) != 1 || path(errs[0], "error_number") != 2002.0 {
			t.Errorf("%s as nobody: HTTP %d %s", p, a.Status, a.Body)
		}
	}
	if a := r.do(http.MethodGet, fmt.Sprintf("%s/job/%d", v44, mine), "nobody", nil); a.Status != 200 {
		t.Errorf("own job: HTTP %d", a.Status)
	}
}

// TestPrivateDataNodesPartitionsUsage: PrivateData=nodes and partitions
// refuse those queries to users whole (access denied, as slurmctld
// refuses the RPC), and usage keeps a user to their own associations in
// shares; root and operators see everything.
func TestPrivateDataNodesPartitionsUsage(t *testing.T) {
	r := newREST(t, func(cfg *controller.Config) { cfg.PrivateData = []string{"nodes", "partitions", "usage"} })
	for _, p := range []string{"/nodes/", "/node/n1", "/partitions/", "/partition/gpu"} {
		a := r.do(http.MethodGet, v44+p, "nobody", nil)
		errs := asList(a.JSON(t)["errors"])
		if a.Status != 403 || len(errs) != 1 || path(errs[0], "error_number") != 2002.0 {
			t.Errorf("%s as nobody: HTTP %d %s", p, a.Status, a.Body)
		}
		if a := r.do(http.MethodGet, v44+p, "root", nil); a.Status != 200 {
			t.Errorf("%s as root: HTTP %d %s", p, a.Status, a.Body)
		}
	}
	shares := func(r *rest, user string) []any {
		a := r.do(http.MethodGet, v44+"/shares", user, nil)
		if a.Status != 200 {
			t.Fatalf("shares as %s: HTTP %d %s", user, a.Status, a.Body)
		}
		return asList(path(a.JSON(t), "shares", "shares"))
	}
	if all := shares(r, "root"); len(all) < 2 {
		t.Errorf("shares as root: %d rows", len(all))
	}
	for _, row := range shares(r, "nobody") {
		if path(row, "name") != "nobody" {
			t.Errorf("shares as nobody lists %v", path(row, "name"))
		}
	}
	op := newREST(t, func(cfg *controller.Config) {
		cfg.PrivateData = []string{"nodes", "usage"}
		cfg.Operators = []string{"nobody"}
	})
	if a := op.do(http.MethodGet, v44+"/nodes/", "nobody", nil); a.Status != 200 {
		t.Errorf("nodes as an operator: HTTP %d %s", a.Status, a.Body)
	}
	if mine, all := len(shares(op, "nobody")), len(shares(op, "root")); mine != all {
		t.Errorf("an operator sees %d share rows, root %d", mine, all)
	}
}
