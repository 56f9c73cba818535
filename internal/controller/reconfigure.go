package controller

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
)

// Reconfigure is scontrol reconfigure: slurm.conf is read again and a
// controller built from it takes over, as slurmctld 23.11 and later
// restart in place. Only root, SlurmUser and administrators may ask, as
// slurmctld's validate_super_user has it.
func (c *Controller) Reconfigure(ctx context.Context, who Identity) error {
	if err := c.requireSuperUser(who, "RECONFIGURE"); err != nil {
		return err
	}
	if c.cfg.Reload == nil {
		return slurmerr.New(slurmerr.NotSupported, "this controller cannot read slurm.conf again")
	}
	c.logger.Info("processing reconfiguration request", "uid", who.UID)
	return c.cfg.Reload(ctx)
}

// requireSuperUser is slurmctld's validate_super_user: root, SlurmUser
// or an administrator (operators are not enough). Anyone else is refused
// with ESLURM_USER_ID_MISSING and the attempt logged, as slurmctld logs
// it.
func (c *Controller) requireSuperUser(who Identity, rpc string) error {
	if who.UID == 0 || who.UID == c.cfg.SlurmUserID || c.isSuperAdmin(who.User) {
		return nil
	}
	c.logger.Error("security violation, "+rpc+" from", "uid", who.UID)
	return slurmerr.New(slurmerr.UserIDMissing, "%s", slurmerr.UserIDMissing.Message())
}

// CheckSuccessor reports why next may not replace the running
// configuration: every job that is not over must keep its partitions and
// the nodes it runs on, and every reservation its nodes, so that
// reconfiguring loses nothing that was acknowledged. slurmctld would
// instead fail such jobs when it starts again.
func (c *Controller) CheckSuccessor(next *Config) error {
	if next.ClusterName != c.cfg.ClusterName {
		return fmt.Errorf("ClusterName changed from %s to %s: that needs a new StateSaveLocation, not a reconfigure", c.cfg.ClusterName, next.ClusterName)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	nodes := map[string]bool{}
	for _, n := range next.Nodes {
		nodes[n.Name] = true
	}
	for name := range c.st.DynNodes {
		nodes[name] = true // kept by the state, not slurm.conf
	}
	parts := map[string]bool{}
	for _, p := range next.Partitions {
		parts[p.Name] = !c.st.PartsGone[p.Name]
	}
	for name := range c.st.Parts {
		parts[name] = true // kept by the state, not slurm.conf
	}
	var problems []string
	inUse := c.partitionsInUseLocked()
	for _, p := range slices.Sorted(maps.Keys(inUse)) {
		if !parts[p] {
			problems = append(problems, fmt.Sprintf("partition %s is gone but jobs %s are in it", p, jobList(inUse[p])))
		}
	}
	lostNodes := map[string][]job.ID{}
	for _, id := range c.st.JobIDs() {
		if j := c.st.Jobs[id]; j.Alloc != nil && !jobOver(j) {
			for _, na := range j.Alloc.Nodes {
				if !nodes[na.Node] {
					lostNodes[na.Node] = append(lostNodes[na.Node], j.ID)
				}
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(lostNodes)) {
		problems = append(problems, fmt.Sprintf("node %s is gone but jobs %s run on it", n, jobList(lostNodes[n])))
	}
	for _, name := range slices.Sorted(maps.Keys(c.st.Resvs)) {
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

// jobOver reports whether a job has ended and let go of its nodes.
func jobOver(j *job.Job) bool { return j.State.Terminal() && !j.Completing }

// partitionsInUseLocked lists, by partition, the jobs not over that are
// in it (pending in any of a list, or running).
func (c *Controller) partitionsInUseLocked() map[string][]job.ID {
	out := map[string][]job.ID{}
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if jobOver(j) {
			continue
		}
		for _, p := range strings.Split(j.Req.Partition, ",") {
			if p != "" && !slices.Contains(out[p], j.ID) {
				out[p] = append(out[p], j.ID)
			}
		}
	}
	return out
}

// jobList names jobs in an error line, at most ten of them.
func jobList(ids []job.ID) string {
	var out []string
	for _, id := range ids[:min(len(ids), 10)] {
		out = append(out, strconv.FormatUint(uint64(id), 10))
	}
	if len(ids) > 10 {
		out = append(out, fmt.Sprintf("and %d more", len(ids)-10))
	}
	return strings.Join(out, ",")
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
			if err := c.client.Post(ctx, msgauth.Node(name), c.client.URL(addr, nodeproto.PathReconfigure), struct{}{}, nil); err != nil {
				c.logger.Warn("node did not reconfigure", "node", name, "err", err)
			}
		}()
	}
	wg.Wait()
}
