package droverv1

import (
	"net/http"
	"time"

	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/slurmerr"
	api44 "github.com/droverhq/drover/openapi/v0044"
)

// controllersHandler serves GET /drover/v1/controllers (droverapi's
// ControllersPath): every SlurmctldHost as this controller's pings
// found them.
func controllersHandler(ctl *controller.Controller) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_PING")
		list, replicated := ctl.Controllers(r.Context())
		out := droverapi.Controllers{Replicated: replicated, Controllers: []droverapi.Controller{}}
		now := time.Now()
		for _, c := range list {
			out.Controllers = append(out.Controllers, controllerReply(c, len(list), now))
		}
		replyJSON(w, http.StatusOK, out)
	}
}

// controllerReply is c, one of n SlurmctldHost lines, on the wire.
func controllerReply(c controller.ControllerStatus, n int, now time.Time) droverapi.Controller {
	out := droverapi.Controller{
		Name: c.Name, Addr: c.Addr, Mode: droverapi.ControllerMode(c.Index, n),
		Responding: c.Responding, LatencyMicros: c.Latency.Microseconds(),
		Leader: c.Leader, Self: c.Self, Error: c.Err,
	}
	if st := c.Replica; st != nil {
		out.Replica = &droverapi.Replica{
			State: st.State, Leader: st.Leader, Term: st.Term, LastIndex: st.LastIndex,
			CommitIndex: st.CommitIndex, AppliedIndex: st.AppliedIndex,
			LastContactSeconds: -1, LeaderTerms: st.LeaderTerms, LeaderChanges: st.LeaderChanges, Voters: st.Voters,
		}
		if !st.LastContact.IsZero() {
			out.Replica.LastContactSeconds = max(now.Sub(st.LastContact).Seconds(), 0)
		}
	}
	return out
}

// takeoverHandler serves POST /drover/v1/takeover?controller=X
// (droverapi's TakeoverPath), Drover's scontrol takeover. It answers
// once the controller asked leads.
func takeoverHandler(ctl *controller.Controller) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctl.StatsRef().CountRPCCtx(r.Context(), "REQUEST_TAKEOVER")
		caller, _ := authctx.From(r.Context())
		target, err := droverapi.ParseTakeoverTarget(r.URL.Query().Get("controller"))
		if err != nil {
			err = slurmerr.New(slurmerr.NotSupported, "%v", err)
		} else {
			err = ctl.TakeOver(r.Context(), caller.Identity, target)
		}
		if err != nil {
			ReplyError(w, err, "slurm_takeover")
			return
		}
		replyEnvelope(w, http.StatusOK, api44.V0044OpenapiResp{Errors: api44.V0044OpenapiErrors{}, Warnings: api44.V0044OpenapiWarnings{}})
	}
}
