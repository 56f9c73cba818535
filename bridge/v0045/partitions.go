package v0045

import (
	"context"
	"net/http"
	"time"

	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0045"
)

// SlurmV0045PostPartitions implements POST /partitions/: each record of
// partitions makes the partition of its name or changes it (only the
// members given), stopping at the first refusal, as the reservations
// POST does.
func (s *Server) SlurmV0045PostPartitions(ctx context.Context, req api.OptV0045OpenapiPartitionsModReq) (api.SlurmV0045PostPartitionsRes, error) {
	ctl := s.b44.Controller()
	ctl.StatsRef().CountRPCCtx(ctx, "REQUEST_UPDATE_PARTITION")
	caller, _ := authctx.From(ctx)
	var err error
	if len(req.Value.Partitions) == 0 {
		err = slurmerr.New(slurmerr.InvalidQuery, "no partition in partitions")
	}
	for _, p := range req.Value.Partitions {
		ch, cerr := partitionChange(p)
		if cerr != nil {
			err = cerr
			break
		}
		_, unknown := ctl.Partition(ch.Name)
		if err = ctl.SetPartition(ctx, caller.Identity, ch, unknown != nil); err != nil {
			break
		}
	}
	return s.plain(ctx, err, "_op_handler_partitions"), nil
}

// SlurmV0045DeletePartition implements DELETE /partition/{name}.
func (s *Server) SlurmV0045DeletePartition(ctx context.Context, p api.SlurmV0045DeletePartitionParams) (api.SlurmV0045DeletePartitionRes, error) {
	ctl := s.b44.Controller()
	ctl.StatsRef().CountRPCCtx(ctx, "REQUEST_DELETE_PARTITION")
	caller, _ := authctx.From(ctx)
	return s.plain(ctx, ctl.DeletePartition(ctx, caller.Identity, p.PartitionName), "_op_handler_partition"), nil
}

// plain is the payload-less answer: 200, or the refusal with its status.
func (s *Server) plain(ctx context.Context, err error, source string) *api.V0045OpenapiRespStatusCode {
	resp := api.V0045OpenapiResp{Meta: s.meta(ctx), Errors: api.V0045OpenapiErrors{}, Warnings: api.V0045OpenapiWarnings{}}
	status := http.StatusOK
	if err != nil {
		code := slurmerr.CodeOf(err)
		resp.Errors = api.V0045OpenapiErrors{{ErrorNumber: api.NewOptInt32(int32(code)), Error: api.NewOptString(code.Message()),
			Description: api.NewOptString(err.Error()), Source: api.NewOptString(source)}}
		switch code {
		case slurmerr.InvalidQuery:
			status = http.StatusUnprocessableEntity
		default:
			status = http.StatusInternalServerError
		}
	}
	return &api.V0045OpenapiRespStatusCode{StatusCode: status, Response: resp}
}

// partitionChange reads the members of a partition record that were given.
func partitionChange(p api.V0045PartitionInfo) (controller.PartitionChange, error) {
	ch := controller.PartitionChange{Name: p.Name.Or("")}
	if ch.Name == "" {
		return ch, slurmerr.New(slurmerr.InvalidQuery, "a partition needs its name")
	}
	if n, ok := p.Nodes.Get(); ok {
		if v, ok := n.Configured.Get(); ok {
			ch.Nodes = &v
		}
	}
	if pt, ok := p.Partition.Get(); ok {
		if len(pt.State) > 0 {
			var st partition.State
			switch pt.State[0] {
			case api.V0045PartitionInfoPartitionStateItemUP:
				st = partition.Up
			case api.V0045PartitionInfoPartitionStateItemDOWN:
				st = partition.Down
			case api.V0045PartitionInfoPartitionStateItemDRAIN:
				st = partition.Drain
			case api.V0045PartitionInfoPartitionStateItemINACTIVE:
				st = partition.Inactive
			default:
				return ch, slurmerr.New(slurmerr.InvalidQuery, "partition state %s cannot be set", pt.State[0])
			}
			ch.State = &st
		}
		if v, ok := pt.Oversubscribe.Get(); ok {
			ch.OverSubscribe = &v
		}
	}
	if m, ok := p.Maximums.Get(); ok {
		ch.MaxTime = noVal(m.Time)
		ch.MaxNodes = noVal(m.Nodes)
		ch.MaxMemPerNode = megabytes(m.PartitionMemoryPerNode)
	}
	if m, ok := p.Minimums.Get(); ok {
		if v, ok := m.Nodes.Get(); ok {
			n := uint32(v)
			ch.MinNodes = &n
		}
	}
	if d, ok := p.Defaults.Get(); ok {
		ch.DefaultTime = noVal(d.Time)
		ch.DefMemPerCPU = megabytes(d.PartitionMemoryPerCPU)
		ch.DefMemPerNode = megabytes(d.PartitionMemoryPerNode)
	}
	if pr, ok := p.Priority.Get(); ok {
		if v, ok := pr.Tier.Get(); ok {
			n := uint32(v)
			ch.PriorityTier = &n
		}
		if v, ok := pr.JobFactor.Get(); ok {
			n := uint32(v)
			ch.JobFactor = &n
		}
	}
	if q, ok := p.Qos.Get(); ok {
		if v, ok := q.Assigned.Get(); ok {
			ch.QOS = &v
		}
	}
	if v, ok := p.GraceTime.Get(); ok {
		d := time.Duration(v) * time.Second
		ch.GraceTime = &d
	}
	for _, f := range p.Flags {
		t, fl := true, false
		switch f {
		case api.V0045PartitionInfoFlagsItemDEFAULT:
			ch.Default = &t
		case api.V0045PartitionInfoFlagsItemDEFAULTCLEAR:
			ch.Default = &fl
		case api.V0045PartitionInfoFlagsItemHIDDEN:
			ch.Hidden = &t
		case api.V0045PartitionInfoFlagsItemHIDDENCLEAR:
			ch.Hidden = &fl
		default:
			return ch, slurmerr.New(slurmerr.NotSupported, "partition flag %s is not supported", f)
		}
	}
	return ch, nil
}

// noVal reads a {set, infinite, number} member: nil when not given or
// unset, partition.Infinite when infinite.
func noVal(v api.OptV0045Uint32NoValStruct) *uint32 {
	n, ok := v.Get()
	if !ok {
		return nil
	}
	switch {
	case n.Infinite.Or(false):
		inf := partition.Infinite
		return &inf
	case n.Set.Or(false):
		x := uint32(n.Number.Or(0))
		return &x
	}
	return nil
}

// megabytes reads a memory member: nil when not given or unset.
func megabytes(v api.OptV0045Uint64NoValStruct) *uint64 {
	n, ok := v.Get()
	if !ok || !n.Set.Or(false) {
		return nil
	}
	mb := uint64(n.Number.Or(0))
	return &mb
}
