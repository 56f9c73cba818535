package v0044

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

// SlurmdbV0044GetConfig implements GET /slurmdb/v0.0.44/config: the whole
// accounting configuration at once, as slurmdbd dumps it: clusters, TRES,
// accounts, users, QOS, associations, WCKeys and instances.
func (s *Server) SlurmdbV0044GetConfig(ctx context.Context) (api.SlurmdbV0044GetConfigRes, error) {
	s.count(ctx, "DBD_GET_CONFIG")
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

// SlurmdbV0044PostConfig implements POST /slurmdb/v0.0.44/config: a whole
// accounting configuration loaded at once, as sacctmgr load does through
// slurmdbd. QOS, accounts, users and associations go to the accounting
// model in one change, whole or not at all. The clusters and TRES must be
// the ones this cluster has (Drover serves one cluster, and its TRES come
// from AccountingStorageTRES); WCKeys and instances are refused, as
// Drover keeps none.
func (s *Server) SlurmdbV0044PostConfig(ctx context.Context, req api.OptV0044OpenapiSlurmdbdConfigResp) (api.SlurmdbV0044PostConfigRes, error) {
	s.count(ctx, "DBD_ADD_CONFIG")
	const source = "_op_handler_config"
	body, _ := req.Get()
	if err := s.knownClusters(body.Clusters); err != nil {
		return s.dbFail(ctx, err, source), nil
	}
	if err := s.knownTRES(body.Tres); err != nil {
		return s.dbFail(ctx, err, source), nil
	}
	if len(body.Wckeys) > 0 {
		return s.dbFail(ctx, slurmerr.New(slurmerr.NotSupported, "%s", whyWckey), source), nil
	}
	if len(body.Instances) > 0 {
		return s.dbFail(ctx, slurmerr.New(slurmerr.NotSupported, "Drover keeps no cloud instances"), source), nil
	}
	m := s.ctl.Accounting()
	var ch assoc.Change
	var warnings []string
	q, err := qosItems(m, body.Qos)
	if err != nil {
		return s.dbFail(ctx, err, source), nil
	}
	a, w1, err := accountItems(body.Accounts)
	if err != nil {
		return s.dbFail(ctx, err, source), nil
	}
	u, w2, err := userItems(m, body.Users)
	if err != nil {
		return s.dbFail(ctx, err, source), nil
	}
	as, err := assocItems(m, body.Associations)
	if err != nil {
		return s.dbFail(ctx, err, source), nil
	}
	ch = append(append(append(append(ch, q...), a...), u...), as...)
	warnings = append(append(warnings, w1...), w2...)
	if len(ch) == 0 {
		return &api.V0044OpenapiResp{Meta: s.dbMeta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: warningsOf(warnings, source)}, nil
	}
	return s.applyChange(ctx, ch, warnings, source), nil
}

// SlurmdbV0044PostTres implements POST /slurmdb/v0.0.44/tres/: TRES come
// from slurm.conf's AccountingStorageTRES, so the ones the cluster tracks
// are accepted as they are and any other is refused.
func (s *Server) SlurmdbV0044PostTres(ctx context.Context, req api.OptV0044OpenapiTresResp) (api.SlurmdbV0044PostTresRes, error) {
	s.count(ctx, "DBD_ADD_TRES")
	body, _ := req.Get()
	if err := s.knownTRES(body.TRES); err != nil {
		return s.refuseErr(ctx, "_op_handler_tres", err), nil
	}
	r := s.plainResp(ctx, nil, "_op_handler_tres")
	return &r, nil
}

// SlurmdbV0044PostClusters implements POST /slurmdb/v0.0.44/clusters/:
// Drover serves one cluster, so that one is accepted as it is and any
// other is refused.
func (s *Server) SlurmdbV0044PostClusters(ctx context.Context, req api.OptV0044OpenapiClustersResp, _ api.SlurmdbV0044PostClustersParams) (api.SlurmdbV0044PostClustersRes, error) {
	s.count(ctx, "DBD_ADD_CLUSTERS")
	body, _ := req.Get()
	if err := s.knownClusters(body.Clusters); err != nil {
		return s.refuseErr(ctx, "_op_handler_clusters", err), nil
	}
	r := s.plainResp(ctx, nil, "_op_handler_clusters")
	return &r, nil
}

// knownClusters refuses any cluster but this one.
func (s *Server) knownClusters(list api.V0044ClusterRecList) error {
	for _, c := range list {
		if name := c.Name.Or(""); name != s.ctl.ClusterName() {
			return slurmerr.New(slurmerr.NotSupported, "cluster %q: Drover serves one cluster, %s", name, s.ctl.ClusterName())
		}
	}
	return nil
}

// knownTRES refuses any TRES the cluster does not track.
func (s *Server) knownTRES(list api.V0044TresList) error {
	have := map[string]bool{"dynamic_offset": true} // slurmdbd lists it among them
	for _, n := range s.ctl.TRESNames() {
		have[n] = true
	}
	for _, t := range list {
		name := t.Type
		if sub := t.Name.Or(""); sub != "" {
			name += "/" + sub
		}
		if !have[name] {
			return slurmerr.New(slurmerr.NotSupported, "TRES %s: %s", name, "TRES come from AccountingStorageTRES in slurm.conf")
		}
	}
	return nil
}

// refuseErr is a refusal with its own error, status 500.
func (s *Server) refuseErr(ctx context.Context, source string, err error) *api.V0044OpenapiRespStatusCode {
	return &api.V0044OpenapiRespStatusCode{StatusCode: 500, Response: s.plainResp(ctx, err, source)}
}
