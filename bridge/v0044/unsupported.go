package v0044

import (
	"context"

	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

// The operations below change what Drover takes from slurm.conf (nodes,
// TRES, the cluster) or records it keeps no database for yet (job
// accounting, WCKeys). They are refused with Slurm's "not supported"
// error and the reason, rather than left as ogen's 501, so that a
// client sees why in slurmrestd's error shape.

func (s *Server) notSupported(ctx context.Context, source, why string) api.V0044OpenapiResp {
	return api.V0044OpenapiResp{Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{apiError(slurmerr.New(slurmerr.NotSupported, "%s", why), source)},
		Warnings: api.V0044OpenapiWarnings{}}
}

func (s *Server) refuse(ctx context.Context, source, why string) *api.V0044OpenapiRespStatusCode {
	return &api.V0044OpenapiRespStatusCode{StatusCode: 500, Response: s.notSupported(ctx, source, why)}
}

const (
	whyConf  = "Drover reads this from slurm.conf; edit it there and restart the controller"
	whyDB    = "Drover keeps no job accounting database yet"
	whyWckey = "Drover keeps no WCKeys (TrackWCKey is off)"
)

// SlurmV0044GetReconfigure implements GET /reconfigure/: slurm.conf is
// read again and the controller restarts in place on it; the answer
// comes once the new configuration runs, or says why it could not.
func (s *Server) SlurmV0044GetReconfigure(ctx context.Context) (api.SlurmV0044GetReconfigureRes, error) {
	s.count(ctx, "REQUEST_RECONFIGURE")
	err := s.ctl.Reconfigure(ctx, caller(ctx))
	r := s.plainResp(ctx, err, "slurm_reconfigure()")
	if err != nil {
		return &api.V0044OpenapiRespStatusCode{StatusCode: httpStatus(err), Response: r}, nil
	}
	return &r, nil
}

// SlurmV0044PostNewNode implements POST /new/node/: node_conf is a
// NodeName line with State=FUTURE or CLOUD, made a dynamic node.
func (s *Server) SlurmV0044PostNewNode(ctx context.Context, req api.OptV0044OpenapiCreateNodeReq) (api.SlurmV0044PostNewNodeRes, error) {
	s.count(ctx, "REQUEST_CREATE_NODE")
	_, err := s.ctl.CreateNodes(ctx, caller(ctx), req.Value.NodeConf)
	r := s.plainResp(ctx, err, "_op_handler_create_node")
	if err != nil {
		return &api.V0044OpenapiRespStatusCode{StatusCode: httpStatus(err), Response: r}, nil
	}
	return &r, nil
}

// SlurmV0044DeleteNode implements DELETE /node/{node_name}: dynamic
// nodes only, as slurmctld deletes them.
func (s *Server) SlurmV0044DeleteNode(ctx context.Context, params api.SlurmV0044DeleteNodeParams) (api.SlurmV0044DeleteNodeRes, error) {
	s.count(ctx, "REQUEST_DELETE_NODE")
	err := s.ctl.DeleteNodes(ctx, caller(ctx), params.NodeName)
	r := s.plainResp(ctx, err, "_op_handler_delete_node")
	if err != nil {
		return &api.V0044OpenapiRespStatusCode{StatusCode: httpStatus(err), Response: r}, nil
	}
	return &r, nil
}

// SlurmdbV0044DeleteCluster implements DELETE /slurmdb/cluster/{name}:
// refused.
func (s *Server) SlurmdbV0044DeleteCluster(ctx context.Context, _ api.SlurmdbV0044DeleteClusterParams) (api.SlurmdbV0044DeleteClusterRes, error) {
	s.count(ctx, "DBD_REMOVE_CLUSTERS")
	r := s.notSupported(ctx, "_op_handler_cluster", "clusters: "+whyConf)
	return &api.V0044OpenapiClustersRemovedRespStatusCode{StatusCode: 500, Response: api.V0044OpenapiClustersRemovedResp{
		DeletedClusters: api.V0044StringList{}, Meta: r.Meta, Errors: r.Errors, Warnings: r.Warnings}}, nil
}

// SlurmdbV0044PostWckeys implements POST /slurmdb/wckeys/: refused.
func (s *Server) SlurmdbV0044PostWckeys(ctx context.Context, _ api.OptV0044OpenapiWckeyResp, _ api.SlurmdbV0044PostWckeysParams) (api.SlurmdbV0044PostWckeysRes, error) {
	s.count(ctx, "DBD_ADD_WCKEYS")
	return s.refuse(ctx, "_op_handler_wckeys", whyWckey), nil
}

// SlurmdbV0044DeleteWckey implements DELETE /slurmdb/wckey/{id}: refused.
func (s *Server) SlurmdbV0044DeleteWckey(ctx context.Context, _ api.SlurmdbV0044DeleteWckeyParams) (api.SlurmdbV0044DeleteWckeyRes, error) {
	s.count(ctx, "DBD_REMOVE_WCKEYS")
	r := s.notSupported(ctx, "_op_handler_wckey", whyWckey)
	return &api.V0044OpenapiWckeyRemovedRespStatusCode{StatusCode: 500, Response: api.V0044OpenapiWckeyRemovedResp{
		DeletedWckeys: api.V0044StringList{}, Meta: r.Meta, Errors: r.Errors, Warnings: r.Warnings}}, nil
}

// SlurmdbV0044PostJob implements POST /slurmdb/job/{id}: refused.
func (s *Server) SlurmdbV0044PostJob(ctx context.Context, _ api.OptV0044JobModify, _ api.SlurmdbV0044PostJobParams) (api.SlurmdbV0044PostJobRes, error) {
	s.count(ctx, "DBD_MODIFY_JOB")
	r := s.notSupported(ctx, "_op_handler_job", whyDB)
	return &api.V0044OpenapiJobModifyRespStatusCode{StatusCode: 500, Response: api.V0044OpenapiJobModifyResp{
		Results: api.V0044StringList{}, Meta: r.Meta, Errors: r.Errors, Warnings: r.Warnings}}, nil
}

// SlurmdbV0044PostJobs implements POST /slurmdb/jobs/: refused.
func (s *Server) SlurmdbV0044PostJobs(ctx context.Context, _ api.OptV0044OpenapiJobModifyReq) (api.SlurmdbV0044PostJobsRes, error) {
	s.count(ctx, "DBD_MODIFY_JOB")
	r := s.notSupported(ctx, "_op_handler_jobs", whyDB)
	return &api.V0044OpenapiJobModifyRespStatusCode{StatusCode: 500, Response: api.V0044OpenapiJobModifyResp{
		Results: api.V0044StringList{}, Meta: r.Meta, Errors: r.Errors, Warnings: r.Warnings}}, nil
}
