package v0044

import (
	"context"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

// SlurmV0044GetResources implements GET /resources/{job_id}: the job's
// share of each node: memory, the node's socket layout and the GPUs by
// index. The controller counts CPUs rather than choosing cores (the node
// daemon binds them), so core_bitmap is left out; a pending job holds
// no node yet.
func (s *Server) SlurmV0044GetResources(ctx context.Context, params api.SlurmV0044GetResourcesParams) (api.SlurmV0044GetResourcesRes, error) {
	s.count(ctx, "REQUEST_JOB_INFO_SINGLE")
	sel, err := parseSelector(params.JobID, s.ctl.MaxArraySize())
	var jobs []*job.Job
	if err == nil {
		jobs, err = s.ctl.Job(sel)
	}
	if err == nil {
		err = s.hiddenJob(ctx, jobs)
	}
	if err != nil {
		e := apiError(err, "_handle_job_resources")
		e.Description = api.NewOptString("Unable to query JobId=" + params.JobID)
		status := 404
		if slurmerr.CodeOf(err) == slurmerr.AccessDenied {
			status = 403
		}
		return &api.V0044OpenapiResourceLayoutRespStatusCode{StatusCode: status, Response: api.V0044OpenapiResourceLayoutResp{
			Nodes: api.V0044NodeResourceLayoutList{}, Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{e}, Warnings: api.V0044OpenapiWarnings{},
		}}, nil
	}
	nodes := map[string]*node.Node{}
	for _, ni := range s.ctl.Nodes() {
		nodes[ni.Node.Name] = ni.Node
	}
	out := api.V0044NodeResourceLayoutList{}
	for _, j := range jobs {
		if j.Alloc == nil {
			continue
		}
		for _, na := range j.Alloc.Nodes {
			l := api.V0044NodeResourceLayout{
				Node:     na.Node,
				MemAlloc: api.NewOptInt64(int64(na.MemMB)),
				Channel:  api.NewOptV0044Uint32NoValStruct(api.V0044Uint32NoValStruct{}),
				Gres:     api.V0044NodeGresLayoutList{},
			}
			if n := nodes[na.Node]; n != nil {
				l.SocketsPerNode = api.NewOptInt32(int32(max(n.Sockets, 1)))
				l.CoresPerSocket = api.NewOptInt32(int32(max(n.CoresPerSocket, 1)))
				if len(na.GPUs) > 0 {
					typ := ""
					for _, g := range n.GPUs {
						if g.Index == na.GPUs[0] {
							typ = g.Type
						}
					}
					l.Gres = append(l.Gres, api.V0044NodeGresLayout{Name: "gpu", Type: api.NewOptString(typ),
						Count: api.NewOptInt64(int64(len(na.GPUs))), Index: api.NewOptString(gres.FormatIDList(na.GPUs))})
				}
			}
			out = append(out, l)
		}
	}
	return &api.V0044OpenapiResourceLayoutResp{Nodes: out,
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}
