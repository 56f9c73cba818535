package controller

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
)

// Reconfigure is scontrol reconfigure: slurm.conf is read again and a
// controller built from it takes over, as slurmctld 23.11 and later
// restart in place. Only root, SlurmUser and administrators may ask, as
// slurmctld's validate_super_user has it.
func (c *Controller) Reconfigure(ctx context.Context, who Identity) error {
	if !c.superUser(who) {
		c.logger.Error("security violation, RECONFIGURE from", "uid", who.UID)
		return slurmerr.New(slurmerr.UserIDMissing, "%s", slurmerr.UserIDMissing.Message())
	}
	if c.cfg.Reload == nil {
		return slurmerr.New(slurmerr.NotSupported, "this controller cannot read slurm.conf again")
	}
	c.logger.Info("processing reconfiguration request", "uid", who.UID)
	return c.cfg.Reload(ctx)
}

// superUser is slurmctld's validate_super_user: root, SlurmUser or an
// administrator (operators are not enough).
func (c *Controller) superUser(who Identity) bool {
	return who.UID == 0 || who.UID == c.cfg.SlurmUserID || c.isSuperAdmin(who.User)
}

// CheckSuccessor reports why next may not replace the running
// configuration: every job that is not over must keep its partitions and
// the nodes it runs on, and every reservation its nodes, so that
// reconfiguring loses nothing that was acknowledged. slurmctld would
// instead fail such jobs when it starts again.
func (c *Controller) CheckSuccessor(next *Config) error {
	nodes := map[string]bool{}
	for _, n := range next.Nodes {
		nodes[n.Name] = true
	}
	c.mu.RLock()
	for name := range c.st.DynNodes {
		nodes[name] = true // kept by the state, not slurm.conf
	}
	c.mu.RUnlock()
	parts := map[string]bool{}
	c.mu.RLock()
	for _, p := range next.Partitions {
		parts[p.Name] = !c.st.PartsGone[p.Name]
	}
	for name := range c.st.Parts {
		parts[name] = true // kept by the state, not slurm.conf
	}
	c.mu.RUnlock()
	if next.ClusterName != c.cfg.ClusterName {
		return fmt.Errorf("ClusterName changed from %s to %s: that needs a new StateSaveLocation, not a reconfigure", c.cfg.ClusterName, next.ClusterName)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	lostParts := map[string][]string{}
	lostNodes := map[string][]string{}
	for _, id := range c.st.order {
		j := c.st.Jobs[id]
		if j.State.Terminal() && !j.Completing {
			continue
		}
		for _, p := range strings.Split(j.Req.Partition, ",") {
			if p != "" && !parts[p] {
				lostParts[p] = append(lostParts[p], strconv.FormatUint(uint64(j.ID), 10))
			}
		}
		if j.Alloc != nil {
			for _, na := range j.Alloc.Nodes {
				if !nodes[na.Node] {
					lostNodes[na.Node] = append(lostNodes[na.Node], strconv.FormatUint(uint64(j.ID), 10))
				}
			}
		}
	}
	var problems []string
	for _, p := range sortedKeys(lostParts) {
		problems = append(problems, fmt.Sprintf("partition %s is gone but jobs %s are in it", p, strings.Join(compactIDs(lostParts[p]), ",")))
	}
	for _, n := range sortedKeys(lostNodes) {
		problems = append(problems, fmt.Sprintf("node %s is gone but jobs %s run on it", n, strings.Join(compactIDs(lostNodes[n]), ",")))
	}
	for _, name := range sortedKeys(c.st.Resvs) {
		var gone []string
		for _, n := range c.st.Resvs[name].Nodes {
			if !nodes[n] {
				gone = append(gone, n)
			}
		}
		if len(gone) > 0 {
			problems = append(problems, fmt.Sprintf("reservation %s holds nodes %s that are gone", name, hostlist.Compress(gone)))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the new slurm.conf would lose work: %s", strings.Join(problems, "; "))
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// compactIDs keeps a list of job ids short enough for an error line.
func compactIDs(ids []string) []string {
	ids = slices.Compact(ids)
	if len(ids) > 10 {
		return append(ids[:10:10], fmt.Sprintf("and %d more", len(ids)-10))
	}
	return ids
}

// Handover is what a controller knows that its state log does not keep:
// what the node daemons reported when they registered. A successor adopts
// it so that the nodes need not register again.
type Handover struct {
	nodes map[string]node.Node
}

// Handover returns what the successor of this controller should adopt.
// Call it once nothing else uses the controller.
func (c *Controller) Handover() Handover {
	c.mu.RLock()
	defer c.mu.RUnlock()
	h := Handover{nodes: make(map[string]node.Node, len(c.nodes))}
	for name, n := range c.nodes {
		h.nodes[name] = *n
	}
	return h
}

// Adopt takes over what the node daemons reported to the predecessor, for
// each node whose definition in slurm.conf is unchanged. A node whose
// definition changed registers again (its next heartbeat is refused), so
// that what it reports is checked against the new definition; a new node
// registers as it starts.
func (c *Controller) Adopt(h Handover) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, n := range c.nodes {
		old, ok := h.nodes[name]
		if !ok {
			continue
		}
		// Where the daemon listens, to tell it to reconfigure too.
		n.DaemonAddr = old.DaemonAddr
		if !sameDefinition(n, &old) {
			continue
		}
		n.Registered, n.Responding = old.Registered, old.Responding
		n.BootTime, n.SlurmdStart = old.BootTime, old.SlurmdStart
		n.Version, n.Arch, n.OS = old.Version, old.Arch, old.OS
		n.DaemonAddr, n.FreeMemMB, n.CPULoad = old.DaemonAddr, old.FreeMemMB, old.CPULoad
		n.GPUs = old.GPUs
	}
	c.partTRESMu.Lock()
	c.partTRES = nil
	c.partTRESMu.Unlock()
}

// sameDefinition reports whether two nodes have the same slurm.conf line.
func sameDefinition(a, b *node.Node) bool {
	return a.Name == b.Name && a.Addr == b.Addr && a.Hostname == b.Hostname && a.Port == b.Port &&
		a.CPUs == b.CPUs && a.Boards == b.Boards && a.Sockets == b.Sockets &&
		a.CoresPerSocket == b.CoresPerSocket && a.ThreadsPerCore == b.ThreadsPerCore &&
		a.RealMemory == b.RealMemory && a.Weight == b.Weight && a.Future == b.Future &&
		slices.Equal(a.Features, b.Features) && slices.Equal(a.GresConf, b.GresConf)
}

// ReconfigureNodes asks every node daemon known to listen somewhere to
// read its files again, as slurmctld sends REQUEST_RECONFIGURE to the
// slurmds after a reconfigure. A daemon that cannot is logged and keeps
// what it had.
func (c *Controller) ReconfigureNodes(ctx context.Context) {
	c.mu.RLock()
	addrs := map[string]string{}
	for name, n := range c.nodes {
		if n.DaemonAddr != "" {
			addrs[name] = n.DaemonAddr
		}
	}
	c.mu.RUnlock()
	var wg sync.WaitGroup
	for name, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := nodeproto.Post(ctx, c.client, "http://"+addr+nodeproto.PathReconfigure, struct{}{}, nil); err != nil {
				c.logger.Warn("node did not reconfigure", "node", name, "err", err)
			}
		}()
	}
	wg.Wait()
}
