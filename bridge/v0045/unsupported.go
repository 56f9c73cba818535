package v0045

import (
	"context"

	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0045"
)

// The operations v0.0.45 adds that Drover cannot do yet are refused with
// Slurm's "not supported" error and the reason, in slurmrestd's error
// shape, rather than left as ogen's 501.

func (s *Server) refusal(ctx context.Context, source, why string) (api.OptV0045OpenapiMeta, api.V0045OpenapiErrors, api.V0045OpenapiWarnings) {
	code := slurmerr.NotSupported
	return s.meta(ctx), api.V0045OpenapiErrors{{ErrorNumber: api.NewOptInt32(int32(code)), Error: api.NewOptString(code.Message()),
		Description: api.NewOptString(why), Source: api.NewOptString(source)}}, api.V0045OpenapiWarnings{}
}

const whyPartitions = "partitions come from slurm.conf; edit it there and restart the controller"

// SlurmV0045PostPartitions implements POST /partitions/: refused.
func (s *Server) SlurmV0045PostPartitions(ctx context.Context, _ api.OptV0045OpenapiPartitionsModReq) (api.SlurmV0045PostPartitionsRes, error) {
	s.b44.Controller().StatsRef().CountRPC("REQUEST_UPDATE_PARTITION")
	m, e, w := s.refusal(ctx, "_op_handler_partitions", whyPartitions)
	return &api.V0045OpenapiRespStatusCode{StatusCode: 500, Response: api.V0045OpenapiResp{Meta: m, Errors: e, Warnings: w}}, nil
}

// SlurmV0045DeletePartition implements DELETE /partition/{name}: refused.
func (s *Server) SlurmV0045DeletePartition(ctx context.Context, _ api.SlurmV0045DeletePartitionParams) (api.SlurmV0045DeletePartitionRes, error) {
	s.b44.Controller().StatsRef().CountRPC("REQUEST_DELETE_PARTITION")
	m, e, w := s.refusal(ctx, "_op_handler_partition", whyPartitions)
	return &api.V0045OpenapiRespStatusCode{StatusCode: 500, Response: api.V0045OpenapiResp{Meta: m, Errors: e, Warnings: w}}, nil
}

// SlurmdbV0045GetConf implements GET /slurmdb/conf. There is no
// slurmdbd: the controller keeps the accounting in its state, so the
// answer names the controller's host and port, the state file as the
// storage, and what Drover's accounting does (no WCKeys, QOS normal).
func (s *Server) SlurmdbV0045GetConf(ctx context.Context) (api.SlurmdbV0045GetConfRes, error) {
	ctl := s.b44.Controller()
	ctl.StatsRef().CountRPC("DBD_GET_CONFIG")
	c := api.V0045SlurmdbdConf{
		DbdHost:    api.NewOptString(ctl.ControlHost()),
		DbdPort:    api.NewOptInt32(int32(ctl.ControlPort())),
		StorageLoc: api.NewOptString(ctl.StatePath()),
		DefaultQOS: api.NewOptString("normal"),
		TrackWCKey: api.NewOptBool(false),
	}
	return &api.V0045OpenapiSlurmdbdConfResp{SlurmdbdConf: c, Meta: s.meta(ctx), Errors: api.V0045OpenapiErrors{}, Warnings: api.V0045OpenapiWarnings{}}, nil
}
