package v0045

import (
	"context"

	"github.com/droverhq/drover/bridge/adapt"
	v44 "github.com/droverhq/drover/bridge/v0044"
	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0045"
)

// Server is v0.0.45: the generated Adapter for what it shares with
// v0.0.44, and the operations v0.0.45 adds that the domain supports.
type Server struct {
	*Adapter
	b44 *v44.Server
}

// NewServer serves v0.0.45 through b44.
func NewServer(b44 *v44.Server) *Server {
	return &Server{Adapter: &Adapter{Next: b44}, b44: b44}
}

func (s *Server) meta(ctx context.Context) api.OptV0045OpenapiMeta {
	var m api.OptV0045OpenapiMeta
	m44 := s.b44.Meta(ctx)
	if err := adapt.Convert(&m44, &m); err != nil {
		return api.OptV0045OpenapiMeta{}
	}
	if m.Set && m.Value.Plugin.Set {
		m.Value.Plugin.Value.DataParser = api.NewOptString("data_parser/v0.0.45")
	}
	return m
}

// requeue requeues one job (scontrol requeue), as an entry of the answer.
func (s *Server) requeue(ctx context.Context, id string, hold bool) api.V0045JobArrayResponseMsgEntry {
	caller, _ := authctx.From(ctx)
	e := api.V0045JobArrayResponseMsgEntry{StepID: api.NewOptString(id)}
	sel, err := s.b44.ParseSelector(id)
	if err == nil {
		e.JobID = api.NewOptInt32(int32(sel.ID))
		err = s.b44.Controller().Requeue(ctx, caller.Identity, sel, hold)
	}
	code := slurmerr.CodeOf(err)
	if err == nil {
		code = slurmerr.NoError
	}
	e.ErrorCode = api.NewOptInt32(int32(code))
	e.Error = api.NewOptString(code.Message())
	if err != nil {
		e.Why = api.NewOptString(err.Error())
	} else {
		e.Why = api.NewOptString("")
	}
	return e
}

// SlurmV0045GetJobRequeue implements GET /job/{job_id}/requeue: requeue
// the job, held with Hold. Incomplete and SpecialExit have no meaning
// here yet (Drover has no requeue-on-exit-code state) and are accepted.
func (s *Server) SlurmV0045GetJobRequeue(ctx context.Context, p api.SlurmV0045GetJobRequeueParams) (api.SlurmV0045GetJobRequeueRes, error) {
	s.b44.Controller().StatsRef().CountRPCCtx(ctx, "REQUEST_JOB_REQUEUE")
	e := s.requeue(ctx, p.JobID, p.Hold.Set)
	resp := api.V0045OpenapiJobRequeueResp{Status: api.V0045JobArrayResponseArray{e},
		Meta: s.meta(ctx), Errors: api.V0045OpenapiErrors{}, Warnings: api.V0045OpenapiWarnings{}}
	if code := e.ErrorCode.Value; code != 0 {
		resp.Errors = api.V0045OpenapiErrors{{ErrorNumber: api.NewOptInt32(code), Error: e.Error, Description: e.Why, Source: api.NewOptString("_op_handler_job_requeue")}}
		status := 500
		if slurmerr.Code(code) == slurmerr.InvalidJobID {
			status = 404
		}
		return &api.V0045OpenapiJobRequeueRespStatusCode{StatusCode: status, Response: resp}, nil
	}
	return &resp, nil
}

// SlurmV0045PostJobsRequeue implements POST /jobs/requeue: each job of
// jobs, every result in status.
func (s *Server) SlurmV0045PostJobsRequeue(ctx context.Context, req api.OptV0045OpenapiJobsRequeueQuery) (api.SlurmV0045PostJobsRequeueRes, error) {
	s.b44.Controller().StatsRef().CountRPCCtx(ctx, "REQUEST_JOB_REQUEUE")
	q := req.Value
	hold := false
	for _, f := range q.Flags {
		if f == api.V0045OpenapiJobsRequeueQueryFlagsItemHold {
			hold = true
		}
	}
	resp := api.V0045OpenapiJobsRequeueResp{Status: api.V0045JobArrayResponseMsgPtrList{},
		Meta: s.meta(ctx), Errors: api.V0045OpenapiErrors{}, Warnings: api.V0045OpenapiWarnings{}}
	for _, id := range q.Jobs {
		e := s.requeue(ctx, id, hold)
		resp.Status = append(resp.Status, api.V0045JobArrayResponseArray{e})
		if e.ErrorCode.Value != 0 {
			resp.Errors = append(resp.Errors, api.V0045OpenapiError{ErrorNumber: e.ErrorCode, Error: e.Error,
				Description: api.NewOptString(id + ": " + e.Why.Value), Source: api.NewOptString("_op_handler_jobs_requeue")})
		}
	}
	if len(q.Jobs) == 0 {
		resp.Warnings = append(resp.Warnings, api.V0045OpenapiWarning{Description: api.NewOptString("no jobs to requeue"), Source: api.NewOptString("_op_handler_jobs_requeue")})
	}
	return &resp, nil
}
