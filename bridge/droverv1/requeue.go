package droverv1

import (
	"net/http"

	bridge44 "github.com/droverhq/drover/bridge/v0044"
	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/slurmerr"
	api44 "github.com/droverhq/drover/openapi/v0044"
)

// requeueHandler serves POST /drover/v1/job/{job_id}/requeue, Drover's
// addition for scontrol requeue (v0.0.44 has no such operation). It
// answers with slurmrestd's payload-less envelope.
func requeueHandler(ctl *controller.Controller) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_JOB_REQUEUE")
		caller, _ := authctx.From(r.Context())
		hold := r.URL.Query().Get("hold") == "true"
		sel, err := bridge44.ParseJobSelector(r.PathValue("job_id"), ctl.MaxArraySize())
		if err == nil {
			err = ctl.Requeue(r.Context(), caller.Identity, sel, hold)
		}
		if err != nil {
			ReplyError(w, err, "requeue")
			return
		}
		replyEnvelope(w, http.StatusOK, api44.V0044OpenapiResp{Errors: api44.V0044OpenapiErrors{}, Warnings: api44.V0044OpenapiWarnings{}})
	}
}

// ReplyError answers with slurmrestd's error envelope: the Slurm error
// number and message of err, 404 for an unknown job, 500 otherwise.
func ReplyError(w http.ResponseWriter, err error, source string) {
	code := slurmerr.CodeOf(err)
	resp := api44.V0044OpenapiResp{Errors: api44.V0044OpenapiErrors{{
		ErrorNumber: api44.NewOptInt32(int32(code)),
		Error:       api44.NewOptString(code.Message()),
		Description: api44.NewOptString(err.Error()),
		Source:      api44.NewOptString(source),
	}}, Warnings: api44.V0044OpenapiWarnings{}}
	status := http.StatusInternalServerError
	if code == slurmerr.InvalidJobID {
		status = http.StatusNotFound
	}
	replyEnvelope(w, status, resp)
}

func replyEnvelope(w http.ResponseWriter, status int, resp api44.V0044OpenapiResp) {
	data, err := resp.MarshalJSON()
	if err != nil {
		http.Error(w, "Unspecified error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}
