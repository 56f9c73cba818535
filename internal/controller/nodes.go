package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/slurmerr"
)

// configuredGPUs is the GPU count slurm.conf's Gres= gives a node.
func configuredGPUs(n *node.Node) int {
	count := 0
	for _, s := range n.GresConf {
		parsed, err := gres.ParseNodeGres(s)
		if err != nil {
			continue // refused when the configuration was read
		}
		for _, g := range parsed {
			if g.Name == "gpu" {
				count += int(g.Count)
			}
		}
	}
	return count
}

// DrainForHealth drains a node for a hardware failure its daemon found
// (a GPU's XID), keeping the jobs running there: they end or fail by
// themselves, and the node takes no new ones. A node already drained or
// down keeps its state, and the reason gains the failure.
func (c *Controller) DrainForHealth(ctx context.Context, name, reason string) error {
	if reason == "" {
		return slurmerr.New(slurmerr.InvalidNodeState, "no reason given")
	}
	c.mu.RLock()
	known := c.nodes[name] != nil
	adm := c.st.Nodes[name]
	if adm != nil && (adm.Drain || adm.Down) && adm.Reason != "" && !strings.Contains(adm.Reason, reason) {
		reason = adm.Reason + "; " + reason
	}
	c.mu.RUnlock()
	if !known {
		return slurmerr.New(slurmerr.InvalidNodeName, "Invalid node name specified: %s", name)
	}
	c.logger.Error("draining node for a hardware failure", "node", name, "reason", reason)
	t := true
	_, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpNodeSet, NodeSet: &ctlstate.NodeSetCmd{Name: name, Drain: &t, Reason: reason}})
	c.Kick()
	return err
}

// Register records a node daemon's (re)registration and reconciles the jobs
// it reports with what the controller believes it runs.
func (c *Controller) Register(ctx context.Context, reg nodeproto.Register) (nodeproto.RegisterReply, error) {
	if reg.Dynamic != "" {
		if err := c.registerDynamic(ctx, reg.Name, reg.Dynamic); err != nil {
			return nodeproto.RegisterReply{}, fmt.Errorf("dynamic node %s: %w", reg.Name, err)
		}
	}
	now := c.now()
	c.mu.Lock()
	n := c.nodes[reg.Name]
	if n == nil {
		c.mu.Unlock()
		return nodeproto.RegisterReply{}, slurmerr.New(slurmerr.InvalidNodeName, "node %s is not in slurm.conf", reg.Name)
	}
	if c.dynamicNodeLocked(reg.Name) {
		// A dynamic node waits as FUTURE for its daemon, as slurmctld's.
		n.Future = false
	}
	n.Registered, n.Responding = true, true
	n.LastHeartbeat = now
	n.DaemonAddr = reg.Addr
	n.BootTime, n.SlurmdStart = reg.BootTime, reg.Started
	n.Version, n.Arch, n.OS = reg.Version, reg.Arch, reg.OS
	n.FreeMemMB = reg.FreeMemMB
	configured := configuredGPUs(n)
	if len(reg.GPUs) > 0 || len(n.GPUs) == 0 || configured > 0 {
		n.GPUs = n.GPUs[:0]
		for _, g := range reg.GPUs {
			n.GPUs = append(n.GPUs, node.GPU{Index: g.Index, Type: g.Type, Minor: g.Minor, File: g.File, UUID: g.UUID, Cores: g.Cores, Links: gres.ParseLinks(g.Links)})
		}
		c.partTRESMu.Lock()
		c.partTRES = nil
		c.partTRESMu.Unlock()
	}
	reported := map[job.ID]nodeproto.JobStatus{}
	for _, js := range reg.Jobs {
		reported[job.ID(js.JobID)] = js
	}
	var relaunch []job.ID
	var lost []*job.Job
	var done []nodeproto.JobDone
	var kill []uint32
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if j.BatchHost != reg.Name || j.Alloc == nil || !(j.State == job.Running || j.Completing) {
			continue
		}
		js, ok := reported[id]
		delete(reported, id)
		switch {
		case !ok && j.State == job.Running && !j.RequeueOnEnd:
			relaunch = append(relaunch, id)
		case !ok:
			lost = append(lost, shallowCopy(j))
		case js.Done != nil:
			done = append(done, *js.Done)
		case js.Lost:
			lost = append(lost, shallowCopy(j))
		}
	}
	for id, js := range reported {
		if js.Done != nil {
			// Finished jobs the controller no longer tracks: acknowledge.
			done = append(done, *js.Done)
			continue
		}
		kill = append(kill, uint32(id))
	}
	adm := c.st.Nodes[reg.Name]
	returnToService := adm != nil && adm.Down && adm.Reason == "Not responding" && c.cfg.ReturnToService > 0
	// A node with fewer GPUs than slurm.conf gives it is drained, as
	// slurmctld's validate_node_specs does.
	var lowGPUs string
	if reported := len(reg.GPUs); reported < configured && (adm == nil || !(adm.Drain || adm.Down)) {
		lowGPUs = fmt.Sprintf("gpu count reported lower than configured (%d < %d)", reported, configured)
	}
	c.mu.Unlock()

	if lowGPUs != "" {
		c.logger.Error("node registered with too few GPUs, draining it", "node", reg.Name, "reason", lowGPUs)
		t := true
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpNodeSet, NodeSet: &ctlstate.NodeSetCmd{Name: reg.Name, Drain: &t, Reason: lowGPUs}}); err != nil {
			return nodeproto.RegisterReply{}, err
		}
	}

	if returnToService {
		f := false
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpNodeSet, NodeSet: &ctlstate.NodeSetCmd{Name: reg.Name, Down: &f}}); err != nil {
			return nodeproto.RegisterReply{}, err
		}
	}
	for _, d := range done {
		if err := c.JobDone(ctx, d); err != nil && slurmerr.CodeOf(err) != slurmerr.InvalidJobID {
			return nodeproto.RegisterReply{}, err
		}
	}
	for _, j := range lost {
		cmd := &ctlstate.Command{Op: ctlstate.OpEnd, End: &ctlstate.EndCmd{JobID: j.ID, State: job.NodeFail}}
		if j.RequeueOnEnd {
			// Its processes are gone either way: requeue it as asked.
			cmd = &ctlstate.Command{Op: ctlstate.OpRequeue, Requeue: &ctlstate.RequeueCmd{JobID: j.ID, Hold: j.RequeueHold}}
		}
		if _, err := c.propose(ctx, cmd); err != nil {
			return nodeproto.RegisterReply{}, err
		}
	}
	for _, id := range relaunch {
		c.launch(id)
	}
	c.logger.Info("node registered", "node", reg.Name, "addr", reg.Addr, "gpus", len(reg.GPUs), "jobs", len(reg.Jobs))
	c.Kick()
	return nodeproto.RegisterReply{Kill: kill, HeartbeatEvery: c.heartbeatEvery()}, nil
}

func (c *Controller) heartbeatEvery() time.Duration {
	return min(max(c.cfg.SlurmdTimeout/3, 100*time.Millisecond), 30*time.Second)
}

// Heartbeat records a node daemon's ping: the node answers, and what it
// reports of its free memory and load is what sinfo and scontrol show. A
// node the controller does not hold registered (never, or set DOWN as not
// responding since) gets nodeproto.ErrUnregistered: its daemon must
// register again, so that the jobs it runs are reconciled first.
func (c *Controller) Heartbeat(hb nodeproto.Heartbeat) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.nodes[hb.Name]
	if n == nil || !n.Registered {
		return nodeproto.ErrUnregistered
	}
	c.observer().Heartbeat()
	n.LastHeartbeat = c.now()
	n.Responding = true
	n.FreeMemMB, n.CPULoad = hb.FreeMemMB, hb.Load
	return nil
}

// JobDone records the end of a batch job's processes. It is idempotent: a
// node daemon repeats the report until it is acknowledged.
func (c *Controller) JobDone(ctx context.Context, d nodeproto.JobDone) error {
	id := job.ID(d.JobID)
	c.mu.Lock()
	j := c.st.Jobs[id]
	if j == nil || j.Alloc == nil || !(j.State == job.Running || j.Completing) || d.Run != j.RestartCount {
		// Unknown, already ended, or the end of an earlier run of a job
		// requeued since: acknowledged, nothing to do.
		c.mu.Unlock()
		return nil
	}
	if batch := j.Alloc.Nodes[0].Node; d.Node != batch {
		// Only the batch host runs the script: another node's word on
		// it is acknowledged and ignored.
		c.mu.Unlock()
		c.logger.Warn("job end reported by a node that is not the batch host, ignored", "job", id, "node", d.Node, "batch_host", batch)
		return nil
	}
	requeue, hold := j.RequeueOnEnd, j.RequeueHold
	c.mu.Unlock()
	var cmd *ctlstate.Command
	if requeue {
		cmd = &ctlstate.Command{Op: ctlstate.OpRequeue, Requeue: &ctlstate.RequeueCmd{JobID: id, Hold: hold}}
	} else {
		st := job.Completed
		switch {
		case d.Kind == nodeproto.EndTimeout:
			st = job.Timeout
		case d.Kind == nodeproto.EndCancelled:
			st = job.Cancelled
		case d.Kind == nodeproto.EndFailed, d.ExitCode != 0, d.Signal != 0:
			st = job.Failed
		}
		cmd = &ctlstate.Command{Op: ctlstate.OpEnd, End: &ctlstate.EndCmd{JobID: id, State: st, ExitCode: d.ExitCode, Signal: d.Signal, Usage: d.Usage}}
	}
	if !d.EndTime.IsZero() {
		cmd.Time = d.EndTime
	}
	if _, err := c.propose(ctx, cmd); err != nil {
		return err
	}
	c.Kick()
	return nil
}

// NodeInfo is a node with its current usage, for listings.
type NodeInfo struct {
	Node       *node.Node
	Used       node.Alloc
	Completing bool
	Partitions []string
}

// Nodes lists every node in configuration order.
func (c *Controller) Nodes() []NodeInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	used := c.usageLocked()
	completing := c.completingLocked()
	out := make([]NodeInfo, 0, len(c.nodeOrder))
	for _, name := range c.nodeOrder {
		out = append(out, NodeInfo{Node: c.nodeViewLocked(name), Used: used[name], Completing: completing[name], Partitions: c.partitionsOfLocked(name)})
	}
	return out
}

// Node returns one node.
func (c *Controller) Node(name string) (NodeInfo, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.nodes[name] == nil {
		return NodeInfo{}, slurmerr.New(slurmerr.InvalidNodeName, "Failure to query node %s", name)
	}
	used := c.usageLocked()
	return NodeInfo{Node: c.nodeViewLocked(name), Used: used[name], Completing: c.completingLocked()[name], Partitions: c.partitionsOfLocked(name)}, nil
}

// LastNodeUpdate is when any node's durable state last changed.
func (c *Controller) LastNodeUpdate() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.st.LastNodeUpdate
}

func (c *Controller) completingLocked() map[string]bool {
	out := map[string]bool{}
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if j.Completing && j.Alloc != nil {
			for _, na := range j.Alloc.Nodes {
				out[na.Node] = true
			}
		}
	}
	return out
}

func (c *Controller) partitionsOfLocked(name string) []string {
	var out []string
	for _, p := range c.partOrder {
		if c.parts[p].HasNode(name) {
			out = append(out, p)
		}
	}
	return out
}

// NodeStateChange is an administrative request (scontrol update NodeName=).
type NodeStateChange int

// Node state changes.
const (
	NodeNoChange NodeStateChange = iota
	NodeDrain
	NodeResume
	NodeDown
	NodeIdle
	NodeUndrain
)

// UpdateNode drains, resumes or downs a node. Only privileged callers may;
// DRAIN and DOWN need a reason, as scontrol insists.
func (c *Controller) UpdateNode(ctx context.Context, who Identity, name string, change NodeStateChange, reason string) error {
	if !c.privileged(who) {
		return slurmerr.New(slurmerr.AccessDenied, "")
	}
	c.mu.RLock()
	known := c.nodes[name] != nil
	c.mu.RUnlock()
	if !known {
		return slurmerr.New(slurmerr.InvalidNodeName, "Invalid node name specified: %s", name)
	}
	t, f := true, false
	cmd := &ctlstate.NodeSetCmd{Name: name, Reason: reason, UID: who.UID}
	switch change {
	case NodeNoChange:
		return nil
	case NodeDrain:
		if reason == "" {
			return slurmerr.New(slurmerr.InvalidNodeState, "You must specify a reason when DOWNING or DRAINING a node. Request denied")
		}
		cmd.Drain = &t
	case NodeDown:
		if reason == "" {
			return slurmerr.New(slurmerr.InvalidNodeState, "You must specify a reason when DOWNING or DRAINING a node. Request denied")
		}
		cmd.Down = &t
	case NodeResume, NodeIdle:
		cmd.Drain, cmd.Down = &f, &f
	case NodeUndrain:
		cmd.Drain = &f
	}
	res, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpNodeSet, NodeSet: cmd})
	if err != nil {
		return err
	}
	for _, k := range res.Kill {
		c.killBatch(k)
	}
	c.Kick()
	return nil
}

// PartitionInfo is a partition with derived counts.
type PartitionInfo struct {
	Partition  *partition.Partition
	TotalCPUs  uint32
	TotalMemMB uint64
	TotalGPUs  int
	Nodes      int
}

// Partitions lists partitions in configuration order.
func (c *Controller) Partitions() []PartitionInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]PartitionInfo, 0, len(c.partOrder))
	for _, name := range c.partOrder {
		out = append(out, c.partitionInfoLocked(name))
	}
	return out
}

// Partition returns one partition.
func (c *Controller) Partition(name string) (PartitionInfo, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.parts[name] == nil {
		return PartitionInfo{}, slurmerr.New(slurmerr.InvalidPartitionName, "Unable to find partition %s", name)
	}
	return c.partitionInfoLocked(name), nil
}

// partTRESLocked is a partition's TRES summed over its nodes, which
// multifactor's TRES factors are relative to; kept until a node's GPUs
// change (registration). The caller holds c.mu (reading is enough: the
// cache has its own lock).
func (c *Controller) partTRESLocked(name string) job.TRES {
	c.partTRESMu.Lock()
	defer c.partTRESMu.Unlock()
	if t, ok := c.partTRES[name]; ok {
		return t
	}
	if c.partTRES == nil {
		c.partTRES = map[string]job.TRES{}
	}
	var t job.TRES
	if p := c.parts[name]; p != nil {
		for _, n := range p.Nodes {
			if nd := c.nodes[n]; nd != nil {
				t.CPUs += nd.CPUs
				t.MemMB += nd.RealMemory
				t.GPUs += uint64(len(nd.GPUs))
				t.Nodes++
			}
		}
	}
	c.partTRES[name] = t
	return t
}

func (c *Controller) partitionInfoLocked(name string) PartitionInfo {
	p := *c.parts[name]
	p.Nodes = slices.Clone(p.Nodes)
	info := PartitionInfo{Partition: &p, Nodes: len(p.Nodes)}
	for _, n := range p.Nodes {
		if nd := c.nodes[n]; nd != nil {
			info.TotalCPUs += nd.CPUs
			info.TotalMemMB += nd.RealMemory
			info.TotalGPUs += len(nd.GPUs)
		}
	}
	return info
}
