package v0044

import (
	"context"
	"fmt"

	api "github.com/droverhq/drover/openapi/v0044"
)

// SlurmdbV0044GetConfig implements GET /slurmdb/v0.0.44/config: the whole
// accounting configuration at once, as slurmdbd dumps it: clusters, TRES,
// accounts, users, QOS, associations, WCKeys and instances.
func (s *Server) SlurmdbV0044GetConfig(ctx context.Context) (api.SlurmdbV0044GetConfigRes, error) {
	s.count("DBD_GET_CONFIG")
	out := &api.V0044OpenapiSlurmdbdConfigResp{
		Clusters: api.V0044ClusterRecList{s.cluster()}, Tres: tresList(s.ctl.TRESNames(), nil),
		Wckeys: api.V0044WckeyList{}, Instances: api.V0044InstanceList{},
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{},
	}
	accts, err := s.SlurmdbV0044GetAccounts(ctx, api.SlurmdbV0044GetAccountsParams{})
	if err != nil {
		return nil, err
	}
	users, err := s.SlurmdbV0044GetUsers(ctx, api.SlurmdbV0044GetUsersParams{})
	if err != nil {
		return nil, err
	}
	qos, err := s.SlurmdbV0044GetQos(ctx, api.SlurmdbV0044GetQosParams{})
	if err != nil {
		return nil, err
	}
	assocs, err := s.SlurmdbV0044GetAssociations(ctx, api.SlurmdbV0044GetAssociationsParams{})
	if err != nil {
		return nil, err
	}
	a, ok1 := accts.(*api.V0044OpenapiAccountsResp)
	u, ok2 := users.(*api.V0044OpenapiUsersResp)
	q, ok3 := qos.(*api.V0044OpenapiSlurmdbdQosResp)
	as, ok4 := assocs.(*api.V0044OpenapiAssocsResp)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return nil, fmt.Errorf("slurmdb config: unexpected answers %T %T %T %T", accts, users, qos, assocs)
	}
	out.Accounts, out.Users, out.Qos, out.Associations = a.Accounts, u.Users, q.Qos, as.Associations
	return out, nil
}

// noJobs is slurmdbd's answer when it finds no job: Drover keeps no job
// accounting records yet (the accounting database comes later), so
// slurmdb's job queries find none.
func (s *Server) noJobs(ctx context.Context) *api.V0044OpenapiSlurmdbdJobsResp {
	return &api.V0044OpenapiSlurmdbdJobsResp{Jobs: api.V0044JobList{}, Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{},
		Warnings: api.V0044OpenapiWarnings{{Description: api.NewOptString("slurmdb_jobs_get() found nothing"), Source: api.NewOptString("_dump_jobs")}}}
}

// SlurmdbV0044GetJobs implements GET /slurmdb/v0.0.44/jobs/ (see noJobs).
func (s *Server) SlurmdbV0044GetJobs(ctx context.Context, _ api.SlurmdbV0044GetJobsParams) (api.SlurmdbV0044GetJobsRes, error) {
	s.count("DBD_GET_JOBS_COND")
	return s.noJobs(ctx), nil
}

// SlurmdbV0044GetJob implements GET /slurmdb/v0.0.44/job/{id} (see noJobs).
func (s *Server) SlurmdbV0044GetJob(ctx context.Context, _ api.SlurmdbV0044GetJobParams) (api.SlurmdbV0044GetJobRes, error) {
	s.count("DBD_GET_JOBS_COND")
	return s.noJobs(ctx), nil
}
