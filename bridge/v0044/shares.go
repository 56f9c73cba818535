package v0044

import (
	"context"
	"math"
	"slices"
	"strings"

	"github.com/droverhq/drover/internal/priority"
	api "github.com/droverhq/drover/openapi/v0044"
)

// SlurmV0044GetShares implements GET /shares: the fair-share tree as
// sshare reads it, one entry for every association of the accounting
// model (and for users outside it, under root), in tree order.
func (s *Server) SlurmV0044GetShares(ctx context.Context, params api.SlurmV0044GetSharesParams) (api.SlurmV0044GetSharesRes, error) {
	s.count(ctx, "REQUEST_SHARE_INFO")
	rows, _ := s.ctl.ShareRows()
	names, run := s.ctl.RunTRES()
	// An account's running TRES are those of every user below it.
	parent := map[string]string{}
	for _, r := range rows {
		if r.User == "" {
			parent[r.Account] = r.Parent
		}
	}
	accountRun := map[string][]uint64{}
	for key, row := range run {
		account, _, _ := strings.Cut(key, "/")
		for seen := map[string]bool{}; account != "" && !seen[account]; account = parent[account] {
			seen[account] = true
			sum := accountRun[account]
			if sum == nil {
				sum = make([]uint64, len(names))
				accountRun[account] = sum
			}
			for i, v := range row {
				sum[i] += v
			}
		}
	}
	model := s.ctl.Accounting()
	f64 := func(v float64) api.OptV0044Float64NoValStruct {
		if math.IsInf(v, 1) {
			return api.NewOptV0044Float64NoValStruct(api.V0044Float64NoValStruct{Set: api.NewOptBool(true), Infinite: api.NewOptBool(true), Number: api.NewOptFloat64(0)})
		}
		return api.NewOptV0044Float64NoValStruct(api.V0044Float64NoValStruct{Set: api.NewOptBool(true), Infinite: api.NewOptBool(false), Number: api.NewOptFloat64(v)})
	}
	out := api.V0044AssocSharesObjList{}
	var totalShares int64
	for i, r := range rows {
		name, kind, running := r.Account, api.V0044AssocSharesObjWrapTypeItemASSOCIATION, accountRun[r.Account]
		if r.User != "" {
			name, kind, running = r.User, api.V0044AssocSharesObjWrapTypeItemUSER, run[priority.AssocKey(r.Account, r.User)]
		}
		if r.Parent == "root" || (r.User != "" && r.Account == "root") {
			totalShares += int64(r.RawShares)
		}
		id := int32(i + 1)
		if a, ok := model.Assoc(r.Account, r.User, ""); ok {
			id = int32(a.ID)
		}
		w := api.V0044AssocSharesObjWrap{
			ID: api.NewOptInt32(id), Cluster: api.NewOptString(s.ctl.ClusterName()), Name: api.NewOptString(name),
			Parent: api.NewOptString(r.Parent), Partition: api.NewOptString(""),
			Shares:           api.NewOptV0044Uint32NoValStruct(u32(r.RawShares)),
			SharesNormalized: f64(r.NormShares), Usage: api.NewOptInt64(int64(r.RawUsage)),
			Type: []api.V0044AssocSharesObjWrapTypeItem{kind},
			Tres: api.NewOptV0044AssocSharesObjWrapTres(shareTRES(names, running, r.RawUsage)),
		}
		un := r.NormUsage
		if r.Parent == "" && r.User == "" {
			un = 1 // the root holds all usage
		}
		w.UsageNormalized, w.EffectiveUsage = f64(un), f64(r.EffectvUsage)
		w.Fairshare = api.NewOptV0044AssocSharesObjWrapFairshare(api.V0044AssocSharesObjWrapFairshare{Factor: f64(r.FairShare), Level: f64(r.LevelFS)})
		out = append(out, w)
	}
	out = filterShares(out, params)
	if who := caller(ctx); s.ctl.Hides("usage", who) {
		// PrivateData=usage: a user sees their own associations only
		// (Drover has no coordinators), as assoc_mgr filters shares.
		mine := out[:0]
		for _, w := range out {
			if slices.Contains(w.Type, api.V0044AssocSharesObjWrapTypeItemUSER) && w.Name.Value == who.User {
				mine = append(mine, w)
			}
		}
		out = mine
	}
	return &api.V0044OpenapiSharesResp{
		Shares: api.V0044SharesRespMsg{Shares: out, TotalShares: api.NewOptInt64(totalShares)},
		Meta:   s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{},
	}, nil
}

// shareTRES is an association's TRES as slurmrestd lists them, every TRES
// the cluster tracks in its order: the TRES-seconds its running jobs have
// left, no group limits (unset, infinite), and its usage (CPU-seconds; the
// only TRES whose usage is kept until accounting).
func shareTRES(names []string, run []uint64, cpuUsage float64) api.V0044AssocSharesObjWrapTres {
	t := api.V0044AssocSharesObjWrapTres{GroupMinutes: api.V0044SharesUint64TresList{}, RunSeconds: api.V0044SharesUint64TresList{}, Usage: api.V0044SharesFloat128TresList{}}
	for i, name := range names {
		var r uint64
		if i < len(run) {
			r = run[i]
		}
		t.RunSeconds = append(t.RunSeconds, api.V0044SharesUint64Tres{Name: api.NewOptString(name), Value: api.NewOptV0044Uint64NoValStruct(u64(int64(r)))})
		t.GroupMinutes = append(t.GroupMinutes, api.V0044SharesUint64Tres{Name: api.NewOptString(name), Value: api.NewOptV0044Uint64NoValStruct(u64NoLimit())})
		use := 0.0
		if name == "cpu" {
			use = cpuUsage
		}
		t.Usage = append(t.Usage, api.V0044SharesFloat128Tres{Name: api.NewOptString(name), Value: api.NewOptFloat64(use)})
	}
	return t
}

// filterShares keeps the associations the users and accounts filters name
// (comma-separated lists): users by name, accounts with the users under
// them.
func filterShares(list api.V0044AssocSharesObjList, params api.SlurmV0044GetSharesParams) api.V0044AssocSharesObjList {
	split := func(o api.OptString) []string {
		v, ok := o.Get()
		if !ok || v == "" {
			return nil
		}
		return strings.Split(v, ",")
	}
	users, accounts := split(params.Users), split(params.Accounts)
	if users == nil && accounts == nil {
		return list
	}
	out := api.V0044AssocSharesObjList{}
	for _, a := range list {
		isUser := slices.Contains(a.Type, api.V0044AssocSharesObjWrapTypeItemUSER)
		account := a.Name.Or("")
		if isUser {
			account = a.Parent.Or("")
		}
		if accounts != nil && !slices.Contains(accounts, account) {
			continue
		}
		if users != nil && isUser && !slices.Contains(users, a.Name.Or("")) {
			continue
		}
		out = append(out, a)
	}
	return out
}
