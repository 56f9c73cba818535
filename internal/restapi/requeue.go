package restapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
	api44 "github.com/droverhq/drover/openapi/v0044"
)

// requeueHandler serves POST /drover/v1/job/{job_id}/requeue, Drover's
// addition for scontrol requeue (v0.0.44 has no such operation). It
// answers with slurmrestd's payload-less envelope.
func requeueHandler(ctl *controller.Controller) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctl.StatsRef().CountRPC("REQUEST_JOB_REQUEUE")
		caller, _ := authctx.From(r.Context())
		id := r.PathValue("job_id")
		hold := r.URL.Query().Get("hold") == "true"
		var err error
		n, perr := strconv.ParseUint(strings.TrimSpace(id), 10, 32)
		if perr != nil || n == 0 {
			err = slurmerr.New(slurmerr.InvalidJobID, "Invalid job id: %s", id)
		} else {
			err = ctl.Requeue(r.Context(), caller.Identity, controller.JobSelector{ID: job.ID(n)}, hold)
		}
		resp := api44.V0044OpenapiResp{Errors: api44.V0044OpenapiErrors{}, Warnings: api44.V0044OpenapiWarnings{}}
		status := http.StatusOK
		if err != nil {
			code := slurmerr.CodeOf(err)
			resp.Errors = append(resp.Errors, api44.V0044OpenapiError{
				ErrorNumber: api44.NewOptInt32(int32(code)),
				Error:       api44.NewOptString(code.Message()),
				Description: api44.NewOptString(err.Error()),
				Source:      api44.NewOptString("requeue"),
			})
			status = http.StatusInternalServerError
			if code == slurmerr.InvalidJobID {
				status = http.StatusNotFound
			}
		}
		data, merr := resp.MarshalJSON()
		if merr != nil {
			http.Error(w, "Unspecified error", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(data)
	}
}
