package sprio

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clitest"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// fake answers from the reference captures; status answers shares (1),
// QOS (2) or associations (3) with HTTP 500.
type fake struct {
	v0044.UnimplementedHandler
	jobs   v0044.V0044OpenapiJobInfoResp
	nodes  v0044.V0044OpenapiNodesResp
	parts  v0044.V0044OpenapiPartitionResp
	shares v0044.V0044OpenapiSharesResp
	qos    v0044.V0044OpenapiSlurmdbdQosResp
	assocs v0044.V0044OpenapiAssocsResp
	status int
}

func (f *fake) SlurmV0044GetJobs(context.Context, v0044.SlurmV0044GetJobsParams) (v0044.SlurmV0044GetJobsRes, error) {
	return &f.jobs, nil
}
func (f *fake) SlurmV0044GetNodes(context.Context, v0044.SlurmV0044GetNodesParams) (v0044.SlurmV0044GetNodesRes, error) {
	return &f.nodes, nil
}
func (f *fake) SlurmV0044GetPartitions(context.Context, v0044.SlurmV0044GetPartitionsParams) (v0044.SlurmV0044GetPartitionsRes, error) {
	return &f.parts, nil
}
func (f *fake) SlurmV0044GetShares(context.Context, v0044.SlurmV0044GetSharesParams) (v0044.SlurmV0044GetSharesRes, error) {
	if f.status == 1 {
		return &v0044.V0044OpenapiSharesRespStatusCode{StatusCode: 500, Response: f.shares}, nil
	}
	return &f.shares, nil
}
func (f *fake) SlurmdbV0044GetQos(context.Context, v0044.SlurmdbV0044GetQosParams) (v0044.SlurmdbV0044GetQosRes, error) {
	if f.status == 2 {
		return &v0044.V0044OpenapiSlurmdbdQosRespStatusCode{StatusCode: 500, Response: f.qos}, nil
	}
	return &f.qos, nil
}
func (f *fake) SlurmdbV0044GetAssociations(context.Context, v0044.SlurmdbV0044GetAssociationsParams) (v0044.SlurmdbV0044GetAssociationsRes, error) {
	if f.status == 3 {
		return &v0044.V0044OpenapiAssocsRespStatusCode{StatusCode: 500, Response: f.assocs}, nil
	}
	return &f.assocs, nil
}

func u32Set(n int32) v0044.OptV0044Uint32NoValStruct {
	return v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptInt32(n)})
}

// The fair-share, QOS and association factors of pending jobs, from the
// reference cluster's answers with priorities given to a second QOS and
// to rcacct (which its user's association inherits) and a fair-share
// factor to rcuser; a failed QOS answer counts no QOS factor.
func TestFactors(t *testing.T) {
	dir := clitest.ReferenceDir(t)
	conf, err := os.ReadFile(filepath.Join(dir, "conf", "slurm.conf.26.11"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "slurm.conf")
	weights := "\nPriorityWeightFairshare=10000\nPriorityWeightQOS=5000\nPriorityWeightAssoc=3000\n"
	if err := os.WriteFile(path, append(conf, weights...), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &fake{}
	clitest.LoadReference(t, "jobs.json", &f.jobs)
	clitest.LoadReference(t, "nodes.json", &f.nodes)
	clitest.LoadReference(t, "partitions.json", &f.parts)
	clitest.LoadReference(t, "shares.json", &f.shares)
	clitest.LoadReference(t, "slurmdb_qos.json", &f.qos)
	clitest.LoadReference(t, "slurmdb_associations.json", &f.assocs)
	high := f.qos.Qos[0]
	high.Name, high.Priority = v0044.NewOptString("high"), u32Set(400)
	f.qos.Qos[0].Priority = u32Set(100)
	f.qos.Qos = append(f.qos.Qos, high)
	for i := range f.assocs.Associations {
		if a := &f.assocs.Associations[i]; a.Account.Or("") == "rcacct" && a.User == "" {
			a.Priority = u32Set(30)
		} else if a.User == "root" {
			a.Priority = u32Set(10)
		}
	}
	for i := range f.shares.Shares.Shares {
		if s := &f.shares.Shares.Shares[i]; s.Name.Or("") == "rcuser" {
			s.Fairshare = v0044.NewOptV0044AssocSharesObjWrapFairshare(v0044.V0044AssocSharesObjWrapFairshare{
				Factor: v0044.NewOptV0044Float64NoValStruct(v0044.V0044Float64NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptFloat64(0.25)}),
			})
		}
	}
	// Job 131 runs as rcuser in rcacct under QOS high, 140 as root.
	for i := range f.jobs.Jobs {
		j := &f.jobs.Jobs[i]
		switch j.JobID.Or(0) {
		case 131:
			j.UserName, j.Account, j.Qos = v0044.NewOptString("rcuser"), v0044.NewOptString("rcacct"), v0044.NewOptString("high")
		case 140:
			j.JobState, j.Hold = []v0044.V0044JobInfoJobStateItem{"PENDING"}, v0044.NewOptBool(false)
			j.Priority = u32Set(5000)
		}
	}
	h := clitest.New(t, f, time.Date(2026, 11, 29, 15, 1, 1, 0, time.UTC))
	h.Vars["SLURM_CONF"] = path
	args := []string{"-o", "%.6i %.8u %.8o %.6n %.6F %.10f %.6Q %.10q %.6B %.10b"}
	want := ` JOBID     USER  ACCOUNT QOSNAM FAIRSH  FAIRSHARE    QOS        QOS  ASSOC      ASSOC
   131   rcuser   rcacct   high   2500  0.2500000   5000  1.0000000   3000  1.0000000
   140     root     root normal  10000  1.0000000   1250  0.2500000   1000  0.3333333
`
	if diff := cmp.Diff(clitest.Run{Stdout: want}, h.Run(Run, "sprio", "", args...)); diff != "" {
		t.Errorf("sprio (-want +got):\n%s", diff)
	}
	f.status = 2
	got := h.Run(Run, "sprio", "", "-h", "-j", "131", "-o", "%i %Q %q")
	if diff := cmp.Diff(clitest.Run{Stdout: "131 0 0.0000000\n"}, got); diff != "" {
		t.Errorf("sprio, QOS answer failed (-want +got):\n%s", diff)
	}
}
