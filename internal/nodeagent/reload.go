package nodeagent

import (
	"errors"
	"net/http"
	"sync/atomic"

	"github.com/droverhq/drover/internal/clusterkey"

	"github.com/droverhq/drover/internal/nodeproto"
)

// Reloaded is what a node daemon takes again from its files on
// reconfigure: its NodeName line, cgroup.conf's ConstrainDevices and
// where plugstack.conf and the plugins are. Where it listens, its spool
// and its GPUs stay as they were, as slurmd keeps its port.
type Reloaded struct {
	CPUs             uint32
	RealMemory       uint64
	ConstrainDevices bool
	PlugStack        string
	PluginDir        string
	// Keys is the cluster key read again (nil: unchanged), so that a key
	// rotation reaches running daemons.
	Keys *clusterkey.Ring
}

// files holds the current Reloaded; read without locks on every launch.
type files = atomic.Pointer[Reloaded]

func reloadedOf(cfg *Config) *Reloaded {
	return &Reloaded{CPUs: cfg.CPUs, RealMemory: cfg.RealMemory, ConstrainDevices: cfg.ConstrainDevices,
		PlugStack: cfg.PlugStack, PluginDir: cfg.PluginDir}
}

// current is what the daemon's files said when last read.
func (a *Agent) current() *Reloaded { return a.files.Load() }

// handleReconfigure reads the files again: the next steps and batch
// scripts follow them (the SPANK stack is loaded again on first use),
// and the node registers again so that the controller sees its new
// definition. Running jobs are not touched.
func (a *Agent) handleReconfigure(w http.ResponseWriter, r *http.Request) {
	if a.cfg.Reload == nil {
		nodeproto.Fail(w, http.StatusNotImplemented, errNoReload)
		return
	}
	next, err := a.cfg.Reload()
	if err != nil {
		a.logger.Error("reconfigure: files refused, configuration unchanged", "err", err)
		nodeproto.Fail(w, http.StatusUnprocessableEntity, err)
		return
	}
	if next.Keys != nil {
		a.cfg.Keys.Store(next.Keys)
		next.Keys = nil
	}
	a.files.Store(&next)
	a.reloadSpank()
	select {
	case a.needReg <- struct{}{}:
	default:
	}
	a.logger.Info("reconfigured", "cpus", next.CPUs, "constrain_devices", next.ConstrainDevices, "plugstack", next.PlugStack)
	nodeproto.Reply(w, http.StatusOK, struct{}{})
}

var errNoReload = errors.New("this node daemon cannot read its files again")
