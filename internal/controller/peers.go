package controller

import (
	"context"
	"net"
	"strconv"
	"time"

	"github.com/droverhq/drover/internal/replog"
	"github.com/droverhq/drover/internal/slurmerr"
)

// Peers are the controllers of a cluster whose slurm.conf lists several
// SlurmctldHost lines, as this one reaches them. The daemon's
// replication implements it; the controller stays free of its
// transport.
type Peers interface {
	// Controllers asks every controller for its replica's state, in
	// SlurmctldHost order, this one included; a controller that does
	// not answer in a short time is reported not responding.
	Controllers(ctx context.Context) []ControllerStatus
	// TakeOver hands leadership from this controller, which leads, to
	// the one at index, and returns once that one leads.
	TakeOver(ctx context.Context, index int) error
	// Names are the SlurmctldHost names, in order.
	Names() []string
}

// ControllerStatus is one SlurmctldHost as a ping found it.
type ControllerStatus struct {
	// Name is the SlurmctldHost name, Addr where it is reached.
	Name, Addr string
	// Index is the line's place (0 the primary).
	Index int
	// Responding is whether it answered, Latency how long the ping
	// took (or until it failed), Err why it did not answer.
	Responding bool
	Latency    time.Duration
	Err        string
	// Leader is whether it leads, as it says itself.
	Leader bool
	// Self marks this controller.
	Self bool
	// Replica is its replica's state (nil: not replicated, or no
	// answer).
	Replica *replog.Stats
}

// Controllers reports every SlurmctldHost, as scontrol ping and
// slurmrestd's ping list them, and whether the controllers replicate
// (several lines). A controller alone answers for itself: up, leading.
func (c *Controller) Controllers(ctx context.Context) ([]ControllerStatus, bool) {
	if c.cfg.Peers == nil {
		host := c.cfg.ControlAddr
		if host == "" {
			host = c.cfg.ControlHost
		}
		return []ControllerStatus{{
			Name: c.cfg.ControlHost, Addr: net.JoinHostPort(host, strconv.Itoa(c.cfg.Port)),
			Responding: true, Leader: true, Self: true,
		}}, false
	}
	return c.cfg.Peers.Controllers(ctx), true
}

// TakeOver is scontrol takeover: the controller target names (an index,
// 1 the first backup, or a SlurmctldHost name) becomes the leader. As
// slurmctld's _slurm_rpc_takeover, only root, SlurmUser and the
// administrators may ask (validate_super_user: operators are not
// enough; ESLURM_USER_ID_MISSING otherwise), and asking the controller
// that leads already succeeds at once. A controller alone
// has no backup to hand over to.
func (c *Controller) TakeOver(ctx context.Context, who Identity, target TakeoverTarget) error {
	if err := c.requireSuperUser(who, "TAKEOVER RPC"); err != nil {
		return err
	}
	names := []string{c.cfg.ControlHost}
	if c.cfg.Peers != nil {
		names = c.cfg.Peers.Names()
	}
	i, err := target.Resolve(names)
	if err != nil {
		return slurmerr.New(slurmerr.NotSupported, "%v", err)
	}
	if c.cfg.Peers == nil {
		return slurmerr.New(slurmerr.NotSupported, "no backup controller defined")
	}
	c.logger.Info("takeover requested", "to", names[i], "uid", who.UID, "user", who.User)
	if err := c.cfg.Peers.TakeOver(ctx, i); err != nil {
		return slurmerr.New(slurmerr.ControllerConnect, "takeover by %s: %v", names[i], err)
	}
	return nil
}

// TakeoverTarget is takeover's argument (droverapi.TakeoverTarget, the
// wire form the bridge parses).
type TakeoverTarget interface {
	Resolve(names []string) (int, error)
}
