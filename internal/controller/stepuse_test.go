package controller_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
)

// TestNodeStepUsageMatchesReport: the log records a node's step report
// as ctlstate.NodeStepUsage, converted from the nodeproto.StepDone the
// node sent; records written when the log held StepDone itself must read
// the same, so both encode alike. (The conversion already fails to
// compile when their fields part.)
func TestNodeStepUsageMatchesReport(t *testing.T) {
	d := nodeproto.StepDone{Node: "n1", JobID: 7, StepID: 3, Tasks: 4,
		Usage:      job.Usage{UserCPU: time.Second, SystemCPU: 2 * time.Second, MaxRSS: 5, MaxDiskRead: 6, MaxDiskWrite: 7, MaxVMSize: 8, MaxPages: 9},
		MaxRSSTask: 1, AveRSS: 6}
	d.Stats.AddTask(d.Usage, "n1", 1)
	want, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(ctlstate.NodeStepUsage(d))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("NodeStepUsage encodes otherwise than StepDone (-StepDone +NodeStepUsage):\n%s", diff)
	}
}
