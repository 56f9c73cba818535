//go:build cgo

package nvml

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"
)

// Config is the GPU plugin's configuration, from its arguments.
type Config struct {
	// Mock names a go-nvml DGX mock to use instead of the NVML library
	// (mock=dgxa100), with the overlay's options (mock_cpus=N,
	// mock_events=FILE).
	Mock        string
	MockOptions MockOptions
	// Policy says which events drain the node (ignore_xids=13,31 adds to
	// the application XIDs it ignores; ignore_xids=none ignores none).
	Policy gres.HealthPolicy
	// Health=no turns the event watch off (health=no).
	NoHealth bool
}

// ParseArgs reads the plugin's arguments, key=value words.
func ParseArgs(args []string) (Config, error) {
	c := Config{Policy: gres.DefaultHealthPolicy()}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return Config{}, fmt.Errorf("argument %q: want key=value", a)
		}
		switch k {
		case "mock":
			if !slices.Contains(MockNames(), v) {
				return Config{}, fmt.Errorf("unknown NVML mock %q (known: %s)", v, strings.Join(MockNames(), ", "))
			}
			c.Mock = v
		case "mock_cpus":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1<<16 {
				return Config{}, fmt.Errorf("mock_cpus=%s: want a CPU count", v)
			}
			c.MockOptions.CPUs = n
		case "mock_events":
			if v == "" {
				return Config{}, errors.New("mock_events: want a file name")
			}
			c.MockOptions.Events = v
		case "ignore_xids":
			if v == "none" {
				c.Policy.Ignore = map[uint64]bool{}
				continue
			}
			xids, err := gres.ParseXIDList(v)
			if err != nil {
				return Config{}, fmt.Errorf("ignore_xids=%s: %w", v, err)
			}
			for _, x := range xids {
				c.Policy.Ignore[x] = true
			}
		case "health":
			switch v {
			case "yes":
				c.NoHealth = false
			case "no":
				c.NoHealth = true
			default:
				return Config{}, fmt.Errorf("health=%s: want yes or no", v)
			}
		default:
			return Config{}, fmt.Errorf("unknown argument %q", k)
		}
	}
	return c, nil
}

// Source is where the devices of c come from: "nvml" or "mock:<name>".
func (c Config) Source() string {
	if c.Mock != "" {
		return "mock:" + c.Mock
	}
	return "nvml"
}

// Open loads and initialises the library c names. The caller shuts it
// down.
func Open(c Config) (gonvml.Interface, error) {
	var lib gonvml.Interface
	if c.Mock != "" {
		m, err := NewMock(c.Mock, c.MockOptions)
		if err != nil {
			return nil, err
		}
		lib = m
	} else {
		lib = gonvml.New()
	}
	switch ret := lib.Init(); ret {
	case gonvml.SUCCESS:
		return lib, nil
	case gonvml.ERROR_LIBRARY_NOT_FOUND:
		return nil, errors.New("NVML library libnvidia-ml.so.1 not found: is the NVIDIA driver installed?")
	case gonvml.ERROR_DRIVER_NOT_LOADED:
		return nil, errors.New("nvmlInit: the NVIDIA kernel driver is not loaded")
	default:
		return nil, fmt.Errorf("nvmlInit: %v", ret)
	}
}

// Plugin is the GPU GRES plugin: discovery through NVML, health from
// NVML's XID events, and the step set-up of package sdk's default plus
// CUDA_DEVICE_ORDER on nodes with mixed GPUs.
type Plugin struct {
	mu      sync.Mutex
	cfg     Config
	lib     gonvml.Interface
	devices []gres.Device
	watcher *Watcher
	// watchErr is why events are not watched, reported once.
	watchErr error
	sdk      *sdk.Gres
}

// NewPlugin returns the plugin, ready for sdk.ServeGres(p.Gres()).
func NewPlugin() *Plugin {
	p := &Plugin{}
	p.sdk = &sdk.Gres{Init: p.init, Discover: p.discover, Prepare: p.prepare, Health: p.health, Usage: p.usage}
	return p
}

// Gres is the plugin's implementation for the SDK.
func (p *Plugin) Gres() *sdk.Gres { return p.sdk }

func (p *Plugin) init(args []string) error {
	cfg, err := ParseArgs(args)
	if err != nil {
		return err
	}
	lib, err := Open(cfg)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg, p.lib = cfg, lib
	return nil
}

func (p *Plugin) discover(*protocol.DiscoverRequest) (*protocol.DiscoverReply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	devices, lost, err := Discover(p.lib)
	if err != nil {
		return nil, err
	}
	for _, i := range lost {
		sdk.Logger().Warn("GPU lost, not reported", "index", i)
	}
	p.devices = devices
	if p.watcher == nil && !p.cfg.NoHealth && p.watchErr == nil {
		p.watcher, p.watchErr = Watch(p.lib, devices)
		if p.watchErr != nil {
			sdk.Logger().Warn("GPU health not watched", "error", p.watchErr)
		}
	}
	return &protocol.DiscoverReply{Source: p.cfg.Source(), Devices: devices, Lost: lost}, nil
}

func (p *Plugin) prepare(req *protocol.PrepareRequest) (*protocol.PrepareReply, error) {
	devs, err := p.sdk.Devices(req.GresRequest)
	if err != nil {
		return nil, err
	}
	out := &protocol.PrepareReply{}
	if req.ConstrainDevices {
		out.Deny = sdk.DenyFiles(devs, req.StepGPUs)
	}
	if len(req.StepGPUs) > 0 && mixedModels(devs) && !hasVar(req.Env, "CUDA_DEVICE_ORDER") {
		// CUDA numbers devices fastest first unless told otherwise, and
		// on a node with several GPU models that order differs from the
		// PCI order of NVML's indices, which CUDA_VISIBLE_DEVICES uses.
		out.Env = append(out.Env, protocol.EnvChange{Name: "CUDA_DEVICE_ORDER", Value: "PCI_BUS_ID"})
	}
	return out, nil
}

func (p *Plugin) health(req *protocol.HealthRequest) (*protocol.HealthReply, error) {
	if _, err := p.sdk.Devices(req.GresRequest); err != nil {
		return nil, err
	}
	p.mu.Lock()
	w, policy, werr := p.watcher, p.cfg.Policy, p.watchErr
	p.mu.Unlock()
	if w == nil {
		if werr != nil {
			return &protocol.HealthReply{Error: werr.Error()}, nil
		}
		return &protocol.HealthReply{}, nil
	}
	events, err := w.Take()
	out := &protocol.HealthReply{}
	for _, ev := range events {
		if !policy.Fatal(ev) {
			sdk.Logger().Info("GPU event ignored", "index", ev.Index, "xid", ev.XID)
			continue
		}
		out.Events = append(out.Events, ev)
	}
	if err != nil {
		out.Error = err.Error()
	}
	return out, nil
}

func mixedModels(devs []gres.Device) bool {
	for _, d := range devs {
		if d.Name != devs[0].Name {
			return true
		}
	}
	return false
}

func hasVar(env []string, name string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}
