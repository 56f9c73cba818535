// Package droverv1 serves Drover's own API beside the slurmrestd
// versions, under /drover/v1: what the commands need and no slurmrestd
// version has an operation for (job steps and their usage for srun and
// sstat, requeue for scontrol, a period's usage for sreport, the reset
// of the statistics for sdiag -r). The HTTP front (internal/restapi)
// mounts it as it mounts the bridges, and authenticates its callers the
// same way; the messages are internal/step/proto's,
// internal/reportproto's and internal/droverapi's, and errors come back
// in slurmrestd's envelope.
package droverv1

import (
	"net/http"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/droverapi"
)

// Routes adds the /drover/v1 paths to mux.
func Routes(mux *http.ServeMux, ctl *controller.Controller) {
	mux.Handle("POST /drover/v1/job/{job_id}/requeue", requeueHandler(ctl))
	mux.Handle("POST "+droverapi.DiagResetPath, diagResetHandler(ctl))
	mux.Handle("GET "+droverapi.ControllersPath, controllersHandler(ctl))
	mux.Handle("POST "+droverapi.TakeoverPath, takeoverHandler(ctl))
	stepRoutes(mux, ctl)
	reportRoutes(mux, ctl)
}
