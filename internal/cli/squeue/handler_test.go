package squeue

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/fieldsel"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Clocks of the reference captures. jobs.json's running jobs started at
// 1795964386 and squeue showed 1:15 of run time (squeue -l's date line says
// 15:01:01 UTC), and jobs.json's last_update is the same second. The
// partly-running captures show 0:04 for tasks started at 1795964892.
var (
	captureNow = time.Unix(1795964461, 0).UTC()
	partlyNow  = time.Unix(1795964892+4, 0).UTC()
)

// fakeController answers the job and node queries from reference captures,
// the way slurmrestd answered them.
type fakeController struct {
	v0044.UnimplementedHandler
	t     testing.TB
	jobs  v0044.V0044OpenapiJobInfoResp
	byID  map[string]string // GET /job/{id} answered from a capture file
	calls []string
	// selections are the field selections of the GET /jobs asked, nil
	// for whole records.
	selections []fieldsel.Set
}

func (f *fakeController) SlurmV0044GetJobs(ctx context.Context, p v0044.SlurmV0044GetJobsParams) (v0044.SlurmV0044GetJobsRes, error) {
	f.calls = append(f.calls, "GET /jobs"+flagSuffix(string(p.Flags.Or(""))))
	sel := fieldsel.From(ctx)
	f.selections = append(f.selections, sel)
	resp := f.jobs
	resp.Jobs = make([]v0044.V0044JobInfo, len(f.jobs.Jobs))
	for i := range f.jobs.Jobs {
		resp.Jobs[i] = clitest.ProjectJob(f.t, &f.jobs.Jobs[i], sel)
	}
	return &resp, nil
}

func (f *fakeController) SlurmV0044GetJob(_ context.Context, p v0044.SlurmV0044GetJobParams) (v0044.SlurmV0044GetJobRes, error) {
	f.calls = append(f.calls, "GET /job/"+p.JobID+flagSuffix(string(p.Flags.Or(""))))
	if name, ok := f.byID[p.JobID]; ok {
		var resp v0044.V0044OpenapiJobInfoResp
		clitest.LoadReference(f.t, name, &resp)
		return &resp, nil
	}
	resp := f.jobs
	resp.Jobs = nil
	for _, j := range f.jobs.Jobs {
		id := strconv.Itoa(int(j.JobID.Or(0)))
		arr := ""
		if a, ok := j.ArrayJobID.Get(); ok && a.Number.Or(0) != 0 {
			arr = strconv.Itoa(int(a.Number.Or(0)))
		}
		if id == p.JobID || arr == p.JobID {
			resp.Jobs = append(resp.Jobs, j)
		}
	}
	if len(resp.Jobs) == 0 {
		// As slurmrestd: HTTP 404 with error 2017 (err_job_unknown.json).
		var unknown v0044.V0044OpenapiJobInfoResp
		clitest.LoadReference(f.t, "err_job_unknown.json", &unknown)
		return &v0044.V0044OpenapiJobInfoRespStatusCode{StatusCode: 404, Response: unknown}, nil
	}
	return &resp, nil
}

func (f *fakeController) SlurmV0044GetNodes(context.Context, v0044.SlurmV0044GetNodesParams) (v0044.SlurmV0044GetNodesRes, error) {
	f.calls = append(f.calls, "GET /nodes")
	var resp v0044.V0044OpenapiNodesResp
	clitest.LoadReference(f.t, "nodes.json", &resp)
	return &resp, nil
}

func flagSuffix(f string) string {
	if f == "" {
		return ""
	}
	return "?flags=" + f
}

// jobsController serves rest/v0.0.44/jobs.json: the job mix of the
// squeue_* captures other than the partly-running ones.
func jobsController(t testing.TB) *fakeController {
	f := &fakeController{t: t}
	clitest.LoadReference(t, "jobs.json", &f.jobs)
	return f
}

// partlyController serves the state of the *_partly_running captures: 128
// and 129 cancelled (and gone from the default listing), tasks 131_0 and
// 131_1 running as jobs 148 and 149, the other tasks pending. No GET /jobs
// capture exists for that moment, so the list is assembled from
// job_array_partly_running.json (GET /job/131) and the unchanged held job
// 130 of jobs.json, in slurmctld's creation order: 130, 131, 148, 149.
func partlyController(t testing.TB) *fakeController {
	f := &fakeController{t: t, byID: map[string]string{"131": "job_array_partly_running.json"}}
	var all, array v0044.V0044OpenapiJobInfoResp
	clitest.LoadReference(t, "jobs.json", &all)
	clitest.LoadReference(t, "job_array_partly_running.json", &array)
	f.jobs = array
	f.jobs.Jobs = nil
	for _, j := range all.Jobs {
		if j.JobID.Or(0) == 130 {
			f.jobs.Jobs = append(f.jobs.Jobs, j)
		}
	}
	byID := map[int32]v0044.V0044JobInfo{}
	for _, j := range array.Jobs {
		byID[j.JobID.Or(0)] = j
	}
	for _, id := range []int32{131, 148, 149} {
		f.jobs.Jobs = append(f.jobs.Jobs, byID[id])
	}
	return f
}

// shellWords splits a reference .cmd line the way the shell did (words,
// single and double quotes).
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := strings.IndexByte(line[i+1:], '"')
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
