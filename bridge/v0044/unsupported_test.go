package v0044_test

import (
	"net/http"
	"testing"
)

// TestUnsupportedOperations: what Drover cannot do yet is refused in
// slurmrestd's error shape with Slurm's "not supported" error (checked
// against the spec by the harness), never ogen's 501.
func TestUnsupportedOperations(t *testing.T) {
	r := newREST(t)
	for _, q := range []struct{ method, path, body string }{
		{"GET", v44 + "/reconfigure/", ""},
		{"POST", db44 + "/tres/", `{"TRES":[]}`},
		{"POST", db44 + "/clusters/", `{"clusters":[]}`},
		{"DELETE", db44 + "/cluster/x", ""},
		{"POST", db44 + "/wckeys/", `{"wckeys":[]}`},
		{"DELETE", db44 + "/wckey/1", ""},
		{"POST", db44 + "/config", `{}`},
		{"POST", db44 + "/job/1", `{}`},
		{"POST", db44 + "/jobs/", `{"jobs":[]}`},
	} {
		var body []byte
		if q.body != "" {
			body = []byte(q.body)
		}
		a := r.do(q.method, q.path, "root", body)
		if a.Status != http.StatusInternalServerError {
			t.Errorf("%s %s: HTTP %d %s", q.method, q.path, a.Status, a.Body)
			continue
		}
		errs := asList(a.JSON(t)["errors"])
		if len(errs) != 1 || path(errs[0], "error_number") != 2036.0 || path(errs[0], "description") == "" {
			t.Errorf("%s %s: errors %v", q.method, q.path, errs)
		}
	}
}
