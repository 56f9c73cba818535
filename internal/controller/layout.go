package controller

import (
	"slices"
	"sort"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/partition"
)

// syncLayoutLocked builds the node table and the partitions from
// slurm.conf and what the state changed at run time: dynamic nodes after
// the configured ones, partitions made or changed at run time in place of
// slurm.conf's (new ones after them, by name), deleted ones left out. It
// runs when the controller opens and after every command or restore that
// changes any of it. What a node daemon reported of a node that stays is
// kept.
func (c *Controller) syncLayoutLocked() {
	configured := make(map[string]bool, len(c.cfg.Nodes))
	for i := range c.cfg.Nodes {
		n := c.cfg.Nodes[i]
		configured[n.Name] = true
		if c.nodes[n.Name] == nil {
			c.nodes[n.Name] = &n
		}
	}
	for name := range c.nodes {
		if !configured[name] && c.st.DynNodes[name] == nil {
			delete(c.nodes, name)
		}
	}
	dyn := make([]string, 0, len(c.st.DynNodes))
	for name, def := range c.st.DynNodes {
		if configured[name] {
			continue // slurm.conf took the name since; its line wins
		}
		dyn = append(dyn, name)
		if c.nodes[name] == nil {
			n := *def
			n.GPUs = slices.Clone(def.GPUs)
			n.LastHeartbeat = c.now()
			c.nodes[name] = &n
		}
	}
	hostlist.Sort(dyn)
	c.nodeOrder = c.nodeOrder[:0]
	for _, n := range c.cfg.Nodes {
		c.nodeOrder = append(c.nodeOrder, n.Name)
	}
	c.nodeOrder = append(c.nodeOrder, dyn...)

	var records []partition.Partition
	seen := map[string]bool{}
	for _, p := range c.cfg.Partitions {
		seen[p.Name] = true
		if c.st.PartsGone[p.Name] && c.st.Parts[p.Name] == nil {
			continue
		}
		if r := c.st.Parts[p.Name]; r != nil {
			p = *r
		}
		records = append(records, p)
	}
	var added []string
	for name := range c.st.Parts {
		if !seen[name] {
			added = append(added, name)
		}
	}
	sort.Strings(added)
	for _, name := range added {
		records = append(records, *c.st.Parts[name])
	}
	c.parts = make(map[string]*partition.Partition, len(records))
	c.partMaxCPUs = make(map[string]uint32, len(records))
	c.partOrder = c.partOrder[:0]
	c.defPart = ""
	for i := range records {
		p := &records[i]
		p.Nodes = c.partitionNodesLocked(p, dyn)
		c.parts[p.Name] = p
		for _, name := range p.Nodes {
			c.partMaxCPUs[p.Name] = max(c.partMaxCPUs[p.Name], c.nodes[name].CPUs)
		}
		c.partOrder = append(c.partOrder, p.Name)
		if p.Default && c.defPart == "" {
			c.defPart = p.Name
		}
	}
	c.partTRESMu.Lock()
	c.partTRES = nil
	c.partTRESMu.Unlock()
}

// partitionNodesLocked is a partition's node list: ALL is every node,
// dynamic ones included; otherwise the nodes it names, then the dynamic
// nodes with a Feature its NodeSets take.
func (c *Controller) partitionNodesLocked(p *partition.Partition, dyn []string) []string {
	if p.AllNodes {
		return slices.Clone(c.nodeOrder)
	}
	nodes := make([]string, 0, len(p.Nodes))
	for _, name := range p.Nodes {
		if c.nodes[name] != nil && !slices.Contains(dyn, name) {
			nodes = append(nodes, name)
		}
	}
	for _, name := range dyn {
		n := c.nodes[name]
		if slices.Contains(p.Nodes, name) || slices.ContainsFunc(p.NodeFeatures, func(f string) bool { return slices.Contains(n.Features, f) }) {
			nodes = append(nodes, name)
		}
	}
	return nodes
}
