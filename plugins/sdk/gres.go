package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/plugins/protocol"
)

// Gres is a GRES plugin for GPUs: it finds the node's devices and,
// optionally, adds to a step's set-up and reports device failures.
//
// Drover calls Init once per plugin process with the plugin's arguments,
// before any other function: a plugin restarted after a crash is set up
// again from its next call.
type Gres struct {
	// Init sets the plugin up; nil: nothing to set up.
	Init func(args []string) error
	// Discover lists the node's devices. It is required.
	Discover func(req *protocol.DiscoverRequest) (*protocol.DiscoverReply, error)
	// Prepare adds to a step's set-up. nil: the default, which with
	// ConstrainDevices denies the files of every discovered device the
	// step was not given, and changes no variable (Drover writes Slurm's
	// GPU variables itself).
	Prepare func(req *protocol.PrepareRequest) (*protocol.PrepareReply, error)
	// Health returns the critical events since the last call; nil: none
	// ever.
	Health func(req *protocol.HealthRequest) (*protocol.HealthReply, error)
	// Usage measures what processes use on devices; nil: nothing is
	// measured (no GPU usage in the job records).
	Usage func(req *protocol.UsageRequest) (*protocol.UsageReply, error)

	mu      sync.Mutex
	inited  bool
	devices []gres.Device
}

// ServeGres serves g until Drover stops the plugin. It does not return.
func ServeGres(g *Gres) {
	serve(protocol.KindGres, protocol.GresMethods, g.handle)
}

// init runs Init once.
func (g *Gres) init(args []string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inited {
		return nil
	}
	if g.Init != nil {
		if err := g.Init(args); err != nil {
			return fmt.Errorf("init: %w", err)
		}
	}
	g.inited = true
	return nil
}

// Handle serves one call as the plugin process does, for testing a plugin
// without running it: req is the JSON request of method.
func (g *Gres) Handle(method string, req []byte) (any, error) {
	return g.handle(context.Background(), method, req)
}

func (g *Gres) handle(_ context.Context, method string, req json.RawMessage) (any, error) {
	var common protocol.GresRequest
	if err := json.Unmarshal(req, &common); err != nil {
		return nil, fmt.Errorf("decode %s: %w", method, err)
	}
	if err := g.init(common.Args); err != nil {
		return nil, err
	}
	switch method {
	case protocol.GresMethodDiscover:
		var in protocol.DiscoverRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		return g.discover(&in)
	case protocol.GresMethodPrepare:
		var in protocol.PrepareRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		if g.Prepare != nil {
			return g.Prepare(&in)
		}
		return g.defaultPrepare(&in)
	case protocol.GresMethodUsage:
		var in protocol.UsageRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		if g.Usage == nil {
			return &protocol.UsageReply{}, nil
		}
		return g.Usage(&in)
	case protocol.GresMethodHealth:
		var in protocol.HealthRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		if g.Health == nil {
			return &protocol.HealthReply{}, nil
		}
		return g.Health(&in)
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

func (g *Gres) discover(in *protocol.DiscoverRequest) (*protocol.DiscoverReply, error) {
	if g.Discover == nil {
		return nil, fmt.Errorf("plugin has no Discover")
	}
	out, err := g.Discover(in)
	if err != nil {
		return nil, err
	}
	if out.Devices == nil {
		out.Devices = []gres.Device{}
	}
	g.mu.Lock()
	g.devices = slices.Clone(out.Devices)
	g.mu.Unlock()
	return out, nil
}

// Devices are the devices the last Discover found, discovering them first
// when this process has not yet (after a restart).
func (g *Gres) Devices(common protocol.GresRequest) ([]gres.Device, error) {
	g.mu.Lock()
	devs := g.devices
	g.mu.Unlock()
	if devs != nil {
		return devs, nil
	}
	out, err := g.discover(&protocol.DiscoverRequest{GresRequest: common})
	if err != nil {
		return nil, err
	}
	return out.Devices, nil
}

func (g *Gres) defaultPrepare(in *protocol.PrepareRequest) (*protocol.PrepareReply, error) {
	out := &protocol.PrepareReply{}
	if !in.ConstrainDevices {
		return out, nil
	}
	devs, err := g.Devices(in.GresRequest)
	if err != nil {
		return nil, err
	}
	out.Deny = DenyFiles(devs, in.StepGPUs)
	return out, nil
}

// DenyFiles are the device files of devs whose index is not in keep.
func DenyFiles(devs []gres.Device, keep []int) []string {
	var out []string
	for _, d := range devs {
		if d.File != "" && !slices.Contains(keep, d.Index) {
			out = append(out, d.File)
		}
	}
	return out
}
