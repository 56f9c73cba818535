package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// A reservation's flags, cores and times as scontrol prints them.
func TestReservation(t *testing.T) {
	var w v0044.V0044ReservationInfo
	decodeRecord(t, &w, `{"accounts":"rcacct","burst_buffer":"","core_count":2,"core_specializations":[{"node":"rc1","core":"0-1"}],
		"end_time":{"set":false,"infinite":true,"number":0},"features":"","flags":["MAINT","IGNORE_JOBS"],"groups":"","licenses":"fluent:2",
		"max_start_delay":60,"name":"cap_resv","node_count":1,"node_list":"rc1","partition":"debug",
		"start_time":{"set":true,"infinite":false,"number":1796050847},"watts":{},"tres":"cpu=2","users":"root"}`)
	want := Reservation{Name: "cap_resv", StartTime: 1796050847, EndTime: int64(Infinite), Flags: []string{"MAINT", "IGNORE_JOBS"},
		NodeList: "rc1", NodeCount: 1, CoreCount: 2, CoreSpecs: []ReservedCores{{Node: "rc1", Cores: "0-1"}}, Partition: "debug",
		TRES: "cpu=2", Users: "root", Accounts: "rcacct", Licenses: "fluent:2", MaxStartDelay: 60}
	if diff := cmp.Diff(want, FromV0044Reservation(&w)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	var empty v0044.V0044ReservationInfo
	decodeRecord(t, &empty, `{}`)
	if diff := cmp.Diff(Reservation{}, FromV0044Reservation(&empty)); diff != "" {
		t.Errorf("missing members (-want +got):\n%s", diff)
	}
}
