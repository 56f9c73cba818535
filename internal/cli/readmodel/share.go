package readmodel

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/droverhq/drover/internal/cli/clienv"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Share is one association of the fair-share tree (GET /shares) as
// sshare and sprio read it: an account, or a user's association under
// one.
type Share struct {
	ID        int32
	Cluster   string
	Partition string
	// Name is the account's name, or the user's for a user's
	// association; Parent is the account above it ("" for root).
	Name, Parent string
	// User marks a user's association (type USER).
	User bool
	// RawShares is shares: NoVal when unset, Infinite when infinite.
	RawShares uint32
	// NormShares, Usage's normalised and effective forms and FairShare
	// (fairshare.factor) are the numbers slurmrestd sent, 0 when it sent
	// none: sshare prints them as sent, whatever their flags say.
	NormShares, NormUsage, EffectiveUsage, FairShare float64
	// Level is fairshare.level, +Inf where it is marked infinite;
	// LevelSet is false when the record has no level marked set (an
	// older controller), where sshare works LevelFS out itself.
	Level    float64
	LevelSet bool
	// Usage is the raw usage in TRES-billing-seconds.
	Usage int64
	// TRESUsage is tres.usage; TRESRunSecs is tres.run_seconds, the
	// TRES-seconds that running jobs have left, as sent (running totals
	// slurmctld always sets); TRESGroupMins is tres.group_minutes, the
	// GrpTRESMins limits.
	TRESUsage     []ShareTRESUsage
	TRESRunSecs   []ShareTRESCount
	TRESGroupMins []ShareTRESLimit
}

// ShareTRESUsage is one TRES's usage, a long double in slurmctld.
type ShareTRESUsage struct {
	Name  string
	Value float64
}

// ShareTRESCount is one TRES's running count.
type ShareTRESCount struct {
	Name  string
	Count int64
}

// ShareTRESLimit is one TRES's limit: NoVal64 when unset, Infinite64
// when there is none.
type ShareTRESLimit struct {
	Name  string
	Limit uint64
}

// FromV0044Share reads one slurmrestd v0.0.44 shares record.
func FromV0044Share(w *v0044.V0044AssocSharesObjWrap) Share {
	fs := w.Fairshare.Or(v0044.V0044AssocSharesObjWrapFairshare{})
	tres := w.Tres.Or(v0044.V0044AssocSharesObjWrapTres{})
	s := Share{
		ID:        w.ID.Or(0),
		Cluster:   w.Cluster.Or(""),
		Partition: w.Partition.Or(""),
		Name:      w.Name.Or(""),
		Parent:    w.Parent.Or(""),
		User:      slices.Contains(w.Type, v0044.V0044AssocSharesObjWrapTypeItemUSER),
		RawShares: u32(w.Shares),

		NormShares:     floatNumber(w.SharesNormalized),
		NormUsage:      floatNumber(w.UsageNormalized),
		EffectiveUsage: floatNumber(w.EffectiveUsage),
		FairShare:      floatNumber(fs.Factor),
		Usage:          w.Usage.Or(0),
	}
	if lv, ok := fs.Level.Get(); ok && lv.Set.Or(false) {
		s.Level, s.LevelSet = lv.Number.Or(0), true
		if lv.Infinite.Or(false) {
			s.Level = math.Inf(1)
		}
	}
	for _, u := range tres.Usage {
		s.TRESUsage = append(s.TRESUsage, ShareTRESUsage{Name: u.Name.Or(""), Value: u.Value.Or(0)})
	}
	for _, t := range tres.RunSeconds {
		s.TRESRunSecs = append(s.TRESRunSecs, ShareTRESCount{Name: t.Name.Or(""), Count: t.Value.Or(v0044.V0044Uint64NoValStruct{}).Number.Or(0)})
	}
	for _, t := range tres.GroupMinutes {
		s.TRESGroupMins = append(s.TRESGroupMins, ShareTRESLimit{Name: t.Name.Or(""), Limit: u64(t.Value)})
	}
	return s
}

// FromV0044Shares reads a REST shares list, in its order.
func FromV0044Shares(ws []v0044.V0044AssocSharesObjWrap) []Share {
	out := make([]Share, len(ws))
	for i := range ws {
		out[i] = FromV0044Share(&ws[i])
	}
	return out
}

// floatNumber is a float number struct's number, 0 when there is none.
func floatNumber(o v0044.OptV0044Float64NoValStruct) float64 {
	return o.Or(v0044.V0044Float64NoValStruct{}).Number.Or(0)
}

// GetShares is GET /shares: every association of the fair-share tree.
func GetShares(ctx context.Context, api clienv.API) (Answer[Share], error) {
	res, err := api.SlurmV0044GetShares(ctx, v0044.SlurmV0044GetSharesParams{})
	if err != nil {
		return Answer[Share]{}, fmt.Errorf("GET /shares: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiSharesResp:
		return Answer[Share]{Records: FromV0044Shares(r.Shares.Shares), Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiSharesRespStatusCode:
		return Answer[Share]{Records: FromV0044Shares(r.Response.Shares.Shares), Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[Share]{Status: -1}, nil
}
