package scancel

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/cli/readmodel"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

var captureNow = time.Unix(1795964461, 0).UTC()

// fakeController serves jobs.json and answers kills the way slurmrestd
// answered them in the captures: 200 with an error in status[] for
// unknown (2017) and finished (2021) jobs.
type fakeController struct {
	v0044.UnimplementedHandler
	t     testing.TB
	jobs  v0044.V0044OpenapiJobInfoResp
	codes map[string][]int32 // scripted error codes per job id string, consumed in order
	calls []string
}

func newController(t testing.TB) *fakeController {
	f := &fakeController{t: t, codes: map[string][]int32{}}
	clitest.LoadReference(t, "jobs.json", &f.jobs)
	return f
}

func (f *fakeController) SlurmV0044GetJobs(_ context.Context, p v0044.SlurmV0044GetJobsParams) (v0044.SlurmV0044GetJobsRes, error) {
	f.calls = append(f.calls, "GET /jobs?flags="+string(p.Flags.Or("")))
	resp := f.jobs
	return &resp, nil
}

func (f *fakeController) SlurmV0044DeleteJob(_ context.Context, p v0044.SlurmV0044DeleteJobParams) (v0044.SlurmV0044DeleteJobRes, error) {
	call := "DELETE /job/" + p.JobID
	var q []string
	if s, ok := p.Signal.Get(); ok {
		q = append(q, "signal="+s)
	}
	if fl, ok := p.Flags.Get(); ok {
		q = append(q, "flags="+string(fl))
	}
	if len(q) > 0 {
		call += "?" + strings.Join(q, "&")
	}
	f.calls = append(f.calls, call)
	code := f.code(p.JobID)
	switch code {
	case 0:
		var resp v0044.V0044OpenapiKillJobResp
		clitest.LoadReference(f.t, "job_delete.json", &resp)
		return &resp, nil
	case 2017:
		var resp v0044.V0044OpenapiKillJobResp
		clitest.LoadReference(f.t, "err_job_delete_unknown.json", &resp)
		resp.Status[0].StepID = p.JobID
		return &resp, nil
	}
	var resp v0044.V0044OpenapiKillJobResp
	clitest.LoadReference(f.t, "job_delete_again.json", &resp)
	resp.Status[0].StepID = p.JobID
	resp.Status[0].Error.Value.Code.SetTo(code)
	msg := jobfmtCode(code)
	resp.Status[0].Error.Value.String.SetTo(msg)
	resp.Status[0].Error.Value.Message.SetTo(msg)
	return &resp, nil
}

func (f *fakeController) SlurmV0044DeleteJobs(_ context.Context, req v0044.OptV0044KillJobsMsg) (v0044.SlurmV0044DeleteJobsRes, error) {
	m := req.Value
	var parts []string
	if len(m.Jobs) > 0 {
		parts = append(parts, "jobs="+strings.Join(m.Jobs, ","))
	}
	if v, ok := m.JobName.Get(); ok {
		parts = append(parts, "job_name="+v)
	}
	if v, ok := m.UserName.Get(); ok {
		parts = append(parts, "user_name="+v)
	}
	if v, ok := m.Signal.Get(); ok {
		parts = append(parts, "signal="+v)
	}
	var flags []string
	for _, fl := range m.Flags {
		flags = append(flags, string(fl))
	}
	if flags != nil {
		parts = append(parts, "flags="+strings.Join(flags, ","))
	}
	f.calls = append(f.calls, "DELETE /jobs "+strings.Join(parts, " "))
	resp := &v0044.V0044OpenapiKillJobsResp{Status: v0044.V0044KillJobsRespMsg{}}
	ids := m.Jobs
	if len(ids) == 0 {
		for _, j := range readmodel.FromV0044Jobs(f.jobs.Jobs) {
			if !j.State.IsFinished() && j.Name == m.JobName.Or(j.Name) {
				ids = append(ids, strconv.Itoa(int(j.JobID)))
			}
		}
	}
	for _, id := range ids {
		st := v0044.V0044KillJobsRespJob{StepID: id}
		if code := f.code(id); code != 0 {
			st.Error = v0044.NewOptV0044KillJobsRespJobError(v0044.V0044KillJobsRespJobError{
				Code: v0044.NewOptInt32(code), String: v0044.NewOptString(jobfmtCode(code)),
			})
		}
		resp.Status = append(resp.Status, st)
	}
	return resp, nil
}

// code decides a kill's outcome: a scripted code, else 0 for live jobs,
// 2021 for finished ones and 2017 for unknown ones.
func (f *fakeController) code(id string) int32 {
	if s := f.codes[id]; len(s) > 0 {
		f.codes[id] = s[1:]
		return s[0]
	}
	n, _ := strtol(id)
	found := false
	for _, j := range readmodel.FromV0044Jobs(f.jobs.Jobs) {
		if int64(j.JobID) == n || int64(j.ArrayJobID) == n {
			found = true
			if !j.State.IsFinished() {
				return 0
			}
		}
	}
	if found {
		return 2021
	}
	return 2017
}

func jobfmtCode(code int32) string {
	switch code {
	case 2017:
		return "Invalid job id specified"
	case 2020:
		return "Job can not be altered now, try again later"
	case 2021:
		return "Job/step already completing or completed"
	}
	return "Unspecified error"
}

func TestGoldenCaptures(t *testing.T) {
	for _, name := range []string{"err_scancel_unknown_job", "err_scancel_completed_job"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(clitest.ReferenceDir(t), "cli")
			words := strings.Fields(clitest.ReadReference(t, filepath.Join("cli", name+".cmd")))
			rc, err := strconv.Atoi(strings.TrimSpace(clitest.ReadReference(t, filepath.Join("cli", name+".rc"))))
			if err != nil {
				t.Fatal(err)
			}
			want := clitest.Run{Code: rc}
			if b, err := os.ReadFile(filepath.Join(dir, name+".out")); err == nil {
				want.Stdout = string(b)
			}
			if b, err := os.ReadFile(filepath.Join(dir, name+".err")); err == nil {
				want.Stderr = string(b)
			}
			h := clitest.New(t, newController(t), captureNow)
			got := h.Run(Run, "scancel", "", words[1:]...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", strings.Join(words, " "), diff)
			}
		})
	}
}

func TestRun(t *testing.T) {
	try := "Try \"scancel --help\" for more information\n"
	tests := map[string]struct {
		args      []string
		stdin     string
		env       map[string]string
		codes     map[string][]int32
		want      clitest.Run
		wantCalls []string
	}{
		"running job": {
			args:      []string{"128"},
			wantCalls: []string{"DELETE /job/128"},
		},
		"comma list and array forms are sent as written": {
			args:      []string{"128,131_3", "131_[4-5]"},
			wantCalls: []string{"DELETE /job/128", "DELETE /job/131_3", "DELETE /job/131_[4-5]"},
		},
		"unknown job is silent": {
			args:      []string{"999999"},
			wantCalls: []string{"DELETE /job/999999"},
		},
		"unknown job with -v": {
			args: []string{"-v", "999999"},
			want: clitest.Run{Stderr: "scancel: Terminating job 999999\n" +
				"scancel: error: Kill job error on job id 999999: Invalid job id specified\n"},
			wantCalls: []string{"DELETE /job/999999"},
		},
		"finished job with -v": {
			args: []string{"125", "--verbose"},
			want: clitest.Run{Stderr: "scancel: Terminating job 125\n" +
				"scancel: error: Kill job error on job id 125: Job/step already completing or completed\n"},
		},
		"other errors are reported and set the exit code": {
			args:  []string{"128"},
			codes: map[string][]int32{"128": {2002}},
			want:  clitest.Run{Code: 2002 & 0xff, Stderr: "scancel: error: Kill job error on job id 128: Unspecified error\n"},
		},
		"transitional state is retried": {
			args:      []string{"-v", "128"},
			codes:     map[string][]int32{"128": {2020, 2020}},
			want:      clitest.Run{Stderr: "scancel: Terminating job 128\nscancel: Job is in transitional state, retrying\nscancel: Job is in transitional state, retrying\n"},
			wantCalls: []string{"DELETE /job/128", "DELETE /job/128", "DELETE /job/128"},
		},
		"full job": {
			args:      []string{"-f", "128"},
			wantCalls: []string{"DELETE /job/128?flags=FULL_JOB"},
		},
		"two flags go through DELETE /jobs": {
			args:      []string{"--full", "--hurry", "128"},
			wantCalls: []string{"DELETE /jobs jobs=128 signal=9 flags=FULL_JOB,HURRY"},
		},
		"signal looks the job up first": {
			args:      []string{"-v", "-s", "USR1", "128"},
			want:      clitest.Run{Stderr: "scancel: Signal 10 to job 128\n"},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/128?signal=10"},
		},
		"signal spellings": {
			args:      []string{"--signal=sigterm", "128", "-s", " 2 ", "129"},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/128?signal=2", "DELETE /job/129?signal=2"},
		},
		"unknown signal": {
			args: []string{"-s", "BOGUS", "128"},
			want: clitest.Run{Code: 1, Stderr: "Unknown job signal: BOGUS\n"},
		},
		"signal to a finished job": {
			args:      []string{"-s", "TERM", "125"},
			want:      clitest.Run{Code: 1, Stderr: "scancel: error: Kill job error on job id 125: Invalid job id specified\n"},
			wantCalls: []string{"GET /jobs?flags=ALL"},
		},
		"quiet": {
			args:      []string{"-Q", "-s", "TERM", "125", "128"},
			want:      clitest.Run{Code: 1},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/128?signal=15"},
		},
		"signal to a job that ends meanwhile": {
			args:  []string{"-s", "TERM", "128"},
			codes: map[string][]int32{"128": {2021}},
			want:  clitest.Run{Code: 2021 & 0xff},
		},
		"array meta record": {
			args:      []string{"-s", "TERM", "131"},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/131_[0-9]?signal=15"},
		},
		"array task": {
			args:      []string{"-b", "131_3"},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/131_3?flags=BATCH_JOB"},
		},
		"batch verbose": {
			args: []string{"-bv", "128"},
			want: clitest.Run{Stderr: "scancel: Terminating batch job 128\n"},
		},
		"name filter": {
			args:      []string{"-n", "held_job"},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/130"},
		},
		"user and state filter": {
			args:      []string{"--user=root", "--state=PD"},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/130", "DELETE /job/131_[0-9]"},
		},
		"me: pending jobs first": {
			args:      []string{"--me"},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/130", "DELETE /job/131_[0-9]", "DELETE /job/128", "DELETE /job/129"},
		},
		"filters combine with ids": {
			args:      []string{"-t", "RUNNING", "128", "130"},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/128"},
		},
		"no match": {
			args:      []string{"-v", "-p", "nosuch", "-A", "Root"},
			want:      clitest.Run{Stderr: "scancel: error: No active jobs match ALL job filters, including: account=root partition=nosuch \n"},
			wantCalls: []string{"GET /jobs?flags=ALL"},
		},
		"environment": {
			env:       map[string]string{"SCANCEL_NAME": "gpu_job", "SCANCEL_VERBOSE": "true"},
			want:      clitest.Run{Stderr: "scancel: Terminating job 129\n"},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/129"},
		},
		"interactive": {
			args:      []string{"-i", "128", "129"},
			stdin:     "maybe\ny\nn\n",
			want:      clitest.Run{Stdout: strings.Repeat("Cancel job_id=128 name=running_job partition=debug [y/n]? ", 2) + "Cancel job_id=129 name=gpu_job partition=debug [y/n]? "},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/128"},
		},
		"ctld": {
			args: []string{"--ctld", "-v", "128", "999999"},
			want: clitest.Run{Stderr: "scancel: Terminating job 128\n" +
				"scancel: error: Kill job error on job id 999999: Invalid job id specified\n"},
			wantCalls: []string{"DELETE /jobs jobs=128,999999 signal=9 flags=VERBOSE"},
		},
		"ctld filters": {
			args:      []string{"-M", "rccluster", "-n", "held_job"},
			wantCalls: []string{"DELETE /jobs job_name=held_job signal=9"},
		},
		"invalid job id": {
			args: []string{"abc"},
			want: clitest.Run{Code: 1, Stderr: "scancel: error: Invalid job id abc\n"},
		},
		"invalid task range": {
			args: []string{"12_[1-3],13"},
			want: clitest.Run{Code: 1, Stderr: "scancel: error: Invalid job id 12_[1-3],13\n"},
		},
		"a step goes as written": {
			args:      []string{"128.0"},
			wantCalls: []string{"DELETE /job/128.0"},
		},

		"nothing to do": {
			args: []string{"-v"},
			want: clitest.Run{Code: 1, Stderr: "scancel: error: No job identification provided\n"},
		},
		"bad state": {
			args: []string{"-t", "bogus"},
			want: clitest.Run{Code: 1, Stderr: "Invalid job state specified: bogus\nValid job states are PENDING, RUNNING, and SUSPENDED\n"},
		},
		"unknown option": {
			args: []string{"--bogus", "128"},
			want: clitest.Run{Code: 1, Stderr: "scancel: unrecognized option '--bogus'\n" + try},
		},
		"missing argument": {
			args: []string{"128", "-s"},
			want: clitest.Run{Code: 1, Stderr: "scancel: option requires an argument -- 's'\n" + try},
		},
		"abbreviation": {
			args:      []string{"--part=debug", "--sta=R"},
			wantCalls: []string{"GET /jobs?flags=ALL", "DELETE /job/128", "DELETE /job/129"},
		},
		"version": {
			args: []string{"-V"},
			want: clitest.Run{Stdout: "slurm " + clienv.SlurmVersion + "\n"},
		},
		"usage": {
			args: []string{"--usage"},
			want: clitest.Run{Stdout: usageText},
		},
	}
	saved := sleep
	t.Cleanup(func() { sleep = saved })
	sleep = func(context.Context, time.Duration) bool { return true }
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctl := newController(t)
			for k, v := range tc.codes {
				ctl.codes[k] = v
			}
			h := clitest.New(t, ctl, captureNow)
			for k, v := range tc.env {
				h.Vars[k] = v
			}
			got := h.Run(Run, "scancel", tc.stdin, tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scancel %s (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
			if tc.wantCalls != nil {
				if diff := cmp.Diff(tc.wantCalls, ctl.calls); diff != "" {
					t.Errorf("requests (-want +got):\n%s", diff)
				}
			}
		})
	}
}
