package ctlstate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/job"
)

// TestCountJob: one record's counts, as slurmctld's statistics.c counts
// it: an array's pending tasks each, held jobs among the pending, what
// running and suspended jobs hold, completing jobs still live.
func TestCountJob(t *testing.T) {
	alloc := &job.Allocation{Nodes: []job.NodeAlloc{{Node: "n1", CPUs: 4, MemMB: 1000}, {Node: "n2", CPUs: 2, MemMB: 500}}}
	counts := func(set map[JobCount]uint64) JobCounts {
		var c JobCounts
		for k, v := range set {
			c[k] = v
		}
		return c
	}
	tests := map[string]struct {
		j    job.Job
		want JobCounts
	}{
		"pending": {job.Job{State: job.Pending},
			counts(map[JobCount]uint64{CountJobs: 1, CountRecords: 1, CountLive: 1, CountPending: 1})},
		"held array of 3": {job.Job{State: job.Pending, Hold: job.HeldUser, ArrayJobID: 7, ArrayTaskID: job.NoTask, PendingTasks: []uint32{1, 2, 3}},
			counts(map[JobCount]uint64{CountJobs: 3, CountRecords: 1, CountLive: 1, CountPending: 3, CountHold: 3})},
		"running": {job.Job{State: job.Running, Alloc: alloc},
			counts(map[JobCount]uint64{CountJobs: 1, CountRecords: 1, CountLive: 1, CountRunning: 1, CountStarted: 1, CountCPUsAlloc: 6, CountNodesAlloc: 2, CountMemAllocMB: 1500})},
		"suspended": {job.Job{State: job.Suspended, Alloc: alloc},
			counts(map[JobCount]uint64{CountJobs: 1, CountRecords: 1, CountLive: 1, CountSuspended: 1, CountStarted: 1, CountCPUsAlloc: 6, CountNodesAlloc: 2, CountMemAllocMB: 1500})},
		"cancelled, completing": {job.Job{State: job.Cancelled, Completing: true, Alloc: alloc},
			counts(map[JobCount]uint64{CountJobs: 1, CountRecords: 1, CountLive: 1, CountCancelled: 1, CountCompleting: 1, CountFinished: 1, CountStarted: 1})},
		"timed out": {job.Job{State: job.Timeout, Alloc: alloc},
			counts(map[JobCount]uint64{CountJobs: 1, CountRecords: 1, CountTimeout: 1, CountFinished: 1, CountStarted: 1})},
		"out of memory": {job.Job{State: job.OutOfMemory},
			counts(map[JobCount]uint64{CountJobs: 1, CountRecords: 1, CountOutOfMemory: 1, CountFinished: 1, CountStarted: 1})},
	}
	for name, tc := range tests {
		if diff := cmp.Diff(tc.want, countJob(&tc.j)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// TestJobStatsPartitionSpans: the largest node counts pending jobs ask
// for stay right as jobs come and go, held ones apart.
func TestJobStatsPartitionSpans(t *testing.T) {
	s := New(1, false)
	var st jobStats
	st.build(s)
	pend := func(id job.ID, min, max uint32, hold job.Hold) *job.Job {
		return &job.Job{ID: id, State: job.Pending, Hold: hold, Req: job.Request{Partition: "p", MinNodes: min, MaxNodes: max}}
	}
	st.update(1, pend(1, 2, 4, job.NotHeld))
	st.update(2, pend(2, 8, 0, job.HeldAdmin))
	st.update(3, pend(3, 3, 3, job.NotHeld))
	got := st.snapshot().ByPartition["p"]
	want := PartitionJobs{MaxJobNodes: 8, MinJobNodes: 8, MaxJobNodesNoHold: 4, MinJobNodesNoHold: 3}
	want.Counts = got.Counts
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("three pending (-want +got):\n%s", diff)
	}
	st.update(2, nil)
	st.update(1, &job.Job{ID: 1, State: job.Running, Req: job.Request{Partition: "p"}})
	got = st.snapshot().ByPartition["p"]
	want = PartitionJobs{Counts: got.Counts, MaxJobNodes: 3, MinJobNodes: 3, MaxJobNodesNoHold: 3, MinJobNodesNoHold: 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("one gone, one started (-want +got):\n%s", diff)
	}
	st.update(1, nil)
	st.update(3, nil)
	if n := len(st.snapshot().ByPartition); n != 0 {
		t.Errorf("no jobs left, %d partitions counted", n)
	}
}
