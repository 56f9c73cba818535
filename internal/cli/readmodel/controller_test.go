package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Licenses, pings and the statistics read as sent, missing members as
// zero and ""; the start time keeps INFINITE apart from unset.
func TestControllerRecords(t *testing.T) {
	var lics v0044.V0044OpenapiLicensesResp
	decodeRecord(t, &lics, `{"licenses":[{"LicenseName":"fluent","Total":10,"Used":3,"Free":7,"Reserved":1,"Remote":true,
		"LastConsumed":2,"LastDeficit":1,"LastUpdate":1795964405,"Nodes":""},{"LicenseName":"gpuhr","Nodes":"rc1"}],
		"last_update":{"set":true,"number":1},"meta":{},"errors":[],"warnings":[]}`)
	wantLics := []License{
		{Name: "fluent", Total: 10, Used: 3, Free: 7, Reserved: 1, Remote: true, LastConsumed: 2, LastDeficit: 1, LastUpdate: 1795964405},
		{Name: "gpuhr", Nodes: "rc1"},
	}
	if diff := cmp.Diff(wantLics, FromV0044Licenses(lics.Licenses)); diff != "" {
		t.Errorf("licenses (-want +got):\n%s", diff)
	}

	var pings v0044.V0044OpenapiPingArrayResp
	decodeRecord(t, &pings, `{"pings":[{"hostname":"ctl0","pinged":"UP","responding":true,"latency":1116,"mode":"primary","primary":true},
		{"responding":false,"primary":false}],"meta":{},"errors":[],"warnings":[]}`)
	wantPings := []Ping{{Hostname: "ctl0", Pinged: "UP", Responding: true, Mode: "primary", Primary: true}, {}}
	if diff := cmp.Diff(wantPings, FromV0044Pings(pings.Pings)); diff != "" {
		t.Errorf("pings (-want +got):\n%s", diff)
	}

	for name, tt := range map[string]struct {
		js   string
		want Diag
	}{
		"set":      {`{"statistics":{"req_time_start":{"set":true,"number":1795964322}},"meta":{"slurm":{"release":"25.11.7"}},"errors":[],"warnings":[]}`, Diag{StartTime: 1795964322, Release: "25.11.7"}},
		"infinite": {`{"statistics":{"req_time_start":{"set":false,"infinite":true}},"errors":[],"warnings":[]}`, Diag{StartTime: int64(Infinite)}},
		"counters": {`{"statistics":{"req_time":{"set":true,"number":1795964405},"jobs_submitted":19,"schedule_cycle_sum":70587,
			"schedule_exit":{"end_job_queue":9,"licenses":2},"bf_exit":{"state_changed":3,"bf_max_time":4},
			"rpcs_by_message_type":[{"type_id":4003,"message_type":"REQUEST_SUBMIT_BATCH_JOB","count":9,"queued":0,"dropped":1,"cycle_last":0,"cycle_max":2,"total_time":5658,"average_time":{"set":true,"number":628}}],
			"rpcs_by_user":[{"user_id":0,"user":"root","count":32,"total_time":11626,"average_time":{"set":true,"number":363}}],
			"pending_rpcs":[{"type_id":6011,"message_type":"REQUEST_TERMINATE_JOB","count":2}],
			"pending_rpcs_by_hostlist":[{"type_id":6011,"message_type":"REQUEST_TERMINATE_JOB","count":["n1","n2"]}]},"errors":[],"warnings":[]}`,
			Diag{ReqTime: 1795964405, JobsSubmitted: 19, ScheduleCycleSum: 70587, ScheduleExit: [6]int32{9, 0, 0, 2, 0, 0}, BFExit: [6]int32{0, 0, 0, 3, 0, 4},
				RPCsByType:      []RPCStat{{ID: 4003, Name: "REQUEST_SUBMIT_BATCH_JOB", Count: 9, TotalTime: 5658, Dropped: 1, CycleMax: 2}},
				RPCsByUser:      []RPCStat{{ID: 0, Name: "root", Count: 32, TotalTime: 11626}},
				PendingRPCs:     []RPCStat{{ID: 6011, Name: "REQUEST_TERMINATE_JOB", Count: 2}},
				PendingRPCHosts: []PendingRPCHosts{{ID: 6011, Name: "REQUEST_TERMINATE_JOB", Hostlist: "n[1-2]"}}}},
		"unset": {`{"statistics":{"req_time_start":{"set":false,"number":5}},"meta":{"slurm":{}},"errors":[],"warnings":[]}`, Diag{}},
	} {
		var d v0044.V0044OpenapiDiagResp
		decodeRecord(t, &d, tt.js)
		if diff := cmp.Diff(tt.want, FromV0044Diag(&d)); diff != "" {
			t.Errorf("diag %s (-want +got):\n%s", name, diff)
		}
	}
}

func decodeRecord(t *testing.T, dst interface{ UnmarshalJSON([]byte) error }, js string) {
	t.Helper()
	if err := dst.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
}
