package sshare

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/cli/readmodel"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// sharesFake answers GET /shares with the reference cluster's tree,
// edited by patch.
type sharesFake struct {
	v0044.UnimplementedHandler
	resp   v0044.V0044OpenapiSharesResp
	status int
}

func (f *sharesFake) SlurmV0044GetShares(context.Context, v0044.SlurmV0044GetSharesParams) (v0044.SlurmV0044GetSharesRes, error) {
	if f.status != 0 {
		return &v0044.V0044OpenapiSharesRespStatusCode{StatusCode: f.status, Response: f.resp}, nil
	}
	return &f.resp, nil
}

// The tree as sshare lays it out, from the reference answer with usage,
// limits and running jobs added: unset and infinite shares print blank,
// running seconds as minutes, limits only where set, and LevelFS is
// worked out where the record has none.
func TestReport(t *testing.T) {
	f := &sharesFake{}
	clitest.LoadReference(t, "shares.json", &f.resp)
	set := func(n float64) v0044.OptV0044Float64NoValStruct {
		return v0044.NewOptV0044Float64NoValStruct(v0044.V0044Float64NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptFloat64(n)})
	}
	for i := range f.resp.Shares.Shares {
		s := &f.resp.Shares.Shares[i]
		switch s.ID.Or(0) {
		case 3: // rcacct: GrpTRESMins=cpu=500, usage, no level
			tres := s.Tres.Or(v0044.V0044AssocSharesObjWrapTres{})
			tres.GroupMinutes[0].Value = v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptInt64(500)})
			s.Tres = v0044.NewOptV0044AssocSharesObjWrapTres(tres)
			s.UsageNormalized, s.Usage = set(0.2), v0044.NewOptInt64(7200)
			s.Fairshare = v0044.NewOptV0044AssocSharesObjWrapFairshare(v0044.V0044AssocSharesObjWrapFairshare{})
		case 4: // rcuser: a running job, shares unset
			tres := s.Tres.Or(v0044.V0044AssocSharesObjWrapTres{})
			tres.RunSeconds[0].Value = v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptInt64(3630)})
			tres.Usage[0].Value = v0044.NewOptFloat64(7200.9)
			s.Tres = v0044.NewOptV0044AssocSharesObjWrapTres(tres)
			s.Shares = v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{Set: v0044.NewOptBool(false)})
		case 2: // root's user association: infinite shares
			s.Shares = v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{Infinite: v0044.NewOptBool(true)})
		}
	}
	h := clitest.New(t, f, time.Date(2026, 11, 29, 15, 1, 1, 0, time.UTC))
	tests := map[string]struct {
		args []string
		want string
	}{
		"all": {[]string{"-a"}, `Account                    User  RawShares  NormShares    RawUsage  EffectvUsage  FairShare 
-------------------- ---------- ---------- ----------- ----------- ------------- ---------- 
root                                          0.000000           0      1.000000            
 root                      root               0.500000           0      0.000000   1.000000 
 rcacct                                  1    0.500000        7200      0.000000            
  rcacct                 rcuser               1.000000           0      0.000000   1.000000 
`},
		"long, parsable": {[]string{"-a", "-l", "-P", "-o", "Account,User,RawShares,NormUsage,LevelFS,GrpTRESMins,GrpTRESRaw,TRESRunMins"},
			`Account|User|RawShares|NormUsage|LevelFS|GrpTRESMins|GrpTRESRaw|TRESRunMins
root||||||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0,gres/gpumem=0,gres/gpuutil=0|cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0,gres/gpumem=0,gres/gpuutil=0
 root|root||0.000000|inf||cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0,gres/gpumem=0,gres/gpuutil=0|cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0,gres/gpumem=0,gres/gpuutil=0
 rcacct||1|0.200000|2.500000|cpu=500|cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0,gres/gpumem=0,gres/gpuutil=0|cpu=0,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0,gres/gpumem=0,gres/gpuutil=0
  rcacct|rcuser||0.000000|inf||cpu=7200,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0,gres/gpumem=0,gres/gpuutil=0|cpu=60,mem=0,energy=0,node=0,billing=0,fs/disk=0,vmem=0,pages=0,gres/gpu=0,gres/gpumem=0,gres/gpuutil=0
`},
		// Without -a or -u, the caller's own user rows only, root's
		// too (Slurm's sshare asks for the caller's user).
		"users only":      {[]string{"-U", "-p", "-o", "acc,user,fairs,id,cluster"}, "Account|User|FairShare|ID|Cluster|\n root|root|1.000000|2|rccluster|\n"},
		"users only, all": {[]string{"-U", "-a", "-p", "-o", "acc,user,fairs,id,cluster"}, "Account|User|FairShare|ID|Cluster|\n root|root|1.000000|2|rccluster|\n  rcacct|rcuser|1.000000|4|rccluster|\n"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := h.Run(Run, "sshare", "", tt.args...)
			if diff := cmp.Diff(clitest.Run{Stdout: tt.want}, got); diff != "" {
				t.Errorf("sshare %v (-want +got):\n%s", tt.args, diff)
			}
		})
	}
	f.status = 500
	if got := h.Run(Run, "sshare", ""); got.Code != 1 || got.Stderr != "sshare: error: Problem with shares request\n" {
		t.Errorf("failed answer: %+v", got)
	}
}

// sshare with no option, run as root on the reference cluster, prints
// what Slurm's printed there: the accounts and root's own user rows, not
// the other users' (rcuser's).
func TestGoldenDefault(t *testing.T) {
	f := &sharesFake{}
	clitest.LoadReference(t, "shares.json", &f.resp)
	h := clitest.New(t, f, time.Date(2026, 11, 29, 15, 1, 1, 0, time.UTC))
	got := h.Run(Run, "sshare", "")
	want := clitest.ReferenceRun(t, "sshare_default")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sshare (-want +got):\n%s", diff)
	}
}

// An answer whose accounts are each other's parents ends: each account
// is listed once, and the command prints rather than recursing forever.
func TestParentLoop(t *testing.T) {
	shares := []readmodel.Share{
		{Name: "root", ID: 1},
		{Name: "a", Parent: "root", ID: 2},
		{Name: "b", Parent: "a", ID: 3},
		{Name: "a", Parent: "b", ID: 4},
	}
	rows := rowsOf(shares)
	var names []string
	for _, r := range rows {
		names = append(names, r.account)
	}
	if d := cmp.Diff([]string{"root", "a", "b", "a"}, names); d != "" {
		t.Errorf("rows (-want +got):\n%s", d)
	}
}
