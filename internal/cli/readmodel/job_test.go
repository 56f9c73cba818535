package readmodel

import (
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
