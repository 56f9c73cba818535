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
		"unset":    {`{"statistics":{"req_time_start":{"set":false,"number":5}},"meta":{"slurm":{}},"errors":[],"warnings":[]}`, Diag{}},
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
