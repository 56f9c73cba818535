package squeue

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clitest"
)

const header = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)\n"

func TestRun(t *testing.T) {
	tests := map[string]struct {
		args      []string
		env       map[string]string
		ctl       func(testing.TB) *fakeController
		want      clitest.Run
		wantCalls []string
	}{
		"bare fields": {
			args:      []string{"-h", "-o", "%i %t"},
			want:      clitest.Run{Stdout: "131_[0-9%2] PD\n130 PD\n128 R\n129 R\n"},
			wantCalls: []string{"GET /jobs"},
		},
		"attached and long option values": {
			args: []string{"--noheader", "-o%i", "--states=R"},
			want: clitest.Run{Stdout: "128\n129\n"},
		},
		"ambiguous abbreviation": {
			args: []string{"--sta=CD"},
			want: clitest.Run{Code: 1, Stderr: "squeue: option '--sta' is ambiguous; possibilities: '--start' '--states'\nTry \"squeue --help\" for more information\n"},
		},
		"abbreviated long options": {
			args: []string{"--nohead", "--form", "%i", "--stat=CD"},
			want: clitest.Run{Stdout: "125\n123_1\n123_2\n122\n"},
		},
		"unknown long option": {
			args: []string{"--bogus"},
			want: clitest.Run{Code: 1, Stderr: "squeue: unrecognized option '--bogus'\nTry \"squeue --help\" for more information\n"},
		},
		"unknown short option": {
			args: []string{"-hZ"},
			want: clitest.Run{Code: 1, Stderr: "squeue: invalid option -- 'Z'\nTry \"squeue --help\" for more information\n"},
		},
		"missing argument": {
			args: []string{"-o"},
			want: clitest.Run{Code: 1, Stderr: "squeue: option requires an argument -- 'o'\nTry \"squeue --help\" for more information\n"},
		},
		"missing long argument": {
			args: []string{"--format"},
			want: clitest.Run{Code: 1, Stderr: "squeue: option '--format' requires an argument\nTry \"squeue --help\" for more information\n"},
		},
		"argument to a flag": {
			args: []string{"--long=yes"},
			want: clitest.Run{Code: 1, Stderr: "squeue: option '--long' doesn't allow an argument\nTry \"squeue --help\" for more information\n"},
		},
		"options before an error take effect": {
			args: []string{"--version", "--bogus"},
			want: clitest.Run{Stdout: "slurm 25.11.0\n"},
		},
		"operand without -j": {
			args: []string{"128"},
			want: clitest.Run{Code: 1, Stdout: usageText, Stderr: "squeue: error: Unrecognized option: 128\n"},
		},
		"job list as operand": {
			args:      []string{"-h", "-o", "%i", "-j", "128,130"},
			want:      clitest.Run{Stdout: "130\n128\n"},
			wantCalls: []string{"GET /jobs?flags=ALL"},
		},
		"bad job id": {
			args: []string{"-j", "128,x1"},
			want: clitest.Run{Code: 1, Stderr: "squeue: error: Invalid job id: x1\n"},
		},
		"single job asks for it alone": {
			args:      []string{"-h", "-o", "%i", "--jobs=129"},
			want:      clitest.Run{Stdout: "129\n"},
			wantCalls: []string{"GET /job/129?flags=ALL"},
		},
		"finished job is not shown by default": {
			args: []string{"-h", "-j", "125"},
			want: clitest.Run{},
		},
		"finished job with -t all": {
			args: []string{"-h", "-o", "%i %T %R", "-j", "126", "-t", "all"},
			want: clitest.Run{Stdout: "126 FAILED (NonZeroExitCode)\n"},
		},
		"pending array task": {
			args: []string{"-h", "-o", "%i %K %A %F %r", "-j", "131_3"},
			want: clitest.Run{Stdout: "131_3 3 131 131 Resources\n"},
		},
		"pending array tasks": {
			args: []string{"-h", "-o", "%i %K", "-j", "131_3,131_5,131_12"},
			want: clitest.Run{Stdout: "131_[3,5] 3,5\n"},
		},
		"array expanded": {
			args: []string{"-h", "-r", "-o", "%i", "-j", "131", "-t", "PD"},
			want: clitest.Run{Stdout: "131_0\n131_1\n131_2\n131_3\n131_4\n131_5\n131_6\n131_7\n131_8\n131_9\n"},
		},
		"states by long and compact name": {
			args: []string{"-h", "-o", "%i", "-t", "cancelled,F", "-n", "cancelled_job,failed_job"},
			want: clitest.Run{Stdout: "127\n126\n"},
		},
		"invalid state": {
			args: []string{"-t", "bogus"},
			want: clitest.Run{Code: 1, Stderr: "squeue: error: Invalid job state specified: bogus\n" +
				"squeue: error: Valid job states include: pending,running,suspended,completed,cancelled,failed,timeout,node_fail,preempted,boot_fail,deadline,out_of_memory,completing,configuring,expediting,resizing,resv_del_hold,requeued,requeue_fed,requeue_hold,revoked,signaling,special_exit,stage_out,stopped\n\n"},
		},
		"user by name": {
			args: []string{"-h", "-o", "%i", "-u", "root", "-t", "R"},
			want: clitest.Run{Stdout: "128\n129\n"},
		},
		"user by uid": {
			args: []string{"-h", "-o", "%i", "--users=0", "-t", "R"},
			want: clitest.Run{Stdout: "128\n129\n"},
		},
		"other user": {
			args: []string{"-h", "-u", "rcuser"},
			want: clitest.Run{},
		},
		"me": {
			args: []string{"-h", "-o", "%i", "--me", "-t", "R"},
			want: clitest.Run{Stdout: "128\n129\n"},
		},
		"notme": {
			args: []string{"-h", "--notme"},
			want: clitest.Run{},
		},
		"partition": {
			args: []string{"-h", "-o", "%i", "-p", "nosuch,debug", "-t", "R"},
			want: clitest.Run{Stdout: "128\n129\n"},
		},
		"unknown partition": {
			args: []string{"-p", "nosuch"},
			want: clitest.Run{Stdout: header},
		},
		"account, qos and name filters ignore case": {
			args: []string{"-h", "-o", "%i", "-A", "ROOT", "-q", "Normal", "-n", "GPU_JOB"},
			want: clitest.Run{Stdout: "129\n"},
		},
		"nodes": {
			args:      []string{"-h", "-o", "%i", "-w", "rc1"},
			want:      clitest.Run{Stdout: "128\n129\n"},
			wantCalls: []string{"GET /nodes", "GET /jobs"},
		},
		"unknown node": {
			args: []string{"-w", "nosuch"},
			want: clitest.Run{Code: 1, Stderr: "squeue: error: Invalid node name nosuch\n"},
		},
		"sort by id": {
			args: []string{"-h", "-o", "%i", "-S", "i"},
			want: clitest.Run{Stdout: "128\n129\n130\n131_[0-9%2]\n"},
		},
		"sort keys apply right to left": {
			args: []string{"-h", "-o", "%i", "-S", "-i,t"},
			want: clitest.Run{Stdout: "131_[0-9%2]\n130\n129\n128\n"},
		},
		"invalid sort key": {
			args: []string{"-S", "Z"},
			want: clitest.Run{Code: 1, Stdout: header, Stderr: "squeue: error: Invalid sort specification: Z\n"},
		},
		"unknown format code": {
			args: []string{"-o", "%i %! x", "-t", "R"},
			want: clitest.Run{Stdout: "JOBID %! x\n128 %! x\n129 %! x\n", Stderr: "squeue: error: Invalid job format specification: !\n"},
		},
		"prefix and suffixes": {
			args: []string{"-o", "id=%.4i|%-j", "-t", "R"},
			want: clitest.Run{Stdout: "id=JOBI|%-j\nid= 128|%-j\nid= 129|%-j\n", Stderr: "squeue: error: Invalid job format specification: -\n"},
		},
		"format and Format conflict": {
			args: []string{"-o", "%i", "-O", "JobID"},
			want: clitest.Run{Code: 1, Stderr: "squeue: error: -O (--Format) is incompatible with -o (--format)\n"},
		},
		"format and long conflict": {
			args: []string{"-l", "-o", "%i"},
			want: clitest.Run{Code: 1, Stderr: "squeue: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.\n"},
		},
		"SQUEUE_FORMAT": {
			args: []string{"-h", "-t", "R"},
			env:  map[string]string{"SQUEUE_FORMAT": "%i:%u"},
			want: clitest.Run{Stdout: "128:root\n129:root\n"},
		},
		"SQUEUE_FORMAT2": {
			args: []string{"-h", "-t", "R"},
			env:  map[string]string{"SQUEUE_FORMAT2": "JobID:4,UserName:.6"},
			want: clitest.Run{Stdout: "128   root\n129   root\n"},
		},
		"-o overrides SQUEUE_FORMAT": {
			args: []string{"-h", "-t", "R", "-o", "%i"},
			env:  map[string]string{"SQUEUE_FORMAT": "%u"},
			want: clitest.Run{Stdout: "128\n129\n"},
		},
		"environment filters": {
			args: []string{"-h", "-o", "%i"},
			env:  map[string]string{"SQUEUE_STATES": "all", "SQUEUE_NAMES": "completed_job", "SQUEUE_SORT": "-i"},
			want: clitest.Run{Stdout: "125\n"},
		},
		"relative times": {
			args: []string{"-h", "-o", "%S|%e|%V", "-t", "R"},
			env:  map[string]string{"SLURM_TIME_FORMAT": "relative"},
			want: clitest.Run{Stdout: "14:59:46|15:59:46|14:59:45\n14:59:46|NONE|14:59:45\n"},
		},
		"strftime times": {
			args: []string{"-h", "-o", "%S", "-j", "128"},
			env:  map[string]string{"SLURM_TIME_FORMAT": "%d.%m. %H:%M"},
			want: clitest.Run{Stdout: "29.11. 14:59\n"},
		},
		"only job state": {
			args: []string{"--only-job-state", "-t", "R"},
			want: clitest.Run{Stdout: "             JOBID ST\n               128  R\n               129  R\n"},
		},
		"running over": {
			args: []string{"-h", "-o", "%i", "--running-over=1:00"},
			want: clitest.Run{Stdout: "128\n129\n"},
		},
		"running under": {
			args: []string{"-h", "-o", "%i", "--running-under=1:00"},
			want: clitest.Run{},
		},
		"other JSON data parsers": {
			args: []string{"--json=v0.0.42"},
			want: clitest.Run{Code: 1, Stderr: "squeue: error: JSON output is only available with data parser v0.0.44, not v0.0.42\n"},
		},
		"iterate must be positive": {
			args: []string{"-i", "0"},
			want: clitest.Run{Code: 1, Stderr: "squeue: error: --iterate=0\n\n"},
		},
		"help state": {
			args: []string{"--helpstate"},
			want: clitest.Run{Stdout: "pending\nrunning\nsuspended\ncompleted\ncancelled\nfailed\ntimeout\nnode_fail\npreempted\nboot_fail\ndeadline\nout_of_memory\ncompleting\nconfiguring\nexpediting\nresizing\nresv_del_hold\nrequeued\nrequeue_fed\nrequeue_hold\nrevoked\nsignaling\nspecial_exit\nstage_out\nstopped\n"},
		},
		"help": {
			args: []string{"--help"},
			want: clitest.Run{Stdout: helpText},
		},
		"usage": {
			args: []string{"--usage"},
			want: clitest.Run{Stdout: usageText},
		},
		"verbose": {
			args: []string{"-v", "-h", "-o", "%i", "-t", "R"},
			want: clitest.Run{Stdout: "-----------------------------\nall         = false\narray       = false\n" +
				"federation  = false\nformat      = %i\niterate     = 0\njob_flag    = 0\njobs        = (null)\n" +
				"licenses    = (null)\nlocal       = false\nnames       = (null)\nnodes       = \n" +
				"only_job_state = false\npartitions  = (null)\npriority    = false\nreservation = (null)\n" +
				"sibling      = false\nsort        = (null)\nstart_flag  = 0\nstates      = R\nstep_flag   = 0\n" +
				"steps       = (null)\nusers       = (null)\nverbose     = 1\n-----------------------------\n\n\n" +
				"last_update_time=1795964871 records=24\n128\n129\n"},
		},
		"unknown job": {
			args: []string{"--job", "999999"},
			want: clitest.Run{Code: 1, Stderr: "slurm_load_jobs error: Invalid job id specified\n"},
		},
		"partly running array folds again without -r": {
			ctl:  partlyController,
			args: []string{"-h", "-o", "%i %r", "-t", "PD", "-j", "131"},
			want: clitest.Run{Stdout: "131_[2-9%2] JobArrayTaskLimit\n"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			mk := tc.ctl
			if mk == nil {
				mk = jobsController
			}
			ctl := mk(t)
			now := captureNow
			if tc.ctl != nil {
				now = partlyNow
			}
			h := clitest.New(t, ctl, now)
			for k, v := range tc.env {
				h.Vars[k] = v
			}
			got := h.Run(Run, "squeue", "", tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("squeue %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
			if tc.wantCalls != nil {
				if diff := cmp.Diff(tc.wantCalls, ctl.calls); diff != "" {
					t.Errorf("requests (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestFoldPendingTasks covers the folding of pending tasks that have
// records of their own (requeued tasks) into their meta record.
func TestFoldPendingTasks(t *testing.T) {
	ctl := jobsController(t)
	var meta, task = ctl.jobs.Jobs[0], ctl.jobs.Jobs[0]
	for _, j := range ctl.jobs.Jobs {
		if j.JobID.Or(0) == 131 {
			meta, task = j, j
		}
	}
	task.JobID.SetTo(150)
	task.ArrayTaskID.SetTo(meta.ArrayTaskID.Value)
	task.ArrayTaskID.Value.Set.SetTo(true)
	task.ArrayTaskID.Value.Number.SetTo(12)
	task.ArrayTaskString.SetTo("")
	task.StateReason.SetTo("Priority")
	ctl.jobs.Jobs = append(ctl.jobs.Jobs, task)

	h := clitest.New(t, ctl, captureNow)
	got := h.Run(Run, "squeue", "", "-h", "-t", "PD", "-o", "%i|%r|%R")
	want := clitest.Run{Stdout: "131_[0-9,12]|Resources,Priority|(Resources,Priority)\n130|JobHeldUser|(JobHeldUser)\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("folded (-want +got):\n%s", diff)
	}
	got = h.Run(Run, "squeue", "", "-h", "-t", "PD", "-r", "-o", "%i", "-S", "i")
	// The meta record's task id is NO_VAL, so by id it sorts after its
	// split-off task, as in Slurm.
	want = clitest.Run{Stdout: "130\n131_12\n131_0\n131_1\n131_2\n131_3\n131_4\n131_5\n131_6\n131_7\n131_8\n131_9\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("with -r (-want +got):\n%s", diff)
	}
}

// TestIterate checks that -i repeats the listing with a dated header,
// waiting the given period between listings.
func TestIterate(t *testing.T) {
	var waits []time.Duration
	saved := sleep
	t.Cleanup(func() { sleep = saved })
	sleep = func(_ context.Context, d time.Duration) bool {
		waits = append(waits, d)
		return len(waits) < 2
	}
	h := clitest.New(t, jobsController(t), captureNow)
	got := h.Run(Run, "squeue", "", "-i", "7", "-t", "R", "-o", "%i")
	block := "Sun Nov 29 15:01:01 2026\nJOBID\n128\n129\n\n"
	if diff := cmp.Diff(clitest.Run{Stdout: block + block}, got); diff != "" {
		t.Errorf("squeue -i 7 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{7 * time.Second, 7 * time.Second}, waits); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
}

// TestFieldSelection checks what squeue asks the controller for: the
// members its columns, sort keys and filters read, or whole records when
// one of them has no member list, and for --json.
func TestFieldSelection(t *testing.T) {
	tests := map[string]struct {
		args []string
		// want lists members that must be asked for; nil wants whole
		// records.
		want []string
	}{
		"default":         {nil, []string{"job_id", "partition", "name", "user_name", "job_state", "start_time", "end_time", "node_count", "nodes", "state_reason", "priority"}},
		"format":          {[]string{"-h", "-o", "%i %t"}, []string{"job_id", "job_state", "array_task_string"}},
		"user filter":     {[]string{"-u", "root", "-o", "%i"}, []string{"user_id", "user_name"}},
		"sort by submit":  {[]string{"-S", "V", "-o", "%i"}, []string{"submit_time"}},
		"json":            {[]string{"--json"}, nil},
		"field w/o list":  {[]string{"-O", "JobId,Reboot"}, nil},
		"sort w/o list":   {[]string{"-S", "z", "-o", "%i"}, nil},
		"sort by cluster": {[]string{"-S", "cluster", "-o", "%i"}, nil},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctl := jobsController(t)
			h := clitest.New(t, ctl, captureNow)
			if got := h.Run(Run, "squeue", "", tc.args...); got.Code != 0 {
				t.Fatalf("squeue %v: exit %d: %s", tc.args, got.Code, got.Stderr)
			}
			if len(ctl.selections) != 1 {
				t.Fatalf("%d listings asked", len(ctl.selections))
			}
			sel := ctl.selections[0]
			if tc.want == nil {
				if sel != nil {
					t.Errorf("asked for %v, want whole records", sel)
				}
				return
			}
			if sel == nil {
				t.Fatalf("asked for whole records, want a selection with %v", tc.want)
			}
			for _, m := range tc.want {
				if !sel.Has(m) {
					t.Errorf("selection %v lacks %s", sel, m)
				}
			}
			if len(sel) > 30 {
				t.Errorf("selection of %d members: %v", len(sel), sel)
			}
		})
	}
}
