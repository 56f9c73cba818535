package sreport

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/reportproto"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

type assocFake struct {
	v0044.UnimplementedHandler
	resp   v0044.V0044OpenapiAssocsResp
	status int
}

func (f *assocFake) SlurmdbV0044GetAssociations(context.Context, v0044.SlurmdbV0044GetAssociationsParams) (v0044.SlurmdbV0044GetAssociationsRes, error) {
	if f.status != 0 {
		return &v0044.V0044OpenapiAssocsRespStatusCode{StatusCode: f.status, Response: f.resp}, nil
	}
	return &f.resp, nil
}

// The account tree comes from the cluster's associations (another
// cluster's left out), with what usage names and they lack under root;
// a failed answer leaves only what usage names.
func TestAccountTree(t *testing.T) {
	f := &assocFake{}
	clitest.LoadReference(t, "slurmdb_associations.json", &f.resp)
	other := f.resp.Associations[3]
	other.Cluster, other.Account, other.User = v0044.NewOptString("elsewhere"), v0044.NewOptString("far"), "u"
	f.resp.Associations = append(f.resp.Associations, other)
	h := clitest.New(t, f, time.Date(2026, 11, 29, 15, 1, 1, 0, time.UTC))
	usage := []reportproto.Assoc{{Account: "rcacct", User: "late"}, {Account: "new", User: "rcuser"}}
	got := accountTree(context.Background(), &h.Env, "rccluster", usage)
	want := &tree{
		parent:   map[string]string{"rcacct": "root", "new": "root"},
		children: map[string][]string{"root": {"new", "rcacct"}},
		users:    map[string][]string{"root": {"root"}, "rcacct": {"late", "rcuser"}, "new": {"rcuser"}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(tree{})); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	f.status = 500
	got = accountTree(context.Background(), &h.Env, "rccluster", usage)
	want = &tree{
		parent:   map[string]string{"rcacct": "root", "new": "root"},
		children: map[string][]string{"root": {"new", "rcacct"}},
		users:    map[string][]string{"rcacct": {"late"}, "new": {"rcuser"}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(tree{})); diff != "" {
		t.Errorf("tree of a failed answer (-want +got):\n%s", diff)
	}
}

// Accounts that are each other's parents (an answer no controller should
// send) end a walk up the tree instead of looping.
func TestUnderEndsOnALoop(t *testing.T) {
	tr := &tree{parent: map[string]string{"a": "b", "b": "a"}}
	if tr.under("a", "root") {
		t.Error("a is under root through a loop")
	}
	if !tr.under("a", "b") {
		t.Error("a is not under its parent b")
	}
}
