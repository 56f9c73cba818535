package v0044_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestJobsState lists ids and states as slurmrestd's jobs/state/ does: a
// pending array one record per task; every record has the spec's job_id
// and job_state and real slurmrestd's "state" (checked against the spec
// by the harness).
func TestJobsState(t *testing.T) {
	r := newREST(t)
	single := r.submitRaw("root", minimalDesc(`"hold":true`))
	array := r.submitRaw("root", minimalDesc(`"hold":true,"array":"0-2"`))
	a := r.do(http.MethodGet, v44+"/jobs/state/", "root", nil)
	if a.Status != 200 {
		t.Fatalf("HTTP %d %s", a.Status, a.Body)
	}
	type rec struct {
		ID, Task float64
		State    string
	}
	var got []rec
	for _, j := range asList(a.JSON(t)["jobs"]) {
		st := asList(path(j, "state"))
		if diff := cmp.Diff(path(j, "job_state"), path(j, "state")); diff != "" || len(st) == 0 {
			t.Errorf("state and job_state differ: %s", diff)
			continue
		}
		task, _ := path(j, "array_task_id", "number").(float64)
		got = append(got, rec{path(j, "job_id").(float64), task, st[0].(string)})
	}
	want := []rec{{float64(single), 0, "PENDING"}, {float64(array), 0, "PENDING"}, {float64(array), 1, "PENDING"}, {float64(array), 2, "PENDING"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	a = r.do(http.MethodGet, fmt.Sprintf("%s/jobs/state/?job_id=%d", v44, single), "root", nil)
	if n := len(asList(a.JSON(t)["jobs"])); a.Status != 200 || n != 1 {
		t.Errorf("job_id=%d: HTTP %d, %d records", single, a.Status, n)
	}
	if a := r.do(http.MethodGet, v44+"/jobs/state/?job_id=999999", "root", nil); a.Status != 404 {
		t.Errorf("unknown job: HTTP %d %s", a.Status, a.Body)
	}
}
