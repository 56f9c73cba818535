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
		{"DELETE", db44 + "/cluster/x", ""},
		{"POST", db44 + "/wckeys/", `{"wckeys":[]}`},
		{"DELETE", db44 + "/wckey/1", ""},
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

// TestLoadConfig: POST config loads QOS, accounts, users and associations
// in one change (what GET config dumps loads back as it is); clusters and
// TRES are accepted when they are this cluster's and refused otherwise,
// as are WCKeys.
func TestLoadConfig(t *testing.T) {
	r := newREST(t)
	dump := r.do("GET", db44+"/config", "root", nil)
	if dump.Status != http.StatusOK {
		t.Fatalf("GET config: HTTP %d %s", dump.Status, dump.Body)
	}
	if a := r.do("POST", db44+"/config", "root", dump.Body); a.Status != http.StatusOK || len(asList(a.JSON(t)["errors"])) != 0 {
		t.Errorf("POST config of GET config: HTTP %d %s", a.Status, a.Body)
	}
	cluster := r.c.Ctl.ClusterName()
	load := `{"qos":[{"name":"fast","priority":{"set":true,"number":5}}],"accounts":[{"name":"lab","description":"a lab","organization":"uni"}],` +
		`"associations":[{"account":"lab","cluster":"` + cluster + `","user":"","parent_account":"root","qos":["fast","normal"]},` +
		`{"account":"lab","cluster":"` + cluster + `","user":"nobody"}],"users":[{"name":"nobody","default":{"account":"lab"}}]}`
	if a := r.do("POST", db44+"/config", "root", []byte(load)); a.Status != http.StatusOK || len(asList(a.JSON(t)["errors"])) != 0 {
		t.Fatalf("POST config: HTTP %d %s", a.Status, a.Body)
	}
	m := r.c.Ctl.Accounting()
	if _, ok := m.QOS("fast"); !ok {
		t.Errorf("QOS fast not loaded")
	}
	if u, ok := m.User("nobody"); !ok || u.DefaultAccount != "lab" {
		t.Errorf("user nobody: %+v %v", u, ok)
	}
	if _, ok := m.Assoc("lab", "nobody", ""); !ok {
		t.Errorf("association lab/nobody not loaded")
	}
	for _, q := range []struct{ path, body string }{
		{"/config", `{"clusters":[{"name":"elsewhere"}]}`},
		{"/config", `{"wckeys":[{"name":"w","user":"nobody","cluster":"` + cluster + `"}]}`},
		{"/config", `{"tres":[{"type":"gres","name":"fpga"}]}`},
		{"/clusters/", `{"clusters":[{"name":"elsewhere"}]}`},
		{"/tres/", `{"TRES":[{"type":"gres","name":"fpga"}]}`},
	} {
		a := r.do("POST", db44+q.path, "root", []byte(q.body))
		errs := asList(a.JSON(t)["errors"])
		if a.Status == http.StatusOK || len(errs) != 1 || path(errs[0], "error_number") != 2036.0 {
			t.Errorf("POST %s %s: HTTP %d %s", q.path, q.body, a.Status, a.Body)
		}
	}
	for _, q := range []struct{ path, body string }{
		{"/clusters/", `{"clusters":[{"name":"` + cluster + `"}]}`},
		{"/tres/", `{"TRES":[{"type":"cpu"},{"type":"mem"},{"type":"billing"}]}`},
	} {
		if a := r.do("POST", db44+q.path, "root", []byte(q.body)); a.Status != http.StatusOK || len(asList(a.JSON(t)["errors"])) != 0 {
			t.Errorf("POST %s %s: HTTP %d %s", q.path, q.body, a.Status, a.Body)
		}
	}
}
