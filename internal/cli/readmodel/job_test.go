package readmodel

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

func decodeJob(t *testing.T, js string) *v0044.V0044JobInfo {
	t.Helper()
	var w v0044.V0044JobInfo
	if err := w.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
	return &w
}

// The numbers as Slurm's commands hold them: NO_VAL for unset members and
// unset structs alike, INFINITE for infinite ones, zero for the counters
// slurmctld never leaves unset.
func TestJobNumbers(t *testing.T) {
	type nums struct {
		TimeLimit, TimeMin, NumTasks, NumCPUs, Priority, ArrayTaskID uint32
		CPUsPerTask                                                  uint16
		MinMemory                                                    uint64
		MemPerCPU                                                    bool
		StartTime                                                    int64
		PreemptTime                                                  int64
	}
	tests := map[string]struct {
		js   string
		want nums
	}{
		"missing members": {
			js:   `{}`,
			want: nums{TimeLimit: NoVal, NumTasks: NoVal, ArrayTaskID: NoVal, CPUsPerTask: NoVal16},
		},
		"unset structs": {
			js: `{"time_limit":{"set":false},"tasks":{"set":false},"cpus":{"set":false},"priority":{"set":false},
				"start_time":{"set":false},"preempt_time":{"set":false},"cpus_per_task":{"set":false}}`,
			want: nums{TimeLimit: NoVal, NumTasks: NoVal, ArrayTaskID: NoVal, CPUsPerTask: NoVal16, PreemptTime: int64(NoVal)},
		},
		"infinite": {
			js: `{"time_limit":{"set":false,"infinite":true},"start_time":{"set":true,"infinite":true,"number":5},
				"preempt_time":{"infinite":true},"cpus_per_task":{"infinite":true}}`,
			want: nums{TimeLimit: Infinite, NumTasks: NoVal, ArrayTaskID: NoVal, CPUsPerTask: Infinite16, PreemptTime: int64(Infinite)},
		},
		"set": {
			js: `{"time_limit":{"set":true,"number":60},"time_minimum":{"set":true,"number":5},"tasks":{"set":true,"number":4},
				"cpus":{"set":true,"number":8},"priority":{"set":true,"number":100},"array_task_id":{"set":true,"number":3},
				"cpus_per_task":{"set":true,"number":2},"start_time":{"set":true,"number":1700000000},
				"memory_per_node":{"set":false},"memory_per_cpu":{"set":true,"number":512}}`,
			want: nums{TimeLimit: 60, TimeMin: 5, NumTasks: 4, NumCPUs: 8, Priority: 100, ArrayTaskID: 3, CPUsPerTask: 2,
				MinMemory: 512, MemPerCPU: true, StartTime: 1700000000},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			j := FromV0044Job(decodeJob(t, tt.js))
			got := nums{j.TimeLimit, j.TimeMin, j.NumTasks, j.NumCPUs, j.Priority, j.ArrayTaskID, j.CPUsPerTask,
				j.MinMemory, j.MemPerCPU, j.StartTime, j.PreemptTime}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The three ways the commands print an exit code, from one reading.
func TestExitCode(t *testing.T) {
	type printed struct {
		Valid          bool
		String         string
		Status, Signal uint32
	}
	tests := map[string]struct {
		js   string
		want printed
	}{
		"absent":  {js: `{}`, want: printed{String: "0:0"}},
		"pending": {js: `{"exit_code":{"status":["PENDING"],"return_code":{"set":true,"number":3}}}`, want: printed{String: "0:0", Status: 3}},
		"exited":  {js: `{"exit_code":{"status":["ERROR"],"return_code":{"set":true,"number":258}}}`, want: printed{Valid: true, String: "258:0", Status: 2}},
		"signaled": {
			js:   `{"exit_code":{"status":["SIGNALED"],"signal":{"id":{"set":true,"number":9}},"return_code":{"set":true,"number":0}}}`,
			want: printed{Valid: true, String: "0:9", Signal: 9},
		},
		"signal unset": {js: `{"exit_code":{"status":["CORE_DUMPED"],"signal":{"id":{"set":false}}}}`, want: printed{Valid: true, String: "0:0"}},
		"infinite return code": {
			js:   `{"exit_code":{"status":["SUCCESS"],"return_code":{"infinite":true}}}`,
			want: printed{Valid: true, String: "0:0"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			e := FromV0044Job(decodeJob(t, tt.js)).ExitCode
			st, sig := e.WaitPair()
			got := printed{e.Valid(), e.String(), st, sig}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A whole record: flags and lists as slurmrestd spells them, the
// allocation per node, the memory halves as given.
func TestJobInfo(t *testing.T) {
	j := FromV0044JobInfo(decodeJob(t, `{"job_id":7,"flags":["CRON_JOB","BACKFILL_ATTEMPTED"],"mail_type":["BEGIN","TIME=50%"],
		"memory_per_node":{"set":false},"memory_per_cpu":{"set":true,"number":100},"tasks_per_tres":{"infinite":true},
		"job_resources":{"cpus":3,"select_type":[],"threads_per_core":{"set":true,"number":1},"nodes":{"list":"n[1-2]","allocation":[
			{"index":1,"name":"n2","cpus":{"count":2},"memory":{"allocated":512},"sockets":[{"index":0,"cores":[{"index":0,"status":["ALLOCATED"]},{"index":1,"status":["UNALLOCATED"]}]}]},
			{"index":0,"name":"n1","cpus":{"count":1},"sockets":[]}]}}}`))
	want := JobInfo{
		Flags: []string{"CRON_JOB", "BACKFILL_ATTEMPTED"}, MailType: []string{"BEGIN", "TIME=50%"},
		MemPerNode: NoVal64, MemPerCPU: 100, TasksPerTres: Infinite16,
		CPUFreqMin: NoVal, CPUFreqMax: NoVal, CPUFreqGov: NoVal,
		AllocNodes: "n[1-2]",
		// No job_state and no counts: see TestJobInfoUnfolded.
		NoBaseState: true,
		Unfolded:    Unfolded{NumNodes: NoVal, NumCPUs: NoVal, HetJobOffset: NoVal},
		Alloc: []NodeAlloc{
			{Index: 1, Name: "n2", CPUs: 2, Memory: 512, Sockets: [][]CoreAlloc{{{Index: 0, Allocated: true}, {Index: 1}}}},
			{Index: 0, Name: "n1", CPUs: 1},
		},
	}
	got := j
	got.Job = Job{}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !j.HasFlag("CRON_JOB") || j.HasFlag("CRON") || !j.CronJob || j.JobID != 7 {
		t.Errorf("flags read as %v (CronJob %v), job id %d", j.Flags, j.CronJob, j.JobID)
	}
	if none := FromV0044JobInfo(decodeJob(t, `{"job_resources":{"cpus":0,"select_type":[],"threads_per_core":{"set":false}}}`)); none.Alloc != nil || none.AllocNodes != "" {
		t.Errorf("no nodes read as %+v %q", none.Alloc, none.AllocNodes)
	}
}

// What Job folds to 0 for squeue, kept for scontrol: INFINITE times,
// unset counts, a state list without a base state.
func TestJobInfoUnfolded(t *testing.T) {
	type read struct {
		StartTime, EndTime, PreemptTime, Folded int64
		NumNodes, NumCPUs, HetJobOffset         uint32
		FoldedCPUs, FoldedOffset                uint32
		State                                   string
		Base                                    State
		Known                                   bool
	}
	tests := map[string]struct {
		js   string
		want read
	}{
		"missing members": {
			js:   `{}`,
			want: read{NumNodes: NoVal, NumCPUs: NoVal, HetJobOffset: NoVal, State: "?"},
		},
		"unset": {
			js: `{"start_time":{"set":false},"end_time":{"set":false,"infinite":false},"preempt_time":{"set":false},
				"node_count":{"set":false},"cpus":{"set":false},"het_job_offset":{"set":false},"job_state":[]}`,
			want: read{NumNodes: NoVal, NumCPUs: NoVal, HetJobOffset: NoVal, State: "?"},
		},
		"infinite": {
			js: `{"start_time":{"set":false,"infinite":true},"end_time":{"infinite":true},"preempt_time":{"infinite":true},
				"node_count":{"infinite":true},"cpus":{"infinite":true},"het_job_offset":{"infinite":true},"job_state":["RUNNING"]}`,
			want: read{StartTime: int64(Infinite), EndTime: int64(Infinite), PreemptTime: int64(Infinite),
				NumNodes: Infinite, NumCPUs: Infinite, HetJobOffset: Infinite, FoldedCPUs: Infinite, FoldedOffset: Infinite,
				State: "RUNNING", Base: StateRunning, Known: true},
		},
		"set": {
			js: `{"start_time":{"set":true,"number":1700000000},"end_time":{"set":true,"infinite":true,"number":5},
				"node_count":{"set":true,"number":2},"cpus":{"set":true,"number":0},"het_job_offset":{"set":true,"number":0},
				"job_state":["PENDING"]}`,
			want: read{StartTime: 1700000000, EndTime: 5, Folded: 1700000000, NumNodes: 2, State: "PENDING", Known: true},
		},
		"flag without a base state": {
			js:   `{"job_state":["COMPLETING"],"het_job_offset":{"set":true,"number":1}}`,
			want: read{NumNodes: NoVal, NumCPUs: NoVal, HetJobOffset: 1, FoldedOffset: 1, State: "COMPLETING"},
		},
		"unprinted flag without a base state": {
			js:   `{"job_state":["LAUNCH_FAILED"]}`,
			want: read{NumNodes: NoVal, NumCPUs: NoVal, HetJobOffset: NoVal, State: "?"},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			j := FromV0044JobInfo(decodeJob(t, tt.js))
			u := j.Unfolded
			base, known := j.BaseState()
			got := read{u.StartTime, u.EndTime, u.PreemptTime, j.StartTime, u.NumNodes, u.NumCPUs, u.HetJobOffset,
				j.NumCPUs, j.HetJobOffset, j.StateString(), base, known}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// An array record holds its own task, and a meta record the tasks of its
// array_task_string, steps and throttle included.
func TestHoldsTask(t *testing.T) {
	tests := map[string]struct {
		taskID uint32
		tasks  string
		want   []uint32
	}{
		"one task":       {taskID: 4, want: []uint32{4}},
		"not a task":     {taskID: NoVal, want: nil},
		"meta record":    {taskID: NoVal, tasks: "2-4,7%2", want: []uint32{2, 3, 4, 7}},
		"stepped range":  {taskID: NoVal, tasks: "1-9:4", want: []uint32{1, 5, 9}},
		"zero step":      {taskID: NoVal, tasks: "3-4:0", want: []uint32{3, 4}},
		"unreadable":     {taskID: NoVal, tasks: "x-2,5", want: []uint32{5}},
		"task and range": {taskID: 0, tasks: "8", want: []uint32{0, 8}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			j := Job{ArrayTaskID: tt.taskID, ArrayTaskStr: tt.tasks}
			var got []uint32
			for id := uint32(0); id < 12; id++ {
				if j.HoldsTask(id) {
					got = append(got, id)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A fetch's error names the request; ClientError gives back what the
// client said, and an error of no fetch as it is.
func TestClientError(t *testing.T) {
	cause := errors.New("dial unix /run/slurmrestd.socket: connect: no such file or directory")
	if got := ClientError(fmt.Errorf("GET /jobs: %w", cause)); got != cause {
		t.Errorf("ClientError of a fetch error = %v, want %v", got, cause)
	}
	if got := ClientError(cause); got != cause {
		t.Errorf("ClientError of a bare error = %v, want %v", got, cause)
	}
}
