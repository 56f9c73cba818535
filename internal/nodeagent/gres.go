package nodeagent

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/proctrack"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/spank/plugconf"
)

// GresPlugin is the node's GPU plugin (a *host.Gres), as the agent uses
// it once the devices are discovered.
type GresPlugin interface {
	Prepare(ctx context.Context, req protocol.PrepareRequest) (*protocol.PrepareReply, error)
	Health(ctx context.Context) (*protocol.HealthReply, error)
	// Usage measures what processes use on GPUs (job accounting).
	Usage(ctx context.Context, devices, pids []int) (*protocol.UsageReply, error)
	Close()
}

// DefaultHealthInterval is how often the GPU plugin is asked for news.
const DefaultHealthInterval = 10 * time.Second

// gresSetup is what a step's tasks get from the GRES side: the device
// files they may not open, and the plugin's variables.
type gresSetup struct {
	deny    []proctrack.Device
	env     []protocol.EnvChange
	taskEnv [][]protocol.EnvChange
}

// forTask applies the plugin's variables to one task's environment.
func (g *gresSetup) forTask(env []string, local int) []string {
	if g == nil {
		return env
	}
	env = plugconf.Apply(env, g.env)
	if local < len(g.taskEnv) {
		env = plugconf.Apply(env, g.taskEnv[local])
	}
	return env
}

// prepareGres asks the GPU plugin, when the node has one, for the step's
// set-up, and otherwise denies the node's other GPU files itself
// (ConstrainDevices), as Slurm's task/cgroup does from gres.conf.
func (s *step) prepareGres(ctx context.Context) (*gresSetup, error) {
	a := s.agent
	l := s.l
	if a.cfg.Gres == nil {
		if !a.current().ConstrainDevices {
			return nil, nil
		}
		return &gresSetup{deny: a.otherGPUs(l.GPUs)}, nil
	}
	if len(l.GPUs) == 0 && !a.current().ConstrainDevices {
		// Nothing for the plugin to set up: no round trip.
		return nil, nil
	}
	req := protocol.PrepareRequest{
		JobID: l.JobID, StepID: l.StepID, UID: l.UID,
		StepGPUs: l.GPUs, ConstrainDevices: a.current().ConstrainDevices, Env: l.Env,
	}
	for _, t := range s.tasks {
		req.Tasks = append(req.Tasks, protocol.PrepareTask{GlobalID: t.id, LocalID: t.local, GPUs: t.gpus})
	}
	reply, err := a.cfg.Gres.Prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return &gresSetup{deny: a.devices(reply.Deny), env: reply.Env, taskEnv: reply.TaskEnv}, nil
}

// otherGPUs are the devices a batch script (or, on a node without a GPU
// plugin, a step) may not open with ConstrainDevices: the node's GPUs it
// was not given there.
func (a *Agent) otherGPUs(gpus []int) []proctrack.Device {
	if !a.current().ConstrainDevices {
		return nil
	}
	var files []string
	for _, g := range a.cfg.GPUs {
		if g.File != "" && !slices.Contains(gpus, g.Index) {
			files = append(files, g.File)
		}
	}
	return a.devices(files)
}

// devices reads device files; one that does not exist has nothing to
// guard (a configured GPU whose node is missing is drained for its count
// instead), and one that is not a device is logged and skipped.
func (a *Agent) devices(files []string) []proctrack.Device {
	var out []proctrack.Device
	for _, f := range files {
		d, err := proctrack.DeviceOf(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			a.logger.Warn("device constraint skipped", "err", err)
			continue
		}
		out = append(out, d)
	}
	return out
}

// healthLoop asks the GPU plugin for critical events and has the node
// drained for the first fatal one, as a health check program would with
// scontrol. A report that does not reach the controller is tried again.
func (a *Agent) healthLoop(ctx context.Context) {
	if a.cfg.Gres == nil {
		return
	}
	every := a.cfg.HealthInterval
	if every <= 0 {
		every = DefaultHealthInterval
	}
	var pending []string
	for sleep(ctx, every) {
		reply, err := a.cfg.Gres.Health(ctx)
		if err != nil {
			a.logger.Warn("GPU health check failed", "err", err)
			continue
		}
		for _, ev := range reply.Events {
			a.logger.Error("GPU failure", "gpu", ev.Index, "uuid", ev.UUID, "reason", ev.Reason())
			a.metrics.gpuEvent(ev)
			pending = append(pending, ev.Reason())
		}
		if len(pending) > 0 {
			report := nodeproto.NodeHealth{Name: a.cfg.Name, Reason: strings.Join(pending, "; ")}
			if err := a.client.Post(ctx, msgauth.Controller, a.ctl+nodeproto.PathNodeHealth, report, nil); err != nil {
				a.logger.Warn("GPU failure not reported yet", "err", err)
			} else {
				pending = nil
			}
		}
		if reply.Error != "" {
			a.logger.Error("GPU health checks stopped", "err", reply.Error)
			return
		}
	}
}
