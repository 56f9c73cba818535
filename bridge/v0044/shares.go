package v0044

import (
	"context"
	"slices"
	"strings"

	api "github.com/droverhq/drover/openapi/v0044"
)

// SlurmV0044GetShares implements GET /shares: the fair-share tree as
// sshare reads it. Until accounting brings associations the tree is root
// and one association of one share per user.
func (s *Server) SlurmV0044GetShares(ctx context.Context, params api.SlurmV0044GetSharesParams) (api.SlurmV0044GetSharesRes, error) {
	s.count("REQUEST_SHARE_INFO")
	usage, factors := s.ctl.FairShare()
	users := make([]string, 0, len(factors))
	for u := range factors {
		users = append(users, u)
	}
	for u := range usage {
		if _, ok := factors[u]; !ok {
			users = append(users, u)
		}
	}
	slices.Sort(users)
	total := 0.0
	for _, u := range users {
		total += usage[u]
	}
	names, run := s.ctl.RunTRES()
	// The root account's running TRES are everyone's.
	all := make([]uint64, len(names))
	for _, row := range run {
		for i, v := range row {
			all[i] += v
		}
	}
	f64 := func(v float64) api.OptV0044Float64NoValStruct {
		return api.NewOptV0044Float64NoValStruct(api.V0044Float64NoValStruct{Set: api.NewOptBool(true), Infinite: api.NewOptBool(false), Number: api.NewOptFloat64(v)})
	}
	entry := func(id int, name, parent string, kind api.V0044AssocSharesObjWrapTypeItem, shares uint32, norm, use, factor float64) api.V0044AssocSharesObjWrap {
		running := run[name]
		if parent == "" {
			running = all
		}
		w := api.V0044AssocSharesObjWrap{
			ID: api.NewOptInt32(int32(id)), Cluster: api.NewOptString(s.ctl.ClusterName()), Name: api.NewOptString(name),
			Parent: api.NewOptString(parent), Partition: api.NewOptString(""),
			Shares:           api.NewOptV0044Uint32NoValStruct(u32(shares)),
			SharesNormalized: f64(norm), Usage: api.NewOptInt64(int64(use)),
			Type: []api.V0044AssocSharesObjWrapTypeItem{kind},
			Tres: api.NewOptV0044AssocSharesObjWrapTres(shareTRES(names, running, use)),
		}
		un := 0.0
		switch {
		case parent == "":
			un = 1 // the root holds all usage
		case total > 0:
			un = use / total
		}
		w.UsageNormalized, w.EffectiveUsage = f64(un), f64(un)
		w.Fairshare = api.NewOptV0044AssocSharesObjWrapFairshare(api.V0044AssocSharesObjWrapFairshare{Factor: f64(factor), Level: f64(0)})
		return w
	}
	out := api.V0044AssocSharesObjList{entry(1, "root", "", api.V0044AssocSharesObjWrapTypeItemASSOCIATION, 1, 1, total, 1)}
	for i, u := range users {
		out = append(out, entry(i+2, u, "root", api.V0044AssocSharesObjWrapTypeItemUSER, 1, 1/float64(len(users)), usage[u], factors[u]))
	}
	out = filterShares(out, params)
	return &api.V0044OpenapiSharesResp{
		Shares: api.V0044SharesRespMsg{Shares: out, TotalShares: api.NewOptInt64(int64(len(users)))},
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
