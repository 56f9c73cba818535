package v0045

import (
	"context"

	api "github.com/droverhq/drover/openapi/v0045"
)

// SlurmdbV0045GetConf implements GET /slurmdb/conf. There is no
// slurmdbd: the controller keeps the accounting in its state, so the
// answer names the controller's host and port, the state file as the
// storage, and what Drover's accounting does (no WCKeys, QOS normal).
func (s *Server) SlurmdbV0045GetConf(ctx context.Context) (api.SlurmdbV0045GetConfRes, error) {
	ctl := s.b44.Controller()
	ctl.StatsRef().CountRPCCtx(ctx, "DBD_GET_CONFIG")
	c := api.V0045SlurmdbdConf{
		DbdHost:    api.NewOptString(ctl.ControlHost()),
		DbdPort:    api.NewOptInt32(int32(ctl.ControlPort())),
		StorageLoc: api.NewOptString(ctl.StatePath()),
		DefaultQOS: api.NewOptString("normal"),
		TrackWCKey: api.NewOptBool(false),
	}
	return &api.V0045OpenapiSlurmdbdConfResp{SlurmdbdConf: c, Meta: s.meta(ctx), Errors: api.V0045OpenapiErrors{}, Warnings: api.V0045OpenapiWarnings{}}, nil
}
