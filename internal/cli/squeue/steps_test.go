package squeue

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/job"
	stepproto "github.com/droverhq/drover/internal/step/proto"
)

// squeue -s lists the running steps, batch steps included, in squeue.c's
// step format.
func TestSteps(t *testing.T) {
	start := captureNow.Add(-(75*time.Minute + 3*time.Second))
	list := stepproto.List{Steps: []stepproto.Step{
		{JobID: 128, StepID: job.BatchStep, Name: "batch", User: "alice", UserID: 1000, Partition: "gpu", Nodes: []string{"n1"}, Tasks: []uint32{1}, CPUs: []uint32{8}, StartTime: start, TimeLimit: job.Infinite},
		{JobID: 128, StepID: 0, Name: "python", User: "alice", UserID: 1000, Partition: "gpu", Nodes: []string{"n1", "n2", "n3"}, Tasks: []uint32{8, 8, 8}, CPUs: []uint32{8, 8, 8}, StartTime: start.Add(time.Minute), TimeLimit: 60},
		{JobID: 129, StepID: 3, Name: "a_very_long_step_name", User: "bob", UserID: 1001, Partition: "debug", Nodes: []string{"n4"}, Tasks: []uint32{1}, CPUs: []uint32{1}, StartTime: captureNow.Add(-59 * time.Second), TimeLimit: job.Infinite},
	}}
	tests := map[string]struct {
		args []string
		want string
	}{
		"default format": {args: []string{"-s"}, want: "" +
			"         STEPID     NAME PARTITION     USER      TIME NODELIST\n" +
			"      128.batch    batch       gpu    alice   1:15:03 n1\n" +
			"          128.0   python       gpu    alice   1:14:03 n[1-3]\n" +
			"          129.3 a_very_l     debug      bob      0:59 n4\n"},
		"one job":       {args: []string{"-s", "129"}, want: "         STEPID     NAME PARTITION     USER      TIME NODELIST\n          129.3 a_very_l     debug      bob      0:59 n4\n"},
		"one step":      {args: []string{"--steps=128.0", "-h"}, want: "          128.0   python       gpu    alice   1:14:03 n[1-3]\n"},
		"a user":        {args: []string{"-s", "-u", "bob", "-h", "-o", "%i %u %A %C %l"}, want: "129.3 bob 1 1 UNLIMITED\n"},
		"time limit":    {args: []string{"-s", "128.0", "-h", "-o", "%.10l|%N"}, want: "   1:00:00|n[1-3]\n"},
		"unknown field": {args: []string{"-s", "129.3", "-h", "-o", "%i%z."}, want: "129.3.\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := clitest.New(t, jobsController(t), captureNow)
			h.Env.Call = func(_ context.Context, method, path string, _, out any) error {
				if method != "GET" || path != stepproto.PathList {
					return fmt.Errorf("unexpected %s %s", method, path)
				}
				data, _ := json.Marshal(list)
				return json.Unmarshal(data, out)
			}
			got := h.Run(Run, "squeue", "", tc.args...)
			if diff := cmp.Diff(clitest.Run{Stdout: tc.want}, got); diff != "" {
				t.Errorf("squeue %v (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}
