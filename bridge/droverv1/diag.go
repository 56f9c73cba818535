package droverv1

import (
	"net/http"

	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/controller"
	api44 "github.com/droverhq/drover/openapi/v0044"
)

// diagResetHandler serves POST /drover/v1/diag/reset (droverapi's
// DiagResetPath), Drover's addition for sdiag -r.
func diagResetHandler(ctl *controller.Controller) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		// Recorded by the front once answered, so after the reset: the
		// reset is the first request of the new period, as in slurmctld.
		ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_STATS_INFO")
		caller, _ := authctx.From(r.Context())
		if err := ctl.ResetStats(caller.Identity); err != nil {
			ReplyError(w, err, "slurm_reset_statistics")
			return
		}
		replyEnvelope(w, http.StatusOK, api44.V0044OpenapiResp{Errors: api44.V0044OpenapiErrors{}, Warnings: api44.V0044OpenapiWarnings{}})
	}
}
