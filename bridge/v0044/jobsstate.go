package v0044

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/job"
	api "github.com/droverhq/drover/openapi/v0044"
)

// JobsStatePath is GET jobs/state/ in v0.0.44.
const JobsStatePath = "/slurm/v0.0.44/jobs/state/"

// SlurmV0044GetJobsState implements GET /jobs/state/: each job's id and
// state, a pending array's tasks one record each (as slurmctld expands
// them there, unlike GET /jobs/). The records are the spec's job_info
// with only job_id, array_job_id, array_task_id and job_state set; the
// v0.0.44 path also carries real slurmrestd's "state" (see
// AddStateMembers). job_id may list ids, comma-separated.
func (s *Server) SlurmV0044GetJobsState(ctx context.Context, params api.SlurmV0044GetJobsStateParams) (api.SlurmV0044GetJobsStateRes, error) {
	s.count(ctx, "REQUEST_JOB_STATE")
	var jobs []*job.Job
	if ids := strings.TrimSpace(params.JobID.Value); params.JobID.Set && ids != "" {
		for _, id := range strings.Split(ids, ",") {
			sel, err := parseSelector(id, s.ctl.MaxArraySize())
			var got []*job.Job
			if err == nil {
				got, err = s.ctl.Job(sel)
			}
			if err == nil {
				err = s.hiddenJob(ctx, got)
			}
			if err != nil {
				return s.jobQueryFailed(ctx, err, "_op_handler_job_states", id), nil
			}
			jobs = append(jobs, got...)
		}
	} else {
		jobs = s.visibleJobs(ctx, s.ctl.Jobs(controller.JobFilter{}))
	}
	out := api.V0044JobInfoMsg{}
	for _, j := range jobs {
		rec := func(task uint32) api.V0044JobInfo {
			w := api.V0044JobInfo{JobID: api.NewOptInt32(int32(j.ID)), JobState: jobStateItems(j)}
			if j.IsArray() {
				w.ArrayJobID = api.NewOptV0044Uint32NoValStruct(u32(uint32(j.ArrayJobID)))
				w.ArrayTaskID = api.NewOptV0044Uint32NoValStruct(u32(task))
			}
			return w
		}
		if j.IsArrayMeta() && len(j.PendingTasks) > 0 {
			for _, t := range j.PendingTasks {
				out = append(out, rec(t))
			}
			continue
		}
		out = append(out, rec(j.ArrayTaskID))
	}
	return &api.V0044OpenapiJobInfoResp{Jobs: out, LastBackfill: u64(0), LastUpdate: u64(unix(s.ctl.LastJobUpdate())),
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// AddStateMembers adds to each record of a jobs/state answer the members
// real slurmrestd writes there instead of the spec's: "state" (the
// job_state array), and "job_id" is kept as the spec's number, the array
// task in array_task_id. A client written against real slurmrestd reads
// "state"; one generated from the spec reads job_state. An answer that
// is not a job list is returned as it is.
func AddStateMembers(body []byte) []byte {
	var v map[string]json.RawMessage
	if json.Unmarshal(body, &v) != nil || v["jobs"] == nil {
		return body
	}
	var jobs []map[string]json.RawMessage
	if json.Unmarshal(v["jobs"], &jobs) != nil {
		return body
	}
	for _, j := range jobs {
		if st, ok := j["job_state"]; ok {
			j["state"] = st
		}
	}
	b, err := json.Marshal(jobs)
	if err != nil {
		return body
	}
	v["jobs"] = b
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

// StateRecorder buffers an answer so that AddStateMembers can rewrite it.
type StateRecorder struct {
	http.ResponseWriter
	Buf    bytes.Buffer
	Status int
}

// WriteHeader records the status.
func (r *StateRecorder) WriteHeader(code int) { r.Status = code }

// Write buffers the body.
func (r *StateRecorder) Write(b []byte) (int, error) { return r.Buf.Write(b) }
