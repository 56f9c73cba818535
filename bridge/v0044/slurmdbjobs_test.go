package v0044

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/acctdb"
	api "github.com/droverhq/drover/openapi/v0044"
)

// TestJobsFilter: the query parameters of GET /slurmdb/v0.0.44/jobs the
// store answers.
func TestJobsFilter(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	p := api.SlurmdbV0044GetJobsParams{
		Cluster: api.NewOptString("c1,c2"), Users: api.NewOptString("ann, 1001"), Account: api.NewOptString("phys"),
		Partition: api.NewOptString("gpu"), Qos: api.NewOptString("normal"), JobName: api.NewOptString("train"),
		State: api.NewOptString("completed,failed"), Step: api.NewOptString("12,13.batch,14_2"),
		Groups: api.NewOptString("lab"), Reason: api.NewOptString("Dependency"), Reservation: api.NewOptString("maint"),
		Node: api.NewOptString("n1,n2"), ExitCode: api.NewOptString("2,0:9"), ShowDuplicates: api.NewOptString("true"),
		StartTime: api.NewOptString("1799990000"), EndTime: api.NewOptString("now"),
	}
	got, err := jobsFilter(p, now)
	if err != nil {
		t.Fatal(err)
	}
	want := acctdb.Filter{Clusters: []string{"c1", "c2"}, Users: []string{"ann", "1001"}, Accounts: []string{"phys"},
		Partitions: []string{"gpu"}, QOS: []string{"normal"}, Names: []string{"train"}, States: []string{"COMPLETED", "FAILED"},
		JobIDs: []uint32{12, 13, 14}, Groups: []string{"lab"}, Reasons: []string{"Dependency"}, Reservations: []string{"maint"},
		Nodes: []string{"n1", "n2"}, ExitCodes: []int32{2, 0}, Duplicates: true, Start: time.Unix(1_799_990_000, 0), End: now}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("filter (-want +got):\n%s", d)
	}
	for _, bad := range []api.SlurmdbV0044GetJobsParams{{Step: api.NewOptString("x")}, {ExitCode: api.NewOptString("a")}, {StartTime: api.NewOptString("garbage")}} {
		if _, err := jobsFilter(bad, now); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
