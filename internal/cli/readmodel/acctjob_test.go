package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// An accounting record with its members missing, unset, infinite and
// set: the array task and memory requests keep their sentinels, the TRES
// lists and steps read as given.
func TestAcctJob(t *testing.T) {
	tests := map[string]struct {
		js   string
		want AcctJob
	}{
		"missing members": {
			js:   `{}`,
			want: AcctJob{ArrayTaskID: NoVal, ReqMemPerNode: NoVal64, ReqMemPerCPU: NoVal64},
		},
		"unset and infinite": {
			js: `{"array":{"job_id":0,"task_id":{"set":false}},"required":{"memory_per_node":{"infinite":true},"memory_per_cpu":{"set":false}},
				"state":{"current":[]},"exit_code":{"status":["PENDING"],"return_code":{"set":false}}}`,
			want: AcctJob{ArrayTaskID: NoVal, ReqMemPerNode: Infinite64, ReqMemPerCPU: NoVal64,
				ExitCode: ExitCode{Present: true, Pending: true, ReturnCode: NoVal, SignalID: NoVal16}},
		},
		"set": {
			js: `{"job_id":131,"array":{"job_id":130,"task_id":{"set":true,"number":2}},"restart_cnt":1,"cluster":"c","user":"u","group":"g",
				"state":{"current":["COMPLETED","REQUEUED"]},"allocation_nodes":2,
				"tres":{"allocated":[{"type":"cpu","id":1,"count":4},{"type":"mem","id":2,"count":200}],"requested":[]},
				"time":{"elapsed":60,"total":{"seconds":100,"microseconds":5}},
				"required":{"memory_per_node":{"set":true,"number":100},"memory_per_cpu":{"set":false}},
				"steps":[{"tres":{"requested":{"max":[{"type":"mem","count":1048576}],"min":[],"average":[],"total":[]}}},{}]}`,
			want: AcctJob{JobID: 131, ArrayJobID: 130, ArrayTaskID: 2, RestartCnt: 1, Cluster: "c", User: "u", Group: "g", State: "COMPLETED",
				AllocNodes: 2, AllocTRES: []TRES{{Type: "cpu", ID: 1, Count: 4}, {Type: "mem", ID: 2, Count: 200}},
				Elapsed: 60, TotalCPUSecs: 100, TotalCPUMicrosec: 5, ReqMemPerNode: 100, ReqMemPerCPU: NoVal64,
				Steps: []AcctStep{{MaxTRES: []TRES{{Type: "mem", Count: 1048576}}}, {}}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var w v0044.V0044Job
			if err := w.UnmarshalJSON([]byte(tt.js)); err != nil {
				t.Fatalf("decode %s: %v", tt.js, err)
			}
			got := FromV0044AcctJob(&w)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if n := Count(got.AllocTRES, "mem"); name == "set" && n != 200 {
				t.Errorf("Count(mem) = %d, want 200", n)
			}
		})
	}
}
