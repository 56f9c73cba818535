package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Associations and QOS keep their priorities' sentinels: slurmdbd
// reports an association without a priority of its own as infinite.
func TestAssocAndQOS(t *testing.T) {
	assocs := map[string]struct {
		js   string
		want Assoc
	}{
		"missing members": {js: `{"user":""}`, want: Assoc{Priority: NoVal}},
		"account, infinite priority": {
			js:   `{"account":"rcacct","cluster":"c","parent_account":"root","partition":"","user":"","priority":{"set":false,"infinite":true,"number":0}}`,
			want: Assoc{Cluster: "c", Account: "rcacct", ParentAccount: "root", Priority: Infinite},
		},
		"user in a partition": {
			js:   `{"account":"rcacct","user":"rcuser","partition":"debug","priority":{"set":true,"infinite":false,"number":7}}`,
			want: Assoc{Account: "rcacct", User: "rcuser", Partition: "debug", Priority: 7},
		},
		"unset priority": {js: `{"user":"u","priority":{"set":false,"number":7}}`, want: Assoc{User: "u", Priority: NoVal}},
	}
	for name, tt := range assocs {
		t.Run(name, func(t *testing.T) {
			var w v0044.V0044Assoc
			if err := w.UnmarshalJSON([]byte(tt.js)); err != nil {
				t.Fatalf("decode %s: %v", tt.js, err)
			}
			if diff := cmp.Diff(tt.want, FromV0044Assoc(&w)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	qos := map[string]struct {
		js   string
		want QOS
	}{
		"missing members": {js: `{}`, want: QOS{Priority: NoVal}},
		"set":             {js: `{"name":"normal","priority":{"set":true,"infinite":false,"number":100}}`, want: QOS{Name: "normal", Priority: 100}},
		"infinite":        {js: `{"name":"high","priority":{"set":false,"infinite":true}}`, want: QOS{Name: "high", Priority: Infinite}},
		"no set member":   {js: `{"name":"low","priority":{"number":5}}`, want: QOS{Name: "low", Priority: NoVal}},
	}
	for name, tt := range qos {
		t.Run("qos "+name, func(t *testing.T) {
			var w v0044.V0044Qos
			if err := w.UnmarshalJSON([]byte(tt.js)); err != nil {
				t.Fatalf("decode %s: %v", tt.js, err)
			}
			if diff := cmp.Diff(tt.want, FromV0044QOS(&w)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
