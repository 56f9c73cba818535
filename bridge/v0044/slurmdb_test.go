package v0044_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const db44 = "/slurmdb/v0.0.44"

// withCluster replaces the capture's cluster name by the test
// controller's, through a decoded record.
func withCluster(v any, name string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if k == "cluster" && x == "rccluster" {
				x = name
			}
			out[k] = withCluster(x, name)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = withCluster(x, name)
		}
		return out
	}
	return v
}

// recordNamed finds the record of a list whose member key is name.
func recordNamed(list any, key, name string) any {
	for _, r := range asList(list) {
		if path(r, key) == name {
			return r
		}
	}
	return nil
}

// A fresh controller's accounting answers as slurmdbd's does for the same
// records (captures of real slurmrestd 25.11: QOS normal, account and user
// root, root's associations): every member, flag and {set, infinite,
// number}, and slurmdbd's meta.
func TestSlurmdbRecordsMatchCaptures(t *testing.T) {
	r := newREST(t)
	for _, tc := range []struct {
		path, ref, list, key, name string
	}{
		{db44 + "/qos/", "slurmdb_qos.json", "qos", "name", "normal"},
		{db44 + "/accounts/", "slurmdb_accounts.json", "accounts", "name", "root"},
		{db44 + "/users/", "slurmdb_users.json", "users", "name", "root"},
	} {
		a := r.do(http.MethodGet, tc.path, "root", nil)
		if a.Status != 200 {
			t.Fatalf("GET %s: HTTP %d %s", tc.path, a.Status, a.Body)
		}
		got := a.JSON(t)
		ref := referenceJSON(t, tc.ref)
		if diff := cmp.Diff(recordNamed(ref[tc.list], tc.key, tc.name), recordNamed(got[tc.list], tc.key, tc.name)); diff != "" {
			t.Errorf("GET %s %s (-real +ours):\n%s", tc.path, tc.name, diff)
		}
		if diff := cmp.Diff(path(ref, "meta", "plugin"), path(got, "meta", "plugin")); diff != "" {
			t.Errorf("GET %s meta.plugin (-real +ours):\n%s", tc.path, diff)
		}
		if diff := cmp.Diff(problemsOf(ref), problemsOf(got)); diff != "" {
			t.Errorf("GET %s problems (-real +ours):\n%s", tc.path, diff)
		}
	}
	a := r.do(http.MethodGet, db44+"/associations/", "root", nil)
	got := asList(a.JSON(t)["associations"])
	ref := asList(withCluster(referenceJSON(t, "slurmdb_associations.json")["associations"], "testcluster"))
	if len(got) != 2 {
		t.Fatalf("associations: %d, want root's two:\n%s", len(got), a.Body)
	}
	// root's account association and root's user association, ids 1, 2.
	for i := range 2 {
		if diff := cmp.Diff(ref[i], got[i]); diff != "" {
			t.Errorf("association %d (-real +ours):\n%s", i, diff)
		}
	}
}

// POST then GET returns what was posted, for every record kind; a change
// the model refuses is an error entry; unknown names are answered as
// slurmrestd answers them; only operators change anything.
func TestSlurmdbRoundTrips(t *testing.T) {
	r := newREST(t)
	post := func(p, user, body string) answer {
		t.Helper()
		return r.do(http.MethodPost, db44+p, user, []byte(body))
	}
	ok := func(a answer, what string) map[string]any {
		t.Helper()
		if a.Status != 200 {
			t.Fatalf("%s: HTTP %d %s", what, a.Status, a.Body)
		}
		v := a.JSON(t)
		if p := problemsOf(v); len(p.Errors) != 0 {
			t.Fatalf("%s: %v", what, p.Errors)
		}
		return v
	}

	// QOS: add two, one preempting the other; read them back.
	ok(post("/qos/", "root", `{"qos":[{"name":"low","usage_factor":{"set":true,"number":0.5}},
		{"name":"high","description":"urgent","priority":{"set":true,"number":100},"preempt":{"list":["low"],"mode":["REQUEUE"]},"limits":{"grace_time":60}}]}`), "post qos")
	q := path(ok(r.do(http.MethodGet, db44+"/qos/high", "root", nil), "get qos"), "qos", 0)
	for k, want := range map[string]any{
		"name": "high", "description": "urgent", "priority": map[string]any{"set": true, "infinite": false, "number": float64(100)},
		"usage_factor": map[string]any{"set": true, "infinite": false, "number": float64(1)},
	} {
		if diff := cmp.Diff(want, path(q, k)); diff != "" {
			t.Errorf("qos high %s (-want +got):\n%s", k, diff)
		}
	}
	if diff := cmp.Diff([]any{"low"}, path(q, "preempt", "list")); diff != "" {
		t.Errorf("preempt list: %s", diff)
	}
	if got := path(q, "preempt", "mode"); !cmp.Equal(got, []any{"REQUEUE"}) || path(q, "limits", "grace_time") != float64(60) {
		t.Errorf("preempt mode %v grace %v", got, path(q, "limits", "grace_time"))
	}
	low := path(ok(r.do(http.MethodGet, db44+"/qos/?name=low", "root", nil), "get qos low"), "qos", 0)
	if got := path(low, "usage_factor", "number"); got != 0.5 {
		t.Errorf("low usage factor %v", got)
	}
	// An update names only what changes.
	ok(post("/qos/", "root", `{"qos":[{"name":"high","priority":{"set":true,"number":200}}]}`), "update qos")
	q = path(ok(r.do(http.MethodGet, db44+"/qos/high", "root", nil), "get qos"), "qos", 0)
	if path(q, "priority", "number") != float64(200) || path(q, "description") != "urgent" {
		t.Errorf("after update: %v", q)
	}
	// A loop of preemption is refused, whole.
	a := post("/qos/", "root", `{"qos":[{"name":"low","preempt":{"list":["high"]}}]}`)
	if a.Status == 200 || !strings.Contains(strings.Join(problemsOf(a.JSON(t)).Errors, "\n"), "2067 QOS Preemption loop detected") {
		t.Errorf("preemption loop: HTTP %d %s", a.Status, a.Body)
	}

	// Accounts with their associations (sacctmgr add account).
	v := ok(post("/accounts_association/", "root", `{"association_condition":{"accounts":["physics"],"association":{"fairshare":10,"qoslevel":["normal","high"],"defaultqos":"normal"}},
		"account":{"description":"Physics","organization":"science"}}`), "add account")
	want := " Adding Account(s)\n  physics\n Settings\n  Description     = Physics\n  Organization    = science\n" +
		" Associations =\n  C = testcluster A = physics             \n"
	if got := path(v, "added_accounts"); got != want {
		t.Errorf("added_accounts:\n%q\nwant\n%q", got, want)
	}
	acct := path(ok(r.do(http.MethodGet, db44+"/account/physics?with_assocs=true", "root", nil), "get account"), "accounts", 0)
	if path(acct, "description") != "Physics" || path(acct, "organization") != "science" || path(acct, "associations", 0, "account") != "physics" {
		t.Errorf("account physics: %v", acct)
	}
	a = post("/accounts_association/", "root", `{"association_condition":{"accounts":["physics"]}}`)
	if got := path(a.JSON(t), "added_accounts"); a.Status != 500 || got != "Already existing account physics on cluster testcluster\n" {
		t.Errorf("add again: HTTP %d %v", a.Status, got)
	}
	a = post("/accounts_association/", "root", `{"association_condition":{"accounts":["sub"],"association":{"parent":"nosuch"}}}`)
	if got := path(a.JSON(t), "added_accounts"); a.Status != 500 || got != "No parent account 'nosuch' on cluster 'testcluster'" {
		t.Errorf("unknown parent: HTTP %d %v", a.Status, got)
	}

	// Users with their associations (sacctmgr add user).
	v = ok(post("/users_association/", "root", `{"association_condition":{"users":["alice"],"accounts":["physics"]},"user":{"adminlevel":["Operator"]}}`), "add user")
	want = " Adding User(s)\n  alice\n Settings\n  Admin Level     = Operator\n Associations =\n  C = testcluster A = physics              U = alice    \n"
	if got := path(v, "added_users"); got != want {
		t.Errorf("added_users:\n%q\nwant\n%q", got, want)
	}
	u := path(ok(r.do(http.MethodGet, db44+"/user/alice?with_assocs=true", "root", nil), "get user"), "users", 0)
	if path(u, "default", "account") != "physics" || !cmp.Equal(path(u, "administrator_level"), []any{"Operator"}) {
		t.Errorf("user alice: %v", u)
	}
	if u := path(ok(r.do(http.MethodGet, db44+"/user/alice", "root", nil), "get user"), "users", 0); path(u, "default", "account") != "" {
		t.Errorf("without with_assocs, slurmdbd leaves the default account out: %v", path(u, "default"))
	}
	a = post("/users_association/", "root", `{"association_condition":{"users":["bob"],"accounts":["nosuch"]},"user":{}}`)
	if got := path(a.JSON(t), "added_users"); a.Status != 500 || got != "No account nosuch on cluster testcluster, skipping.\n" {
		t.Errorf("user under unknown account: HTTP %d %v", a.Status, got)
	}

	// Associations: the user's inherits its account's QOS until it sets
	// its own; the raw record shows what it sets itself.
	get := func(query string) any {
		t.Helper()
		return path(ok(r.do(http.MethodGet, db44+"/association/?"+query, "root", nil), "get association"), "associations", 0)
	}
	as := get("account=physics&user=alice")
	if !cmp.Equal(path(as, "qos"), []any{"high", "normal"}) || path(as, "default", "qos") != "normal" || path(as, "is_default") != true || path(as, "lineage") != "/physics/0-alice/" {
		t.Errorf("alice's association (effective): %v", as)
	}
	as = get("account=physics&user=alice&Exclude+limits+from+parents=true")
	if !cmp.Equal(path(as, "qos"), []any{}) || path(as, "default", "qos") != "" {
		t.Errorf("alice's association (raw): %v", as)
	}
	ok(post("/associations/", "root", `{"associations":[{"account":"physics","user":"alice","qos":["high"],"default":{"qos":"high"},"shares_raw":5,"priority":{"set":true,"number":7}}]}`), "post association")
	as = get("account=physics&user=alice")
	if !cmp.Equal(path(as, "qos"), []any{"high"}) || path(as, "default", "qos") != "high" || path(as, "shares_raw") != float64(5) || path(as, "priority", "number") != float64(7) {
		t.Errorf("alice's association after update: %v", as)
	}
	if a := r.do(http.MethodGet, db44+"/association/?account=physics", "root", nil); a.Status != 422 || !strings.Contains(a.String(), "9211") {
		t.Errorf("ambiguous single association: HTTP %d %s", a.Status, a.Body)
	}
	// The default QOS must be one the association may use.
	a = post("/associations/", "root", `{"associations":[{"account":"physics","user":"alice","qos":["normal"],"default":{"qos":"high"}}]}`)
	if a.Status == 200 || !strings.Contains(a.String(), "7011") {
		t.Errorf("default qos outside the list: HTTP %d %s", a.Status, a.Body)
	}

	// Non-operators change nothing.
	for _, req := range []struct{ path, body string }{
		{"/qos/", `{"qos":[{"name":"x"}]}`},
		{"/accounts/", `{"accounts":[{"name":"x","description":"x","organization":"x"}]}`},
		{"/users/", `{"users":[{"name":"nobody"}]}`},
		{"/associations/", `{"associations":[{"account":"physics","user":"alice","shares_raw":1}]}`},
	} {
		if a := post(req.path, "nobody", req.body); a.Status != 403 || !strings.HasPrefix(strings.Join(problemsOf(a.JSON(t)).Errors, ""), "2002 Access/permission denied") {
			t.Errorf("POST %s as nobody: HTTP %d %s", req.path, a.Status, a.Body)
		}
	}
	if a := r.do(http.MethodDelete, db44+"/qos/high", "nobody", nil); a.Status != 403 {
		t.Errorf("DELETE qos as nobody: HTTP %d", a.Status)
	}
	if a := post("/users_association/", "nobody", `{"association_condition":{"users":["nobody"],"accounts":["physics"]},"user":{}}`); a.Status != 403 ||
		path(a.JSON(t), "added_users") != "Only admins/operators/coordinators can add accounts" {
		t.Errorf("add user as nobody: HTTP %d %s", a.Status, a.Body)
	}

	// Unknown names.
	for _, p := range []string{"/qos/nosuch", "/account/nosuch", "/user/nosuch"} {
		a := r.do(http.MethodGet, db44+p, "root", nil)
		v := a.JSON(t)
		if a.Status != 200 || len(problemsOf(v).Errors) != 0 || len(problemsOf(v).Warnings) != 1 || !strings.HasSuffix(problemsOf(v).Warnings[0], "found nothing") {
			t.Errorf("GET %s: HTTP %d %v", p, a.Status, problemsOf(v))
		}
	}
	for p, code := range map[string]string{"/qos/nosuch": "2066", "/account/nosuch": "2045", "/user/nosuch": "2010", "/association/?account=nosuch": "1900"} {
		if a := r.do(http.MethodDelete, db44+p, "root", nil); a.Status == 200 || !strings.Contains(a.String(), code) {
			t.Errorf("DELETE %s: HTTP %d %s", p, a.Status, a.Body)
		}
	}

	// Deletions: a QOS something uses is refused; the user, then the
	// account with what is below it.
	if a := r.do(http.MethodDelete, db44+"/qos/high", "root", nil); a.Status == 200 {
		t.Errorf("delete a QOS in use: HTTP %d", a.Status)
	}
	// A user's default account stays while they have it; another goes.
	if a := r.do(http.MethodDelete, db44+"/association/?account=physics&user=alice", "root", nil); a.Status == 200 ||
		!strings.Contains(strings.Join(problemsOf(a.JSON(t)).Errors, "\n"), "7009 You can not remove the default account of a user") {
		t.Errorf("delete alice's default association: HTTP %d %s", a.Status, a.Body)
	}
	ok(post("/accounts_association/", "root", `{"association_condition":{"accounts":["chem"]}}`), "add chem")
	ok(post("/users_association/", "root", `{"association_condition":{"users":["alice"],"accounts":["chem"]},"user":{}}`), "add alice to chem")
	if a := r.do(http.MethodDelete, db44+"/association/?account=chem&user=alice", "root", nil); a.Status != 200 ||
		!cmp.Equal(path(a.JSON(t), "removed_associations"), []any{"C = testcluster A = chem       U = alice    "}) {
		t.Errorf("delete alice's chem association: HTTP %d %s", a.Status, a.Body)
	}
	ok(post("/users_association/", "root", `{"association_condition":{"users":["bob"],"accounts":["physics"]},"user":{}}`), "add bob")
	ok(r.do(http.MethodDelete, db44+"/user/bob", "root", nil), "delete bob")
	if u := r.do(http.MethodGet, db44+"/user/bob", "root", nil); len(asList(u.JSON(t)["users"])) != 0 {
		t.Errorf("bob still there: %s", u.Body)
	}
	if a := r.do(http.MethodDelete, db44+"/account/physics", "root", nil); a.Status == 200 ||
		!strings.Contains(strings.Join(problemsOf(a.JSON(t)).Errors, "\n"), "7009") {
		t.Errorf("delete alice's default account: HTTP %d %s", a.Status, a.Body)
	}
	ok(r.do(http.MethodDelete, db44+"/user/alice", "root", nil), "delete alice")
	v = ok(r.do(http.MethodDelete, db44+"/account/physics", "root", nil), "delete account")
	if !cmp.Equal(path(v, "removed_accounts"), []any{"physics"}) {
		t.Errorf("removed_accounts %v", path(v, "removed_accounts"))
	}
	v = ok(r.do(http.MethodDelete, db44+"/qos/high", "root", nil), "delete qos")
	if !cmp.Equal(path(v, "removed_qos"), []any{"high"}) {
		t.Errorf("removed_qos %v", path(v, "removed_qos"))
	}
	v = ok(r.do(http.MethodGet, db44+"/associations/", "root", nil), "list associations")
	if n := len(asList(v["associations"])); n != 3 {
		t.Errorf("%d associations left, want root's 2 and chem's", n)
	}
}

// String is the answer's body.
func (a answer) String() string { return string(a.Body) }
