package ctlstate

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/priority"
	"github.com/droverhq/drover/internal/reservation"
)

// TestCommandsKeepTheirJSON holds the log's records to their on-disk
// form: testdata/commands.jsonl was written, one command of each kind,
// by the controller before the state machine became a package of its
// own; records for members added since follow them. The same commands must encode to the same bytes, and each record
// must decode and encode back to itself, so that a state folder written
// then replays now.
func TestCommandsKeepTheirJSON(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	hold, name, limit, nice, yes := job.HeldUser, "renamed", uint32(90), int32(5), true
	down, het := true, uint32(1)
	cmds := []*Command{
		{Op: OpSubmit, Time: t0, MinJobID: 100, RequeueDelay: 121 * time.Second, Submit: &SubmitCmd{Req: job.Request{Name: "a", Partition: "gpu", UserName: "alice", Array: job.ArraySpec{Expr: "0-3", Tasks: []uint32{0, 1, 2, 3}}}, ScriptKey: "script/1", Hold: hold, Priority: 7, Limits: true, PartQOS: map[string]string{"gpu": "high"}}},
		{Op: OpSubmit, Time: t0, Het: []*SubmitCmd{{Req: job.Request{Name: "h0"}}, {Req: job.Request{Name: "h1"}}}},
		{Op: OpStart, Time: t0, Start: &StartCmd{Starts: []StartEntry{{JobID: 100, Task: 2, Alloc: job.Allocation{Nodes: []job.NodeAlloc{{Node: "n1", CPUs: 2, MemMB: 100, GPUs: []int{0}, Tasks: 1}}}, Backfill: true}}}},
		{Op: OpEnd, Time: t0, End: &EndCmd{JobID: 100, State: job.Failed, ExitCode: 2, Signal: 9, Usage: &job.Usage{UserCPU: time.Second, MaxRSS: 10}}},
		{Op: OpCancel, Time: t0, Cancel: &CancelCmd{JobIDs: []job.ID{1, 2}, UID: 1000, State: job.Timeout, Reason: job.ReasonTimeLimit, Tasks: []uint32{3}}},
		{Op: OpUpdate, Time: t0, Update: &UpdateCmd{JobID: 1, Name: &name, TimeLimit: &limit, Nice: &nice, Hold: &hold, BeginTime: &t0, Requeue: &yes}},
		{Op: OpRequeue, Time: t0, Requeue: &RequeueCmd{JobID: 1, Hold: true, Reason: job.ReasonHeldAdmin, IfRunning: true, OnEnd: true, As: job.Preempted}},
		{Op: OpNodeSet, Time: t0, NodeSet: &NodeSetCmd{Name: "n1", Down: &down, Reason: "power", UID: 0}},
		{Op: OpNodeFail, Time: t0, NodeFail: &NodeFailCmd{Name: "n2", Reason: "Not responding"}},
		{Op: OpPurge, Time: t0, Purge: &PurgeCmd{Before: t0}},
		{Op: OpSplit, Time: t0, Split: &SplitCmd{JobID: 1, Tasks: []uint32{1, 2}}},
		{Op: OpUsage, Time: t0, Usage: &UsageCmd{Usage: priority.Usage{"root/alice": 1.5}, Limits: priority.Usage{"wall:a/b": 2}}},
		{Op: OpResvSet, Time: t0, ResvSet: &ResvSetCmd{Resv: reservation.Reservation{Name: "maint", Nodes: []string{"n1"}, Start: t0}}},
		{Op: OpResvDel, Time: t0, ResvDel: &ResvDelCmd{Name: "maint"}},
		{Op: OpAcct, Time: t0, Acct: &AcctCmd{Change: assoc.Change{{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "high", Priority: 100}}}}},
		{Op: OpStep, Time: t0, Step: &StepCmd{Step: job.Step{JobID: 1, Name: "s", Nodes: []string{"n1"}, CPUs: []uint32{2}}, HetStepID: &het}},
		{Op: OpStepEnd, Time: t0, StepEnd: &StepEndCmd{JobID: 1, StepID: 0, ExitCode: 1, Signal: 2, Cancelled: true}},
		{Op: OpWarn, Time: t0, Warn: &WarnCmd{JobID: 1, Start: t0}},
		{Op: OpStepUse, Time: t0, StepUse: &StepUseCmd{Run: 2, Report: NodeStepUsage{Node: "n1", JobID: 1, StepID: 3, Tasks: 4, Usage: job.Usage{UserCPU: time.Second, SystemCPU: 2 * time.Second, MaxRSS: 5}, MaxRSSTask: 1, AveRSS: 6}}},
		{Op: OpAcctAck, Time: t0, AcctAck: &AcctAckCmd{UpTo: 42}},
		{Op: OpNodeCreate, Time: t0, NodeCreate: &NodeCreateCmd{Nodes: []node.Node{{Name: "d1", CPUs: 4, RealMemory: 1000}}}},
		{Op: OpNodeDelete, Time: t0, NodeDelete: &NodeDeleteCmd{Names: []string{"d1"}}},
		{Op: OpPartSet, Time: t0, PartSet: &PartSetCmd{Partition: partition.Partition{Name: "p", Nodes: []string{"n1"}, MaxTime: 60}}},
		{Op: OpPartDelete, Time: t0, PartDelete: &PartDeleteCmd{Name: "p"}},
		// Members added since are recorded after the first records.
		{Op: OpSubmit, Time: t0, MinJobID: 100, Request: &ClientRequest{RequestKey: RequestKey{UID: 1000, ID: "0f3c-9A_b"}, UserMsg: "job_submit: \"note\""}, Het: []*SubmitCmd{{Req: job.Request{Name: "h0"}, ScriptKey: "script/2"}, {Req: job.Request{Name: "h1"}}}},
		{Op: OpStep, Time: t0, Step: &StepCmd{Step: job.Step{JobID: 1, Name: "r", UserID: 1000, Nodes: []string{"n1", "n2"}, CPUs: []uint32{1, 1},
			Request: "7e1d", TaskIDs: [][]int{{0, 2}, {1}}, Warnings: []string{"Warning: can't run 3 processes on 4 nodes, setting nnodes to 3"}}}},
	}
	golden, err := os.ReadFile("testdata/commands.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(golden, []byte("\n")), []byte("\n"))
	if len(lines) != len(cmds) {
		t.Fatalf("%d records in testdata, %d commands here", len(lines), len(cmds))
	}
	for i, c := range cmds {
		got, err := json.Marshal(c)
		if err != nil {
			t.Fatalf("encode %s: %v", c.Op, err)
		}
		if diff := cmp.Diff(string(lines[i]), string(got)); diff != "" {
			t.Errorf("%s encodes otherwise than the log holds it (-log +now):\n%s", c.Op, diff)
		}
		var back Command
		if err := json.Unmarshal(lines[i], &back); err != nil {
			t.Fatalf("decode %s: %v", c.Op, err)
		}
		again, err := json.Marshal(&back)
		if err != nil {
			t.Fatalf("encode decoded %s: %v", c.Op, err)
		}
		if diff := cmp.Diff(string(lines[i]), string(again)); diff != "" {
			t.Errorf("%s does not decode and encode to itself (-log +now):\n%s", c.Op, diff)
		}
	}
}
