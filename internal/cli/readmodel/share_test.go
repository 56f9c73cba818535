package readmodel

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// A shares record with its members missing, unset, infinite and set:
// shares and the TRES limits keep their sentinels, the factors and
// running counts read as sent, and the level says whether it was set.
func TestShare(t *testing.T) {
	tests := map[string]struct {
		js   string
		want Share
	}{
		"missing members": {
			js:   `{}`,
			want: Share{RawShares: NoVal},
		},
		"unset and infinite": {
			js: `{"name":"rcacct","parent":"root","type":["ASSOCIATION"],"shares":{"set":false,"infinite":true,"number":0},
				"shares_normalized":{"set":false,"infinite":false,"number":0.25},"fairshare":{"level":{"set":false,"infinite":true,"number":0}},
				"tres":{"run_seconds":[{"name":"cpu","value":{"set":false,"infinite":false,"number":120}}],
					"group_minutes":[{"name":"cpu","value":{"set":false,"infinite":true,"number":0}},{"name":"mem","value":{"set":false,"infinite":false,"number":0}}]}}`,
			want: Share{Name: "rcacct", Parent: "root", RawShares: Infinite, NormShares: 0.25,
				TRESRunSecs:   []ShareTRESCount{{Name: "cpu", Count: 120}},
				TRESGroupMins: []ShareTRESLimit{{Name: "cpu", Limit: Infinite64}, {Name: "mem", Limit: NoVal64}}},
		},
		"set": {
			js: `{"id":3,"cluster":"c","name":"rcuser","parent":"rcacct","partition":"p","type":["USER"],"shares":{"set":true,"number":2},
				"shares_normalized":{"set":true,"number":0.5},"usage_normalized":{"set":true,"number":0.125},"effective_usage":{"set":true,"number":0.75},
				"usage":3600,"fairshare":{"factor":{"set":true,"number":0.9},"level":{"set":true,"number":4}},
				"tres":{"usage":[{"name":"cpu","value":61.5}],"run_seconds":[{"name":"cpu","value":{"set":true,"number":600}}],
					"group_minutes":[{"name":"cpu","value":{"set":true,"number":100}}]}}`,
			want: Share{ID: 3, Cluster: "c", Name: "rcuser", Parent: "rcacct", Partition: "p", User: true, RawShares: 2,
				NormShares: 0.5, NormUsage: 0.125, EffectiveUsage: 0.75, FairShare: 0.9, Level: 4, LevelSet: true, Usage: 3600,
				TRESUsage:     []ShareTRESUsage{{Name: "cpu", Value: 61.5}},
				TRESRunSecs:   []ShareTRESCount{{Name: "cpu", Count: 600}},
				TRESGroupMins: []ShareTRESLimit{{Name: "cpu", Limit: 100}}},
		},
		"infinite level marked set": {
			js:   `{"fairshare":{"level":{"set":true,"infinite":true,"number":0}}}`,
			want: Share{RawShares: NoVal, Level: math.Inf(1), LevelSet: true},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var w v0044.V0044AssocSharesObjWrap
			if err := w.UnmarshalJSON([]byte(tt.js)); err != nil {
				t.Fatalf("decode %s: %v", tt.js, err)
			}
			if diff := cmp.Diff(tt.want, FromV0044Share(&w), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
