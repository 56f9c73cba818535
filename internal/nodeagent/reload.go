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

// handleReconfigure is the controller's reconfigure (Reconfigure).
func (a *Agent) handleReconfigure(w http.ResponseWriter, r *http.Request) {
	if err := a.Reconfigure(); err != nil {
		code := http.StatusUnprocessableEntity
		if errors.Is(err, errNoReload) {
			code = http.StatusNotImplemented
		}
		nodeproto.Fail(w, code, err)
		return
	}
	nodeproto.Reply(w, http.StatusOK, struct{}{})
}

// Reconfigure reads the files again, on the controller's reconfigure or
// SIGHUP (as slurmd): the next steps and batch scripts follow them (the
// SPANK stack is loaded again on first use), and the node registers
// again so that the controller sees its new definition. Running jobs are
// not touched. Files refused leave the configuration unchanged.
func (a *Agent) Reconfigure() error {
	if a.cfg.Reload == nil {
		return errNoReload
	}
	next, err := a.cfg.Reload()
	if err != nil {
		a.logger.Error("reconfigure: files refused, configuration unchanged", "err", err)
		return err
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
	return nil
}

var errNoReload = errors.New("this node daemon cannot read its files again")
