package v0044

import (
	"context"
	"strings"

	"github.com/droverhq/drover/internal/hostlist"
	api "github.com/droverhq/drover/openapi/v0044"
)

// The slurmdbd answers about the cluster itself, from the controller
// until accounting has a database of its own: one cluster, its TRES,
// no WCKeys and no instances.

// rpcVersion is the protocol version slurmdbd reports for a cluster
// (SLURM_PROTOCOL_VERSION of 25.11).
const rpcVersion = 11264

// dynamicOffset is the id slurmdbd gives the placeholder TRES
// "dynamic_offset"; the configured TRES beyond the eight base ones are
// numbered after it.
const dynamicOffset = 1000

// tresList is the cluster's TRES as slurmdbd numbers them: the eight base
// ones from 1, the placeholder dynamic_offset at 1000 (GET /tres/ lists
// it, a cluster's TRES do not), the others from 1001. count gives each
// one's count (nil: 0, as GET /tres/ shows them).
func tresList(names []string, count func(name string) int64) api.V0044TresList {
	out := api.V0044TresList{}
	add := func(name string, id int32) {
		typ, sub, _ := strings.Cut(name, "/")
		var n int64
		if count != nil {
			n = count(name)
		}
		out = append(out, api.V0044Tres{Type: typ, Name: api.NewOptString(sub), ID: api.NewOptInt32(id), Count: api.NewOptInt64(n)})
	}
	next := int32(dynamicOffset + 1)
	for i, name := range names {
		if i < 8 {
			add(name, int32(i+1))
			if i == 7 && count == nil {
				add("dynamic_offset", dynamicOffset)
			}
			continue
		}
		add(name, next)
		next++
	}
	return out
}

// SlurmdbV0044GetPing implements GET /slurmdb/v0.0.44/ping/: the
// accounting store is the controller's own.
func (s *Server) SlurmdbV0044GetPing(ctx context.Context) (api.SlurmdbV0044GetPingRes, error) {
	s.count(ctx, "DBD_PING")
	return &api.V0044OpenapiSlurmdbdPingResp{
		Pings: api.V0044SlurmdbdPingArray{{Hostname: s.ctl.ControlHost(), Responding: true, Primary: true}},
		Meta:  s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{},
	}, nil
}

// SlurmdbV0044GetTres implements GET /slurmdb/v0.0.44/tres/.
func (s *Server) SlurmdbV0044GetTres(ctx context.Context) (api.SlurmdbV0044GetTresRes, error) {
	s.count(ctx, "DBD_GET_TRES")
	return &api.V0044OpenapiTresResp{
		TRES: tresList(s.ctl.TRESNames(), nil),
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{},
	}, nil
}

// cluster is the one cluster, with its TRES counted over its nodes.
func (s *Server) cluster() api.V0044ClusterRec {
	var cpus, mem, nodes, gpus int64
	var names []string
	for _, ni := range s.ctl.Nodes() {
		n := ni.Node
		cpus += int64(n.CPUs)
		mem += int64(n.RealMemory)
		gpus += int64(len(n.GPUs))
		nodes++
		names = append(names, n.Name)
	}
	count := func(name string) int64 {
		switch name {
		case "cpu", "billing":
			return cpus
		case "mem":
			return mem
		case "node":
			return nodes
		case "gres/gpu":
			return gpus
		}
		return 0
	}
	return api.V0044ClusterRec{
		Name:       api.NewOptString(s.ctl.ClusterName()),
		Controller: api.NewOptV0044ClusterRecController(api.V0044ClusterRecController{Host: api.NewOptString(s.ctl.ControlHost()), Port: api.NewOptInt32(int32(s.ctl.ControlPort()))}),
		Flags:      []api.V0044ClusterRecFlagsItem{},
		Nodes:      api.NewOptString(hostlist.Compress(names)),
		Associations: api.NewOptV0044ClusterRecAssociations(api.V0044ClusterRecAssociations{Root: api.NewOptV0044AssocShort(api.V0044AssocShort{
			Account: api.NewOptString("root"), Cluster: api.NewOptString(s.ctl.ClusterName()), Partition: api.NewOptString(""), ID: api.NewOptInt32(1),
		})}),
		RPCVersion:   api.NewOptInt32(rpcVersion),
		SelectPlugin: api.NewOptString(""),
		Tres:         tresList(s.ctl.TRESNames(), count),
	}
}

// SlurmdbV0044GetClusters implements GET /slurmdb/v0.0.44/clusters/.
func (s *Server) SlurmdbV0044GetClusters(ctx context.Context, _ api.SlurmdbV0044GetClustersParams) (api.SlurmdbV0044GetClustersRes, error) {
	s.count(ctx, "DBD_GET_CLUSTERS")
	return &api.V0044OpenapiClustersResp{Clusters: api.V0044ClusterRecList{s.cluster()},
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmdbV0044GetCluster implements GET /slurmdb/v0.0.44/cluster/{name}:
// the cluster when the name is its own, none otherwise.
func (s *Server) SlurmdbV0044GetCluster(ctx context.Context, p api.SlurmdbV0044GetClusterParams) (api.SlurmdbV0044GetClusterRes, error) {
	s.count(ctx, "DBD_GET_CLUSTERS")
	list := api.V0044ClusterRecList{}
	if p.ClusterName == s.ctl.ClusterName() {
		list = append(list, s.cluster())
	}
	return &api.V0044OpenapiClustersResp{Clusters: list,
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmdbV0044GetWckeys implements GET /slurmdb/v0.0.44/wckeys/: Drover
// keeps no WCKeys (TrackWCKey is off), so the list is empty.
func (s *Server) SlurmdbV0044GetWckeys(ctx context.Context, _ api.SlurmdbV0044GetWckeysParams) (api.SlurmdbV0044GetWckeysRes, error) {
	s.count(ctx, "DBD_GET_WCKEYS")
	return &api.V0044OpenapiWckeyResp{Wckeys: api.V0044WckeyList{},
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmdbV0044GetWckey implements GET /slurmdb/v0.0.44/wckey/{id}: none.
func (s *Server) SlurmdbV0044GetWckey(ctx context.Context, _ api.SlurmdbV0044GetWckeyParams) (api.SlurmdbV0044GetWckeyRes, error) {
	s.count(ctx, "DBD_GET_WCKEYS")
	return &api.V0044OpenapiWckeyResp{Wckeys: api.V0044WckeyList{},
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmdbV0044GetInstances implements GET /slurmdb/v0.0.44/instances/:
// Drover has no cloud instances.
func (s *Server) SlurmdbV0044GetInstances(ctx context.Context, _ api.SlurmdbV0044GetInstancesParams) (api.SlurmdbV0044GetInstancesRes, error) {
	s.count(ctx, "DBD_GET_INSTANCES")
	return &api.V0044OpenapiInstancesResp{Instances: api.V0044InstanceList{},
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmdbV0044GetInstance implements GET /slurmdb/v0.0.44/instance/: none.
func (s *Server) SlurmdbV0044GetInstance(ctx context.Context, _ api.SlurmdbV0044GetInstanceParams) (api.SlurmdbV0044GetInstanceRes, error) {
	s.count(ctx, "DBD_GET_INSTANCES")
	return &api.V0044OpenapiInstancesResp{Instances: api.V0044InstanceList{},
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmdbV0044GetDiag implements GET /slurmdb/v0.0.44/diag/: the
// accounting requests counted since the controller started (slurmdbd's
// DBD_* kinds), with the time spent serving them. There are no rollups:
// usage is decayed in place (PriorityDecayHalfLife), not rolled up into
// tables.
func (s *Server) SlurmdbV0044GetDiag(ctx context.Context) (api.SlurmdbV0044GetDiagRes, error) {
	s.count(ctx, "DBD_GET_STATS")
	rpcs := api.V0044StatsRPCList{}
	for _, r := range s.ctl.StatsRef().RPCTotals() {
		if !strings.HasPrefix(r.Kind, "DBD_") {
			continue
		}
		rpcs = append(rpcs, api.V0044StatsRPC{RPC: api.NewOptString(r.Kind), Count: api.NewOptInt32(int32(r.Count)),
			Time: api.NewOptV0044StatsRPCTime(api.V0044StatsRPCTime{Average: api.NewOptInt64(int64(meanOf(r.TotalMicros, r.Count))), Total: api.NewOptInt64(int64(r.TotalMicros))})})
	}
	return &api.V0044OpenapiSlurmdbdStatsResp{
		Statistics: api.V0044StatsRec{TimeStart: api.NewOptInt64(s.ctl.StartTime().Unix()), RPCs: rpcs, Users: api.V0044StatsUserList{}},
		Meta:       s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{},
	}, nil
}
