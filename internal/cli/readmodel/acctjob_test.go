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

// What sacct reads of a run besides seff's: the members whose absence
// and unset value print differently (time limit, priority), the numbers
// read whether or not they are marked set (step times, het offset), the
// expanded paths preferred, and a step's usage lists.
func TestAcctJobSacctMembers(t *testing.T) {
	tests := map[string]struct {
		js   string
		want func(*AcctJob)
	}{
		"limit and priority missing": {
			js:   `{}`,
			want: func(*AcctJob) {},
		},
		"limit unset, priority unset": {
			js: `{"time":{"limit":{"set":false,"infinite":false,"number":0}},"priority":{"set":false,"number":0}}`,
			want: func(j *AcctJob) {
				j.TimeLimit, j.HasTimeLimit, j.HasPriority = NoVal, true, true
			},
		},
		"limit infinite, priority set": {
			js: `{"time":{"limit":{"set":false,"infinite":true}},"priority":{"set":true,"number":4294}}`,
			want: func(j *AcctJob) {
				j.TimeLimit, j.HasTimeLimit, j.Priority, j.HasPriority = Infinite, true, 4294, true
			},
		},
		"limit set, priority given unset": {
			js: `{"time":{"limit":{"set":true,"number":90}},"priority":{"set":false,"number":7}}`,
			want: func(j *AcctJob) {
				j.TimeLimit, j.HasTimeLimit, j.Priority, j.HasPriority = 90, true, 7, true
			},
		},
		"het component, times, names": {
			js: `{"job_id":301,"het":{"job_id":300,"job_offset":{"set":true,"number":1}},"array":{"job_id":0,"task_id":{"set":false},"task":"4-9%2"},
				"name":"n","partition":"p","account":"a","qos":"q","state":{"current":["CANCELLED"],"reason":"None"},"kill_request_user":"root",
				"time":{"submission":1,"eligible":2,"start":3,"end":4,"elapsed":5,"suspended":6,"user":{"seconds":7,"microseconds":8},"system":{"seconds":9,"microseconds":10}},
				"required":{"CPUs":2},"nodes":"n[1-2]","tres":{"allocated":[],"requested":[{"type":"gres","name":"gpu","id":1001,"count":2}]},
				"flags":["STARTED_ON_SCHEDULE","START_RECEIVED"],"comment":{"job":"c"},"constraints":"x","container":"/b","extra":"e","failed_node":"n2",
				"licenses":"l:1","qosreq":"hi","wckey":{"wckey":"w","flags":[]},"submit_line":"sbatch","working_directory":"/w",
				"reservation":{"id":4,"name":"maint"},"association":{"id":7,"user":""},
				"stdout":"/o/%j","stdout_expanded":"/o/301","stderr":"/e/%j","stdin":"/dev/null","stdin_expanded":"",
				"derived_exit_code":{"status":["SIGNALED"],"return_code":{"set":false},"signal":{"id":{"set":true,"number":9}}}}`,
			want: func(j *AcctJob) {
				j.JobID, j.HetJobID, j.HetJobOffset, j.ArrayTasks = 301, 300, 1, "4-9%2"
				j.Name, j.Partition, j.Account, j.QOS = "n", "p", "a", "q"
				j.State, j.StateReason, j.KillRequestUser = "CANCELLED", "None", "root"
				j.SubmitTime, j.EligibleTime, j.StartTime, j.EndTime, j.Elapsed, j.Suspended = 1, 2, 3, 4, 5, 6
				j.UserCPUSecs, j.UserCPUMicrosec, j.SysCPUSecs, j.SysCPUMicrosec = 7, 8, 9, 10
				j.ReqCPUs, j.Nodes = 2, "n[1-2]"
				j.ReqTRES = []TRES{{Type: "gres", Name: "gpu", ID: 1001, Count: 2}}
				j.Flags = []string{"STARTED_ON_SCHEDULE", "START_RECEIVED"}
				j.Comment, j.Constraints, j.Container, j.Extra, j.FailedNode = "c", "x", "/b", "e", "n2"
				j.Licenses, j.QOSReq, j.WCKey, j.SubmitLine, j.WorkDir = "l:1", "hi", "w", "sbatch", "/w"
				j.Reservation, j.ReservationID, j.AssocID = "maint", 4, 7
				j.StdOut, j.StdErr, j.StdIn = "/o/301", "/e/%j", ""
				j.DerivedExitCode = ExitCode{Present: true, Signaled: true, ReturnCode: NoVal, SignalID: 9}
			},
		},
		"steps": {
			js: `{"steps":[{"step":{"id":"5.0","name":"python"},"state":["RUNNING","X"],"nodes":{"count":2,"range":"n[1-2]"},"tasks":{"count":4},
				"task":{"distribution":"Block"},"exit_code":{"status":["ERROR"],"return_code":{"set":true,"number":2}},
				"time":{"start":{"set":false,"number":11},"end":{"set":false,"infinite":true,"number":0},"elapsed":12,"suspended":13,
					"user":{"seconds":14,"microseconds":15},"system":{"seconds":16,"microseconds":17}},
				"tres":{"allocated":[{"type":"cpu","id":1,"count":8}],
					"requested":{"max":[{"type":"mem","count":1}],"min":[{"type":"mem","count":2}],"average":[{"type":"mem","count":3}],"total":[{"type":"mem","count":4}]},
					"consumed":{"max":[{"type":"fs","name":"disk","count":5}],"min":[{"type":"fs","name":"disk","count":6}],"average":[{"type":"fs","name":"disk","count":7}],"total":[{"type":"fs","name":"disk","count":8}]}}},
				{"step":{"id":"5.batch"}}]}`,
			want: func(j *AcctJob) {
				mem := func(n int64) []TRES { return []TRES{{Type: "mem", Count: n}} }
				disk := func(n int64) []TRES { return []TRES{{Type: "fs", Name: "disk", Count: n}} }
				j.Steps = []AcctStep{{
					ID: "5.0", Name: "python", State: "RUNNING", Nodes: "n[1-2]", NodeCount: 2, Tasks: 4, Distribution: "Block",
					ExitCode:  ExitCode{Present: true, Exited: true, ReturnCode: 2, SignalID: NoVal16},
					StartTime: 11, Elapsed: 12, Suspended: 13, UserCPUSecs: 14, UserCPUMicrosec: 15, SysCPUSecs: 16, SysCPUMicrosec: 17,
					AllocTRES: []TRES{{Type: "cpu", ID: 1, Count: 8}},
					MaxTRES:   mem(1), MinTRES: mem(2), AveTRES: mem(3), TotTRES: mem(4),
					OutMaxTRES: disk(5), OutMinTRES: disk(6), OutAveTRES: disk(7), OutTotTRES: disk(8),
				}, {ID: "5.batch"}}
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			var w v0044.V0044Job
			if err := w.UnmarshalJSON([]byte(tt.js)); err != nil {
				t.Fatalf("decode %s: %v", tt.js, err)
			}
			want := AcctJob{ArrayTaskID: NoVal, ReqMemPerNode: NoVal64, ReqMemPerCPU: NoVal64}
			tt.want(&want)
			if diff := cmp.Diff(want, FromV0044AcctJob(&w)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
