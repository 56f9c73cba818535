package v0044_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	api "github.com/droverhq/drover/openapi/v0044"
)

var ctx = context.Background()

const v44 = "/slurm/v0.0.44"

// submitRaw posts a job description (JSON text) and returns the job id.
func (r *rest) submitRaw(user, desc string) job.ID {
	r.t.Helper()
	a := r.do(http.MethodPost, v44+"/job/submit", user, []byte(`{"job":`+desc+`}`))
	if a.Status != http.StatusOK {
		r.t.Fatalf("submit: HTTP %d %s", a.Status, a.Body)
	}
	id, ok := path(a.JSON(r.t), "job_id").(float64)
	if !ok {
		r.t.Fatalf("submit: no job_id in %s", a.Body)
	}
	return job.ID(id)
}

// minimalDesc is job_submit_minimal.req.json's job, with extra fields.
func minimalDesc(extra string) string {
	d := `{"script":"#!/bin/bash\nsleep 60\n","current_working_directory":"/home/alice/project","environment":["PATH=/usr/bin:/bin"]`
	if extra != "" {
		d += "," + extra
	}
	return d + "}"
}

// jobRecord fetches GET /job/{id} and returns its records.
func (r *rest) jobRecord(id string) []any {
	r.t.Helper()
	a := r.do(http.MethodGet, v44+"/job/"+id, "root", nil)
	if a.Status != http.StatusOK {
		r.t.Fatalf("GET job %s: HTTP %d %s", id, a.Status, a.Body)
	}
	return asList(a.JSON(r.t)["jobs"])
}

func (r *rest) waitState(id job.ID, st job.State) {
	r.t.Helper()
	ctltest.Eventually(r.t, func() bool { return r.c.Job(id).State == st }, "job %d %v", id, st)
}

func TestReferenceCapturesFollowSpec(t *testing.T) {
	// The validator itself is checked against real slurmrestd: every JSON
	// capture follows the document, except where real slurmrestd is known
	// to break it. Drover cannot copy those departures: the generated
	// client (and so the drop-in commands) refuses such answers.
	knownBreaks := []string{
		`/job_resources": Value is not nullable`, // null for pending jobs
		`"/results": Value is not nullable`,      // job update answers "results": null
		`property "nodes" is missing`,            // unknown node: error only
		`property "partitions" is missing`,       // unknown partition: error only
		`property "reservations" is missing`,     // unknown reservation: error only
		`job_id": value must be an integer`,      // /jobs/state/ has string ids
	}
	index := string(reference(t, "INDEX.md"))
	checked := 0
	for _, line := range strings.Split(index, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 7 || strings.TrimSpace(cells[5]) != "application/json" {
			continue
		}
		file := strings.Trim(strings.Fields(cells[1])[0], "`")
		method := strings.TrimSpace(cells[2])
		target := strings.Trim(strings.TrimSpace(cells[3]), "`")
		status, err := strconv.Atoi(strings.TrimSpace(cells[4]))
		if err != nil {
			t.Fatalf("INDEX.md line %q: %v", line, err)
		}
		req := httptest.NewRequest(method, target, nil)
		err = validate(t, req, status, http.Header{"Content-Type": {"application/json"}}, reference(t, file))
		checked++
		if err == nil {
			continue
		}
		if !slices.ContainsFunc(knownBreaks, func(k string) bool { return strings.Contains(err.Error(), k) }) {
			t.Errorf("%s: %v", file, err)
		}
	}
	if checked < 50 {
		t.Errorf("checked only %d captures", checked)
	}
}

func TestPingAndDiag(t *testing.T) {
	r := newREST(t)
	res, err := r.root.SlurmV0044GetPing(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ping, ok := res.(*api.V0044OpenapiPingArrayResp)
	if !ok || len(ping.Pings) != 1 {
		t.Fatalf("ping answer %T %+v", res, res)
	}
	p := ping.Pings[0]
	if p.Hostname.Or("") != "ctl0" || p.Pinged.Or("") != "UP" || !p.Responding || !p.Primary || p.Mode.Or("") != "primary" {
		t.Errorf("ping %+v", p)
	}
	m := ping.Meta.Value
	got := []string{m.Plugin.Value.Type.Or(""), m.Plugin.Value.DataParser.Or(""), m.Client.Value.User.Or(""), m.Client.Value.Group.Or(""), m.Slurm.Value.Cluster.Or(""), m.Slurm.Value.Release.Or("")}
	if diff := cmp.Diff([]string{"openapi/slurmctld", "data_parser/v0.0.44", "root", "root", "testcluster", "25.11.0"}, got); diff != "" {
		t.Errorf("meta (-want +got):\n%s", diff)
	}
	// As nobody, the caller shows in meta.
	res, err = r.nobody.SlurmV0044GetPing(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if u := res.(*api.V0044OpenapiPingArrayResp).Meta.Value.Client.Value.User.Or(""); u != "nobody" {
		t.Errorf("meta.client.user %q, want nobody", u)
	}

	r.submitRaw("root", minimalDesc(""))
	// Asked twice: a request is counted once answered, as slurmctld
	// records it, so the first diag shows in the second.
	if _, err := r.root.SlurmV0044GetDiag(ctx); err != nil {
		t.Fatal(err)
	}
	dres, err := r.root.SlurmV0044GetDiag(ctx)
	if err != nil {
		t.Fatal(err)
	}
	diag, ok := dres.(*api.V0044OpenapiDiagResp)
	if !ok {
		t.Fatalf("diag answer %T", dres)
	}
	if n := diag.Statistics.JobsSubmitted.Or(0); n != 1 {
		t.Errorf("jobs_submitted %d, want 1", n)
	}
	var kinds []string
	for _, k := range diag.Statistics.RpcsByMessageType {
		kinds = append(kinds, k.MessageType)
		// Slurm's number for the message, as sdiag prints it.
		if k.MessageType == "REQUEST_SUBMIT_BATCH_JOB" && k.TypeID != 4003 {
			t.Errorf("REQUEST_SUBMIT_BATCH_JOB's type_id %d, want 4003", k.TypeID)
		}
	}
	for _, want := range []string{"REQUEST_PING", "REQUEST_SUBMIT_BATCH_JOB", "REQUEST_STATS_INFO"} {
		if !slices.Contains(kinds, want) {
			t.Errorf("rpcs_by_message_type lacks %s: %v", want, kinds)
		}
	}
	users := map[string]int32{}
	for _, u := range diag.Statistics.RpcsByUser {
		users[u.User] = u.Count
	}
	if users["root"] < 3 || users["nobody"] < 1 {
		t.Errorf("rpcs_by_user %v: want root's submission and diag, nobody's ping", users)
	}

	// slurmdbd's statistics: the DBD_* requests only, counted once
	// answered with their time, the first diag in the second.
	for i := range 2 {
		dres, err := r.root.SlurmdbV0044GetDiag(ctx)
		if err != nil {
			t.Fatal(err)
		}
		db, ok := dres.(*api.V0044OpenapiSlurmdbdStatsResp)
		if !ok {
			t.Fatalf("slurmdb diag answer %T", dres)
		}
		var got []string
		for _, r := range db.Statistics.RPCs {
			got = append(got, r.RPC.Or(""))
			if tm := r.Time.Value; tm.Total.Or(-1) < 0 || tm.Average.Or(-1) < 0 {
				t.Errorf("%s time %+v", r.RPC.Or(""), tm)
			}
		}
		if slices.ContainsFunc(got, func(k string) bool { return !strings.HasPrefix(k, "DBD_") }) {
			t.Errorf("slurmdb diag RPCs %v: want DBD_* only", got)
		}
		if i == 1 && !slices.Contains(got, "DBD_GET_STATS") {
			t.Errorf("slurmdb diag RPCs %v lack the first DBD_GET_STATS", got)
		}
	}
}

func TestSubmitAnswers(t *testing.T) {
	tests := map[string]struct {
		body    string // inline body, or
		reqFile string // a reference request
		// ref is the reference answer whose errors and warnings ours must
		// repeat exactly (unless want is given).
		ref         string
		status      int
		contentType string
		want        *problems
		job         bool
	}{
		"minimal":             {reqFile: "job_submit_minimal.req.json", ref: "job_submit_minimal.json", status: 200, job: true},
		"rich, held":          {reqFile: "job_submit_rich.req.json", ref: "job_submit_rich.json", status: 200, job: true},
		"array, held":         {reqFile: "job_submit_array.req.json", ref: "job_submit_array.json", status: 200, job: true},
		"time limit over max": {reqFile: "submit_huge_time_limit.req.json", ref: "submit_huge_time_limit.json", status: 200, job: true},
		"unknown field": {
			// Departure: slurmrestd adds an "Ignoring unknown field"
			// warning; the generated decoder skips unknown fields
			// silently.
			reqFile: "submit_unknown_field.req.json", status: 200, job: true,
			want: &problems{Errors: []string{}, Warnings: []string{
				"[slurm_submit_batch_job()] Job submission resulted in non-zero return code: Job is in held state, pending scheduler release",
				"[slurm_submit_batch_job()] Job is in held state, pending scheduler release",
			}},
		},
		"unknown partition": {
			// Departure: the description carries the detail that sbatch
			// prints ("invalid partition specified: nosuch") instead of
			// slurmrestd's fixed "Batch job submission failed".
			reqFile: "err_submit_unknown_partition.req.json", status: 500,
			want: &problems{Errors: []string{"2000 Invalid partition name specified [slurm_submit_batch_job()] invalid partition specified: nosuch"}, Warnings: []string{}},
		},
		"no environment":   {reqFile: "err_submit_no_environment.req.json", ref: "err_submit_no_environment.json", status: 500},
		"missing script":   {reqFile: "err_submit_missing_script.req.json", ref: "err_submit_missing_script.json", status: 422},
		"empty body":       {reqFile: "err_submit_empty_body.req.json", ref: "err_submit_empty_body.json", status: 422},
		"empty object":     {body: `{}`, ref: "err_submit_missing_script.json", status: 422},
		"not an object":    {reqFile: "err_submit_not_object.req.json", ref: "err_submit_not_object.json", status: 500},
		"malformed JSON":   {reqFile: "err_submit_malformed_json.req.json", status: 400, contentType: "text/plain"},
		"top-level script": {body: `{"script":"#!/bin/sh\ntrue\n","job":{"current_working_directory":"/tmp","environment":["A=1"]}}`, status: 200, job: true, want: &problems{Errors: []string{}, Warnings: []string{}}},
		"too many GPUs": {
			body: `{"job":` + minimalDesc(`"tres_per_node":"gres/gpu:9"`) + `}`, status: 500,
			want: &problems{Errors: []string{"2014 Requested node configuration is not available [slurm_submit_batch_job()] Batch job submission failed"}, Warnings: []string{}},
		},
		"array beyond MaxArraySize": {
			body: `{"job":` + minimalDesc(`"array":"0-2000000000"`) + `}`, status: 422,
		},
		"wrong field type": {
			// Departure, deliberate: slurmrestd answers 200 with only a
			// warning and no job_id (the job is not submitted); Drover
			// refuses with 422 and an error, which no client can take
			// for a success.
			reqFile: "err_submit_wrong_field_type.req.json", status: 422,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := newREST(t)
			body := []byte(tc.body)
			if tc.reqFile != "" {
				body = reference(t, tc.reqFile)
			}
			before := len(r.c.Ctl.Jobs(controller.JobFilter{}))
			a := r.do(http.MethodPost, v44+"/job/submit", "root", body)
			ct := tc.contentType
			if ct == "" {
				ct = "application/json"
			}
			if a.Status != tc.status || a.ContentType != ct {
				t.Fatalf("HTTP %d %s, want %d %s\n%s", a.Status, a.ContentType, tc.status, ct, a.Body)
			}
			after := len(r.c.Ctl.Jobs(controller.JobFilter{}))
			if got := after > before; got != tc.job {
				t.Errorf("job created: %v, want %v", got, tc.job)
			}
			if ct == "text/plain" {
				if want := string(reference(t, "err_submit_malformed_json.txt")); string(a.Body) != want {
					t.Errorf("body %q, want %q", a.Body, want)
				}
				return
			}
			v := a.JSON(t)
			if _, hasID := v["job_id"]; hasID != tc.job {
				t.Errorf("job_id present: %v, want %v", hasID, tc.job)
			}
			got := problemsOf(v)
			switch {
			case tc.want != nil:
				if diff := cmp.Diff(*tc.want, got); diff != "" {
					t.Errorf("errors and warnings (-want +got):\n%s", diff)
				}
			case tc.ref != "":
				if diff := cmp.Diff(problemsOf(referenceJSON(t, tc.ref)), got); diff != "" {
					t.Errorf("errors and warnings, compared with real slurmrestd (-real +ours):\n%s", diff)
				}
			default:
				if len(got.Errors) == 0 {
					t.Errorf("no error in %s", a.Body)
				}
			}
		})
	}
}

// fieldsNotInReference lists keys of a job record that real slurmrestd's
// record of the same kind does not have: Drover must not invent fields.
func fieldsNotInReference(t *testing.T, ours any, refFile string) []string {
	t.Helper()
	ref := keys(path(referenceJSON(t, refFile), "jobs", 0))
	var extra []string
	for _, k := range keys(ours) {
		if !slices.Contains(ref, k) {
			extra = append(extra, k)
		}
	}
	return extra
}

func TestJobAnswers(t *testing.T) {
	r := newREST(t)
	running := r.submitRaw("root", minimalDesc(`"time_limit":{"set":true,"number":60}`))
	r.waitState(running, job.Running)
	completed := r.submitRaw("root", minimalDesc(""))
	failed := r.submitRaw("root", minimalDesc(""))
	cancelled := r.submitRaw("root", minimalDesc(""))
	gpu := r.submitRaw("root", minimalDesc(`"tres_per_node":"gres/gpu:1"`))
	for _, id := range []job.ID{completed, failed, cancelled, gpu} {
		r.waitState(id, job.Running)
	}
	r.c.Finish(completed, nodeproto.EndExited, 0, 0)
	r.c.Finish(failed, nodeproto.EndExited, 3, 0)
	if a := r.do(http.MethodDelete, fmt.Sprintf("%s/job/%d", v44, cancelled), "root", nil); a.Status != 200 {
		t.Fatalf("cancel: %d %s", a.Status, a.Body)
	}
	r.c.Finish(cancelled, nodeproto.EndCancelled, 0, 15)
	held := r.submitRaw("root", minimalDesc(`"hold":true`))

	tests := map[string]struct {
		id  job.ID
		ref string
		// same lists fields whose value must equal the reference's.
		same  []string
		state []any
	}{
		"running":   {id: running, ref: "job_running.json", same: []string{"exit_code", "derived_exit_code", "array_job_id", "array_task_id", "array_task_string", "batch_flag", "restart_cnt", "state_reason"}, state: []any{"RUNNING"}},
		"completed": {id: completed, ref: "job_completed.json", same: []string{"exit_code", "state_reason"}, state: []any{"COMPLETED"}},
		"failed":    {id: failed, ref: "job_failed.json", same: []string{"exit_code", "state_reason"}, state: []any{"FAILED"}},
		"cancelled": {id: cancelled, ref: "job_cancelled.json", same: []string{"exit_code"}, state: []any{"CANCELLED"}},
		"gpu":       {id: gpu, ref: "job_gpu.json", same: []string{"tres_per_node", "exit_code"}, state: []any{"RUNNING"}},
		"held":      {id: held, ref: "job_held.json", same: []string{"state_reason", "hold", "priority", "array_task_id", "exit_code"}, state: []any{"PENDING"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			recs := r.jobRecord(strconv.Itoa(int(tc.id)))
			if len(recs) != 1 {
				t.Fatalf("%d records", len(recs))
			}
			ours := recs[0]
			ref := path(referenceJSON(t, tc.ref), "jobs", 0)
			if diff := cmp.Diff(tc.state, path(ours, "job_state")); diff != "" {
				t.Errorf("job_state (-want +got):\n%s", diff)
			}
			for _, f := range tc.same {
				if diff := cmp.Diff(path(ref, f), path(ours, f)); diff != "" {
					t.Errorf("%s, compared with real slurmrestd (-real +ours):\n%s", f, diff)
				}
			}
			if extra := fieldsNotInReference(t, ours, tc.ref); len(extra) != 0 {
				t.Errorf("fields real slurmrestd does not send: %v", extra)
			}
			wantOut := fmt.Sprintf("/home/alice/project/slurm-%d.out", tc.id)
			if got := path(ours, "stdout_expanded"); got != wantOut {
				t.Errorf("stdout_expanded %v, want %s", got, wantOut)
			}
			if got := path(ours, "standard_output"); got != "slurm-%j.out" {
				t.Errorf("standard_output %v, want slurm-%%j.out as slurmctld fills it", got)
			}
			res := path(ours, "job_resources")
			switch tc.state[0] {
			case "PENDING":
				if res != nil {
					t.Errorf("pending job has job_resources %v", res)
				}
			default:
				if diff := cmp.Diff(keys(path(ref, "job_resources")), keys(res)); diff != "" {
					t.Errorf("job_resources keys (-real +ours):\n%s", diff)
				}
				refNode := path(ref, "job_resources", "nodes", "allocation", 0)
				ourNode := path(res, "nodes", "allocation", 0)
				if diff := cmp.Diff(keys(refNode), keys(ourNode)); diff != "" {
					t.Errorf("allocation keys (-real +ours):\n%s", diff)
				}
			}
		})
	}
	// TRES strings have slurmctld's shape.
	if got := path(r.jobRecord(strconv.Itoa(int(gpu)))[0], "tres_alloc_str"); got != "cpu=1,mem=1000M,node=1,billing=1,gres/gpu=1" {
		t.Errorf("tres_alloc_str %v", got)
	}
	if got := path(r.jobRecord(strconv.Itoa(int(held)))[0], "tres_alloc_str"); got != "" {
		t.Errorf("pending tres_alloc_str %v", got)
	}
	// A running job with no limit ends a year after it started, as
	// slurmctld shows it.
	inf := r.submitRaw("root", minimalDesc(""))
	r.waitState(inf, job.Running)
	rec := r.jobRecord(strconv.Itoa(int(inf)))[0]
	start, end := path(rec, "start_time", "number").(float64), path(rec, "end_time", "number").(float64)
	if end-start != 365*24*3600 {
		t.Errorf("end - start = %v, want a year", end-start)
	}
}

func TestJobUnknown(t *testing.T) {
	r := newREST(t)
	ref := referenceJSON(t, "err_job_unknown.json")
	// 999999 is the captured request; the others (a task of an unknown
	// array, ids that are not ids) get the same answer shape.
	for _, id := range []string{"999999", "999999_1", "0", "abc", "1_[x]"} {
		a := r.do(http.MethodGet, v44+"/job/"+id, "root", nil)
		if a.Status != http.StatusNotFound {
			t.Errorf("GET job %s: HTTP %d", id, a.Status)
			continue
		}
		v := a.JSON(t)
		if diff := cmp.Diff(keys(ref), keys(v)); diff != "" {
			t.Errorf("GET job %s: keys (-real +ours):\n%s", id, diff)
		}
		if diff := cmp.Diff([]any{}, v["jobs"]); diff != "" {
			t.Errorf("GET job %s: jobs (-want +got):\n%s", id, diff)
		}
		if id != "999999" {
			if code := path(v, "errors", 0, "error_number"); code != float64(2017) {
				t.Errorf("GET job %s: error %v", id, code)
			}
			continue
		}
		if diff := cmp.Diff(problemsOf(ref), problemsOf(v)); diff != "" {
			t.Errorf("GET job %s (-real +ours):\n%s", id, diff)
		}
		for _, f := range []string{"last_backfill", "last_update"} {
			if diff := cmp.Diff(ref[f], v[f]); diff != "" {
				t.Errorf("%s (-real +ours):\n%s", f, diff)
			}
		}
	}
	// The generated client reads the 404 answer.
	res, err := r.root.SlurmV0044GetJob(ctx, api.SlurmV0044GetJobParams{JobID: "999999"})
	if err != nil {
		t.Fatal(err)
	}
	if sc, ok := res.(*api.V0044OpenapiJobInfoRespStatusCode); !ok || sc.StatusCode != 404 || sc.Response.Errors[0].ErrorNumber.Or(0) != 2017 {
		t.Errorf("client decoded %T %+v", res, res)
	}
}

func TestJobArrayAnswers(t *testing.T) {
	r := newREST(t)
	// Four whole-node tasks fit; the fifth and sixth pend (%5 throttles
	// nothing here).
	id := r.submitRaw("root", minimalDesc(`"array":"0-5%5","cpus_per_task":8,"standard_output":"/home/alice/project/%A_%a.out"`))
	r.c.Node.WaitLaunches(t, 4)
	recs := r.jobRecord(strconv.Itoa(int(id)))
	type row struct {
		JobID, ArrayJobID any
		TaskID            any
		TaskString        any
		State             any
		Stdout            any
	}
	var got []row
	for _, j := range recs {
		got = append(got, row{path(j, "job_id"), path(j, "array_job_id", "number"), path(j, "array_task_id"), path(j, "array_task_string"), path(j, "job_state", 0), path(j, "stdout_expanded")})
	}
	unset := map[string]any{"set": false, "infinite": false, "number": float64(0)}
	task := func(n int) map[string]any {
		return map[string]any{"set": true, "infinite": false, "number": float64(n)}
	}
	f := float64(id)
	want := []row{
		{f, f, unset, "4-5%5", "PENDING", fmt.Sprintf("/home/alice/project/%d_4294967294.out", id)},
		{f + 1, f, task(0), "", "RUNNING", fmt.Sprintf("/home/alice/project/%d_0.out", id)},
		{f + 2, f, task(1), "", "RUNNING", fmt.Sprintf("/home/alice/project/%d_1.out", id)},
		{f + 3, f, task(2), "", "RUNNING", fmt.Sprintf("/home/alice/project/%d_2.out", id)},
		{f + 4, f, task(3), "", "RUNNING", fmt.Sprintf("/home/alice/project/%d_3.out", id)},
	}
	if len(got) != 5 {
		t.Fatalf("records %+v", got)
	}
	// The pending meta-record first, then the tasks, as slurmrestd lists
	// them (job_array_partly_running.json).
	if diff := cmp.Diff(want[0], got[0]); diff != "" {
		t.Errorf("meta-record (-want +got):\n%s", diff)
	}
	running := got[1:]
	slices.SortFunc(running, func(a, b row) int { return int(a.JobID.(float64) - b.JobID.(float64)) })
	if diff := cmp.Diff(want[1:], running); diff != "" {
		t.Errorf("tasks (-want +got):\n%s", diff)
	}
	// A pending task is answered with the meta-record; a started task by
	// its own record.
	if recs := r.jobRecord(fmt.Sprintf("%d_5", id)); len(recs) != 1 || path(recs[0], "job_id") != f {
		t.Errorf("GET %d_5: %v", id, recs)
	}
	if recs := r.jobRecord(fmt.Sprintf("%d_2", id)); len(recs) != 1 || path(recs[0], "job_id") != f+3 {
		t.Errorf("GET %d_2: %v", id, recs)
	}
}

func TestJobsList(t *testing.T) {
	r := newREST(t)
	a := r.submitRaw("root", minimalDesc(`"hold":true`))
	b := r.submitRaw("nobody", minimalDesc(`"hold":true`))
	res, err := r.root.SlurmV0044GetJobs(ctx, api.SlurmV0044GetJobsParams{})
	if err != nil {
		t.Fatal(err)
	}
	list := res.(*api.V0044OpenapiJobInfoResp)
	var ids []int32
	for _, j := range list.Jobs {
		ids = append(ids, j.JobID.Or(0))
	}
	if diff := cmp.Diff([]int32{int32(a), int32(b)}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if u := list.Jobs[1].UserName.Or(""); u != "nobody" {
		t.Errorf("second job's user %q", u)
	}
	last := list.LastUpdate.Number.Or(0)
	if last == 0 {
		t.Fatal("last_update is 0")
	}
	count := func(updateTime string) int {
		t.Helper()
		res, err := r.root.SlurmV0044GetJobs(ctx, api.SlurmV0044GetJobsParams{UpdateTime: api.NewOptString(updateTime)})
		if err != nil {
			t.Fatal(err)
		}
		l := res.(*api.V0044OpenapiJobInfoResp)
		if l.LastUpdate.Number.Or(0) != last {
			t.Errorf("last_update %d, want %d", l.LastUpdate.Number.Or(0), last)
		}
		return len(l.Jobs)
	}
	// Nothing changed after last_update: no jobs; otherwise all of them.
	if n := count(strconv.FormatInt(last+1, 10)); n != 0 {
		t.Errorf("update_time after the last change: %d jobs, want 0", n)
	}
	if n := count(strconv.FormatInt(last, 10)); n != 2 {
		t.Errorf("update_time at the last change: %d jobs, want 2", n)
	}
	if n := count("0"); n != 2 {
		t.Errorf("update_time 0: %d jobs, want 2", n)
	}
	if a := r.do(http.MethodGet, v44+"/jobs/?update_time=soon", "root", nil); a.Status != 422 {
		t.Errorf("update_time=soon: HTTP %d", a.Status)
	}
}

func TestJobUpdateAnswers(t *testing.T) {
	r := newREST(t)
	// Held, and not eligible for an hour: it stays pending throughout.
	begin := time.Now().Add(time.Hour).Unix()
	id := r.submitRaw("root", minimalDesc(fmt.Sprintf(`"partition":"debug","hold":true,"begin_time":{"set":true,"number":%d}`, begin)))
	target := fmt.Sprintf("%s/job/%d", v44, id)
	steps := []struct {
		name    string
		user    string
		reqFile string
		body    string
		ref     string // reference answer (status and problems)
		status  int
		want    *problems
		check   map[string]any // fields of the job afterwards
	}{
		{name: "hold by root: admin hold", reqFile: "job_update_hold.req.json", ref: "job_update_hold.json", status: 200,
			check: map[string]any{"state_reason": "JobHeldAdmin", "hold": true, "priority.number": float64(0)}},
		{name: "nobody may not release it", user: "nobody", reqFile: "job_update_release.req.json", status: 403,
			want: &problems{Errors: []string{"2002 Access/permission denied [slurm_update_job2()] Job update requested failed"}, Warnings: []string{}}},
		{name: "release", reqFile: "job_update_release.req.json", ref: "job_update_release.json", status: 200,
			check: map[string]any{"hold": false}},
		{name: "time limit object", reqFile: "job_update_time_limit.req.json", ref: "job_update_time_limit.json", status: 200,
			check: map[string]any{"time_limit": map[string]any{"set": true, "infinite": false, "number": float64(30)}}},
		{name: "time limit plain number", reqFile: "job_update_time_limit_plain_number.req.json", ref: "job_update_time_limit_plain_number.json", status: 200,
			check: map[string]any{"time_limit": map[string]any{"set": true, "infinite": false, "number": float64(45)}}},
		{name: "priority zero", reqFile: "job_update_priority_zero.req.json", ref: "job_update_priority_zero.json", status: 200,
			check: map[string]any{"state_reason": "JobHeldAdmin", "hold": true}},
		{name: "priority as a plain number releases", body: `{"priority": 7}`, status: 200, want: &problems{Errors: []string{}, Warnings: []string{}},
			check: map[string]any{"hold": false, "priority.number": float64(7)}},
		{name: "bad field type", reqFile: "err_job_update_bad_field_type.req.json", status: 500,
			want: &problems{Errors: []string{
				"9202 Unable to convert Data type [#/] ",
				"9000 Query empty or not RFC7320 compliant [_job_post_update] Rejecting request. Failure parsing job update request.",
			}, Warnings: []string{}}},
		{name: "nobody may not rename it", user: "nobody", body: `{"name":"x"}`, status: 403},
		{name: "unknown partition", body: `{"partition":"nosuch"}`, status: 500,
			want: &problems{Errors: []string{"2000 Invalid partition name specified [slurm_update_job2()] invalid partition specified: nosuch"}, Warnings: []string{}}},
	}
	for _, s := range steps {
		body := []byte(s.body)
		if s.reqFile != "" {
			body = reference(t, s.reqFile)
		}
		user := s.user
		if user == "" {
			user = "root"
		}
		a := r.do(http.MethodPost, target, user, body)
		if a.Status != s.status || a.ContentType != "application/json" {
			t.Fatalf("%s: HTTP %d %s\n%s", s.name, a.Status, a.ContentType, a.Body)
		}
		v := a.JSON(t)
		if _, has := v["results"]; has {
			t.Errorf("%s: results present (%v); slurmrestd's null cannot be decoded by the generated client, so Drover leaves it out", s.name, v["results"])
		}
		got := problemsOf(v)
		if s.name == "bad field type" {
			// The first description is the decoder's wording.
			got.Errors[0] = got.Errors[0][:strings.Index(got.Errors[0], "]")+2]
		}
		switch {
		case s.want != nil:
			if diff := cmp.Diff(*s.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", s.name, diff)
			}
		case s.ref != "":
			if diff := cmp.Diff(problemsOf(referenceJSON(t, s.ref)), got); diff != "" {
				t.Errorf("%s, compared with real slurmrestd (-real +ours):\n%s", s.name, diff)
			}
		}
		rec := r.jobRecord(strconv.Itoa(int(id)))[0]
		for f, want := range s.check {
			if diff := cmp.Diff(want, path(rec, anyPath(f)...)); diff != "" {
				t.Errorf("%s: %s (-want +got):\n%s", s.name, f, diff)
			}
		}
	}
	// Unknown job: 404 as in the reference.
	a := r.do(http.MethodPost, v44+"/job/999999", "root", reference(t, "err_job_update_unknown.req.json"))
	if a.Status != 404 {
		t.Errorf("unknown job: HTTP %d", a.Status)
	}
	if diff := cmp.Diff(problemsOf(referenceJSON(t, "err_job_update_unknown.json")), problemsOf(a.JSON(t))); diff != "" {
		t.Errorf("unknown job (-real +ours):\n%s", diff)
	}
	// The generated client decodes our success answer.
	res, err := r.root.SlurmV0044PostJob(ctx, api.NewOptV0044JobDescMsg(api.V0044JobDescMsg{Comment: api.NewOptString("c")}), api.SlurmV0044PostJobParams{JobID: strconv.Itoa(int(id))})
	if err != nil {
		t.Fatalf("client update: %v", err)
	}
	if ok, isOK := res.(*api.V0044OpenapiJobPostResponse); !isOK || len(ok.Errors) != 0 {
		t.Errorf("client update answer %T %+v", res, res)
	}
}

// anyPath splits "a.b" for path.
func anyPath(f string) []any {
	var out []any
	for _, p := range strings.Split(f, ".") {
		out = append(out, p)
	}
	return out
}

func TestJobDeleteAnswers(t *testing.T) {
	r := newREST(t)
	pending := r.submitRaw("root", minimalDesc(`"hold":true`))
	other := r.submitRaw("root", minimalDesc(`"hold":true`))
	arr := r.submitRaw("root", minimalDesc(`"hold":true,"array":"0-3"`))
	refStatus := func(file string) any { return path(referenceJSON(t, file), "status") }
	withIDs := func(status any, id job.ID) any {
		// The reference's job ids are its own; put ours in.
		s := status.([]any)
		if len(s) == 0 {
			return s
		}
		e := s[0].(map[string]any)
		e["step_id"] = strconv.Itoa(int(id))
		if path(e, "job_id", "set") == true {
			e["job_id"].(map[string]any)["number"] = float64(id)
		}
		return s
	}
	tests := []struct {
		name   string
		target string
		status int
		want   any
	}{
		{name: "pending job", target: strconv.Itoa(int(pending)), status: 200, want: refStatus("job_delete.json")},
		{name: "again: already done", target: strconv.Itoa(int(pending)), status: 200, want: withIDs(refStatus("job_delete_again.json"), pending)},
		{name: "unknown job", target: "999999", status: 200, want: refStatus("err_job_delete_unknown.json")},
		{name: "with SIGKILL", target: strconv.Itoa(int(other)) + "?signal=SIGKILL", status: 200, want: refStatus("job_delete_with_signal.json")},
		{name: "array", target: strconv.Itoa(int(arr)), status: 200, want: refStatus("job_delete_array.json")},
	}
	for _, tc := range tests {
		a := r.do(http.MethodDelete, v44+"/job/"+tc.target, "root", nil)
		if a.Status != tc.status {
			t.Fatalf("%s: HTTP %d %s", tc.name, a.Status, a.Body)
		}
		if diff := cmp.Diff(tc.want, a.JSON(t)["status"]); diff != "" {
			t.Errorf("%s: status, compared with real slurmrestd (-real +ours):\n%s", tc.name, diff)
		}
	}
	for _, id := range []job.ID{pending, other, arr} {
		if st := r.c.Job(id).State; st != job.Cancelled {
			t.Errorf("job %d: %v", id, st)
		}
	}
	if a := r.do(http.MethodDelete, v44+"/job/1?signal=NOSUCH", "root", nil); a.Status != 422 {
		t.Errorf("bad signal: HTTP %d", a.Status)
	}
	// Another user's job.
	mine := r.submitRaw("root", minimalDesc(`"hold":true`))
	a := r.do(http.MethodDelete, fmt.Sprintf("%s/job/%d", v44, mine), "nobody", nil)
	if code := path(a.JSON(t), "status", 0, "error", "code"); a.Status != 200 || code != float64(2002) {
		t.Errorf("nobody cancels root's job: HTTP %d code %v", a.Status, code)
	}
	// The generated client decodes both shapes.
	res, err := r.root.SlurmV0044DeleteJob(ctx, api.SlurmV0044DeleteJobParams{JobID: "999999"})
	if err != nil {
		t.Fatal(err)
	}
	if kr, ok := res.(*api.V0044OpenapiKillJobResp); !ok || kr.Status[0].Error.Value.Code.Or(0) != 2017 {
		t.Errorf("client decoded %T %+v", res, res)
	}
}

func TestNodeAnswers(t *testing.T) {
	r := newREST(t)
	res, err := r.root.SlurmV0044GetNodes(ctx, api.SlurmV0044GetNodesParams{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := res.(*api.V0044OpenapiNodesResp).Nodes
	var names []string
	for _, n := range nodes {
		names = append(names, n.Name.Or(""))
	}
	if diff := cmp.Diff(ctltest.NodeNames, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	n1 := nodes[0]
	if got := []string{n1.Tres.Or(""), n1.Gres.Or(""), string(n1.State[0]), strings.Join(n1.Partitions, ",")}; !slices.Equal(got, []string{"cpu=8,mem=16000M,billing=8,gres/gpu=4", "gpu:a100:4", "IDLE", "gpu,debug,closed"}) {
		t.Errorf("n1: %q", got)
	}
	// Every field we send is one real slurmrestd sends too.
	a := r.do(http.MethodGet, v44+"/node/n1", "root", nil)
	ref := keys(path(referenceJSON(t, "node_rc1.json"), "nodes", 0))
	for _, k := range keys(path(a.JSON(t), "nodes", 0)) {
		if !slices.Contains(ref, k) {
			t.Errorf("node field %q not in slurmrestd's answer", k)
		}
	}
	// Unknown node: 200 with an error entry whose number is 0.
	a = r.do(http.MethodGet, v44+"/node/nosuch", "root", nil)
	if a.Status != 200 {
		t.Errorf("unknown node: HTTP %d", a.Status)
	}
	if diff := cmp.Diff(problemsOf(referenceJSON(t, "err_node_unknown.json")), problemsOf(a.JSON(t))); diff != "" {
		t.Errorf("unknown node (-real +ours):\n%s", diff)
	}

	nodeState := func() []string {
		t.Helper()
		res, err := r.root.SlurmV0044GetNode(ctx, api.SlurmV0044GetNodeParams{NodeName: "n2"})
		if err != nil {
			t.Fatal(err)
		}
		n := res.(*api.V0044OpenapiNodesResp).Nodes[0]
		var out []string
		for _, s := range n.State {
			out = append(out, string(s))
		}
		return append(out, n.Reason.Or(""), n.ReasonSetByUser.Or(""))
	}
	steps := []struct {
		name   string
		user   string
		body   string
		status int
		code   any
		want   []string
	}{
		{name: "drain without reason", body: `{"state":["DRAIN"]}`, status: 500, code: float64(2028), want: []string{"IDLE", "", ""}},
		{name: "drain by nobody", user: "nobody", body: `{"state":["DRAIN"],"reason":"x"}`, status: 403, code: float64(2002), want: []string{"IDLE", "", ""}},
		{name: "drain", body: `{"state":["DRAIN"],"reason":"maintenance"}`, status: 200, want: []string{"IDLE", "DRAIN", "maintenance", "root"}},
		{name: "resume", body: `{"state":["RESUME"]}`, status: 200, want: []string{"IDLE", "", ""}},
		{name: "down", body: `{"state":["DOWN"],"reason":"bad dimm"}`, status: 200, want: []string{"DOWN", "bad dimm", "root"}},
		{name: "resume again", body: `{"state":["RESUME"]}`, status: 200, want: []string{"IDLE", "", ""}},
		{name: "state the API does not offer", body: `{"state":["NOSUCH"]}`, status: 422, want: []string{"IDLE", "", ""}},
	}
	for _, s := range steps {
		user := s.user
		if user == "" {
			user = "root"
		}
		a := r.do(http.MethodPost, v44+"/node/n2", user, []byte(s.body))
		if a.Status != s.status {
			t.Fatalf("%s: HTTP %d %s", s.name, a.Status, a.Body)
		}
		if s.code != nil {
			if got := path(a.JSON(t), "errors", 0, "error_number"); got != s.code {
				t.Errorf("%s: error %v, want %v", s.name, got, s.code)
			}
		}
		if diff := cmp.Diff(s.want, nodeState()); diff != "" {
			t.Errorf("%s: n2 (-want +got):\n%s", s.name, diff)
		}
	}
	if a := r.do(http.MethodPost, v44+"/node/nosuch", "root", []byte(`{"state":["DRAIN"],"reason":"x"}`)); a.Status != 500 || path(a.JSON(t), "errors", 0, "error_number") != float64(2018) {
		t.Errorf("update unknown node: HTTP %d %s", a.Status, a.Body)
	}
}

func TestPartitionAnswers(t *testing.T) {
	r := newREST(t)
	res, err := r.root.SlurmV0044GetPartitions(ctx, api.SlurmV0044GetPartitionsParams{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range res.(*api.V0044OpenapiPartitionResp).Partitions {
		names = append(names, p.Name.Or(""))
	}
	if diff := cmp.Diff([]string{"gpu", "debug", "short", "closed"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	a := r.do(http.MethodGet, v44+"/partition/debug", "root", nil)
	p := path(a.JSON(t), "partitions", 0)
	if got := path(p, "maximums", "time"); !cmp.Equal(got, map[string]any{"set": true, "infinite": false, "number": float64(30)}) {
		t.Errorf("debug maximums.time %v", got)
	}
	if got := path(p, "defaults", "time"); !cmp.Equal(got, map[string]any{"set": true, "infinite": false, "number": float64(10)}) {
		t.Errorf("debug defaults.time %v", got)
	}
	if got := path(p, "nodes", "configured"); got != "n[1-2]" {
		t.Errorf("debug nodes %v", got)
	}
	// gpu has no limit: infinite, as partition_debug.json shows it.
	a = r.do(http.MethodGet, v44+"/partition/gpu", "root", nil)
	ref := path(referenceJSON(t, "partition_debug.json"), "partitions", 0)
	for _, f := range [][]any{{"maximums", "time"}, {"maximums", "nodes"}, {"defaults", "time"}, {"partition", "state"}} {
		if diff := cmp.Diff(path(ref, f...), path(a.JSON(t), append([]any{"partitions", 0}, f...)...)); diff != "" {
			t.Errorf("gpu %v (-real +ours):\n%s", f, diff)
		}
	}
	a = r.do(http.MethodGet, v44+"/partition/nosuch", "root", nil)
	if a.Status != 422 {
		t.Errorf("unknown partition: HTTP %d", a.Status)
	}
	if diff := cmp.Diff(problemsOf(referenceJSON(t, "err_partition_unknown.json")), problemsOf(a.JSON(t))); diff != "" {
		t.Errorf("unknown partition (-real +ours):\n%s", diff)
	}
}

// Reservations as slurmrestd answers: create (the answer echoes the
// request), list, get, a second reservation on the same node refused
// (nodes busy), unknown names on get (200 with an error entry) and delete
// (500, 2053), and only operators may create.
func TestReservationAnswers(t *testing.T) {
	r := newREST(t)
	if a := r.do(http.MethodGet, v44+"/reservations/", "root", nil); a.Status != 200 || len(asList(path(a.JSON(t), "reservations"))) != 0 {
		t.Fatalf("no reservations: HTTP %d %s", a.Status, a.Body)
	}
	req := bytes.ReplaceAll(reference(t, "reservation_create.req.json"), []byte(`"rc1"`), []byte(`"n1"`))
	now := time.Now().Unix()
	req = bytes.Replace(req, []byte("1796050847"), []byte(strconv.FormatInt(now, 10)), 1)
	a := r.do(http.MethodPost, v44+"/reservation", "root", req)
	if a.Status != 200 {
		t.Fatalf("create: HTTP %d %s", a.Status, a.Body)
	}
	if got := path(a.JSON(t), "reservations", 0, "name"); got != "cap_resv" {
		t.Errorf("create echo: name %v", got)
	}
	a = r.do(http.MethodGet, v44+"/reservation/cap_resv", "root", nil)
	got := path(a.JSON(t), "reservations", 0)
	want := path(referenceJSON(t, "reservation_get.json"), "reservations", 0)
	for _, k := range []string{"name", "flags", "users", "node_count", "accounts"} {
		if !cmp.Equal(path(got, k), path(want, k)) {
			t.Errorf("%s: %v, real %v", k, path(got, k), path(want, k))
		}
	}
	if path(got, "node_list") != "n1" || path(got, "end_time", "number") != float64(now+3600) {
		t.Errorf("node_list %v end %v", path(got, "node_list"), path(got, "end_time"))
	}
	busy := bytes.ReplaceAll(reference(t, "err_reservation_create_nodes_busy.req.json"), []byte(`"rc1"`), []byte(`"n1"`))
	busy = bytes.Replace(busy, []byte("1796050847"), []byte(strconv.FormatInt(now, 10)), 1)
	a = r.do(http.MethodPost, v44+"/reservation", "root", busy)
	if a.Status != 500 {
		t.Errorf("busy nodes: HTTP %d", a.Status)
	}
	if diff := cmp.Diff(problemsOf(referenceJSON(t, "err_reservation_create_nodes_busy.json")), problemsOf(a.JSON(t))); diff != "" {
		t.Errorf("busy nodes (-real +ours):\n%s", diff)
	}
	a = r.do(http.MethodGet, v44+"/reservation/nosuch", "root", nil)
	if diff := cmp.Diff(problemsOf(referenceJSON(t, "err_reservation_get_unknown.json")), problemsOf(a.JSON(t))); diff != "" || a.Status != 200 {
		t.Errorf("unknown get HTTP %d (-real +ours):\n%s", a.Status, diff)
	}
	if a := r.do(http.MethodPost, v44+"/reservation", "nobody", req); a.Status != 403 {
		t.Errorf("create as nobody: HTTP %d", a.Status)
	}
	if a := r.do(http.MethodDelete, v44+"/reservation/cap_resv", "root", nil); a.Status != 200 {
		t.Errorf("delete: HTTP %d %s", a.Status, a.Body)
	}
	a = r.do(http.MethodDelete, v44+"/reservation/cap_resv", "root", nil)
	if diff := cmp.Diff(problemsOf(referenceJSON(t, "err_reservation_delete_unknown.json")), problemsOf(a.JSON(t))); diff != "" || a.Status != 500 {
		t.Errorf("unknown delete HTTP %d (-real +ours):\n%s", a.Status, diff)
	}
}

// GET /shares answers the fair-share tree (root and one association per
// user), valid against the spec.
func TestSharesAnswer(t *testing.T) {
	r := newREST(t)
	a := r.do(http.MethodGet, v44+"/shares", "root", nil)
	if a.Status != 200 {
		t.Fatalf("HTTP %d %s", a.Status, a.Body)
	}
	if got := path(a.JSON(t), "shares", "shares", 0, "name"); got != "root" {
		t.Errorf("first entry %v, want root", got)
	}
}
