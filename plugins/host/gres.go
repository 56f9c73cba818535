package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/droverhq/drover/plugins/protocol"
)

// Gres calls a GRES plugin (protocol.KindGres) for one node.
type Gres struct {
	*Plugin
	node string
}

// OpenGres prepares a GRES plugin for node; spec.Kind is set for it.
func OpenGres(spec Spec, node string) *Gres {
	spec.Kind = protocol.KindGres
	return &Gres{Plugin: Open(spec), node: node}
}

func (g *Gres) common() protocol.GresRequest {
	return protocol.GresRequest{Args: g.Args(), Node: g.node}
}

// Discover lists the node's devices.
func (g *Gres) Discover(ctx context.Context) (*protocol.DiscoverReply, error) {
	var out protocol.DiscoverReply
	if err := g.Call(ctx, protocol.GresMethodDiscover, &protocol.DiscoverRequest{GresRequest: g.common()}, &out); err != nil {
		return nil, err
	}
	for i, d := range out.Devices {
		switch {
		case d.UUID == "" && d.File == "":
			return nil, fmt.Errorf("plugin %s: device %d has neither UUID nor device file", g.Name(), i)
		case i > 0 && d.Index <= out.Devices[i-1].Index:
			return nil, fmt.Errorf("plugin %s: device indices out of order (%d after %d)", g.Name(), d.Index, out.Devices[i-1].Index)
		}
	}
	return &out, nil
}

// Prepare asks for a step's set-up; the plugin's own refusal is an error
// with its message.
func (g *Gres) Prepare(ctx context.Context, req protocol.PrepareRequest) (*protocol.PrepareReply, error) {
	req.GresRequest = g.common()
	var out protocol.PrepareReply
	if err := g.Call(ctx, protocol.GresMethodPrepare, &req, &out); err != nil {
		return nil, err
	}
	if out.Error != "" {
		return nil, fmt.Errorf("plugin %s: %s", g.Name(), out.Error)
	}
	if len(out.TaskEnv) > len(req.Tasks) {
		return nil, errors.New("plugin " + g.Name() + ": environment for more tasks than the step has")
	}
	return &out, nil
}

// Health returns the critical events since the last call.
func (g *Gres) Health(ctx context.Context) (*protocol.HealthReply, error) {
	var out protocol.HealthReply
	if err := g.Call(ctx, protocol.GresMethodHealth, &protocol.HealthRequest{GresRequest: g.common()}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Usage asks what the processes pids use on the devices now.
func (g *Gres) Usage(ctx context.Context, devices, pids []int) (*protocol.UsageReply, error) {
	var out protocol.UsageReply
	req := protocol.UsageRequest{GresRequest: g.common(), Devices: devices, Pids: pids}
	if err := g.Call(ctx, protocol.GresMethodUsage, &req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
