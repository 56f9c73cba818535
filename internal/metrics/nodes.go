package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/droverhq/drover/internal/controller"
)

// nodeCount names one of the node counts slurmctld keeps by state.
type nodeCount int

const (
	nodesAlloc nodeCount = iota
	nodesBlocked
	nodesCompleting
	nodesCloud
	nodesDown
	nodesDrain
	nodesDrained
	nodesDraining
	nodesDynFuture
	nodesDynNormal
	nodesExternal
	nodesFail
	nodesFuture
	nodesIdle
	nodesInvalidReg
	nodesMaint
	nodesMixed
	nodesNoResp
	nodesPlanned
	nodesPowerDown
	nodesPowerUp
	nodesPoweredDown
	nodesPoweringDown
	nodesPoweringUp
	nodesRebootIssued
	nodesRebootReq
	nodesResv
	nodesUnknown
	numNodeCounts
)

type nodeCounts [numNodeCounts]uint64

// countNode adds one node to the counts as statistics.c classes it: one
// base state (FUTURE, DOWN, MIXED, ALLOCATED, IDLE or UNKNOWN) and any
// derived ones. A drained node is one with DRAIN and no jobs; a
// draining one still runs or completes jobs, and counts as DRAIN only
// when it is not draining.
func (c *nodeCounts) countNode(n *controller.NodeMetrics) {
	base := n.Flags[0]
	switch base {
	case "FUTURE":
		c[nodesFuture]++
	case "DOWN":
		c[nodesDown]++
	case "MIXED":
		c[nodesMixed]++
	case "ALLOCATED":
		c[nodesAlloc]++
	case "IDLE":
		c[nodesIdle]++
	case "UNKNOWN":
		c[nodesUnknown]++
	}
	completing := slices.Contains(n.Flags, "COMPLETING")
	if completing {
		c[nodesCompleting]++
	}
	if slices.Contains(n.Flags, "DRAIN") {
		if base == "MIXED" || base == "ALLOCATED" || completing {
			c[nodesDraining]++
		} else {
			c[nodesDrain]++
			c[nodesDrained]++
		}
	}
	if slices.Contains(n.Flags, "NOT_RESPONDING") {
		c[nodesNoResp]++
	}
	if n.Dynamic {
		c[nodesDynNormal]++
	}
}

// nodeMetric is one node count: its name after the set's prefix and
// slurmctld's help, for the totals and for partitions.
type nodeMetric struct {
	count              nodeCount
	name, help         string
	partName, partHelp string
}

// nodeMetrics are slurmctld's node counts in openmetrics.c's order.
// Drover has no cloud, external, power saving, reboot, maintenance or
// planned states: those count 0, as they do on a cluster without them.
var nodeMetrics = []nodeMetric{
	{nodesAlloc, "nodes_alloc", "Number of nodes in Allocated state", "nodes_alloc", "Nodes allocated"},
	{nodesBlocked, "nodes_blocked", "Number of nodes in Blocked state", "nodes_blocked", "Nodes blocked"},
	{nodesCompleting, "nodes_completing", "Number of nodes with Completing flag", "nodes_cg", "Nodes in completing state"},
	{nodesCloud, "nodes_cloud", "Number of Cloud nodes", "nodes_cloud", "Cloud nodes"},
	{nodesDown, "nodes_down", "Number of nodes in Down state", "nodes_down", "Nodes in Down state"},
	{nodesDrain, "nodes_drain", "Number of nodes with Drain flag", "nodes_drain", "Nodes in Drain state"},
	{nodesDrained, "nodes_drained", "Number of drained nodes", "nodes_drained", "Nodes in Drained state"},
	{nodesDraining, "nodes_draining", "Number of nodes in draining condition (Drain state with active jobs)", "nodes_draining", "Number of nodes in draining condition (Drain state with active jobs)"},
	{nodesDynFuture, "nodes_dyn_future", "Number of future dynamic nodes", "nodes_dyn_future", "Dynamic nodes in Future state"},
	{nodesDynNormal, "nodes_dyn_normal", "Number of dynamic nodes", "nodes_dyn_normal", "Dynamic nodes"},
	{nodesExternal, "nodes_external", "Number of external nodes", "nodes_external", "External nodes"},
	{nodesFail, "nodes_fail", "Number of nodes with Fail flag", "nodes_fail", "Nodes in Fail state"},
	{nodesFuture, "nodes_future", "Number of nodes in Future state", "nodes_future", "Nodes in Future state"},
	{nodesIdle, "nodes_idle", "Number of nodes in Idle state", "nodes_idle", "Nodes in Idle state"},
	{nodesInvalidReg, "nodes_invalid_reg", "Number of nodes with Invalid Registration flag", "nodes_invalid_reg", "Number of nodes with Invalid Registration flag"},
	{nodesMaint, "nodes_maint", "Number of nodes with Maintenance flag", "nodes_maint", "Nodes in maintenance state"},
	{nodesMixed, "nodes_mixed", "Number of nodes in Mixed state", "nodes_mixed", "Nodes in Mixed state"},
	{nodesNoResp, "nodes_noresp", "Number of nodes with Not Responding flag", "nodes_no_resp", "Nodes in Not Responding state"},
	{nodesPlanned, "nodes_planned", "Number of nodes with Planned flag", "nodes_planned", "Nodes in Planned state"},
	{nodesPowerDown, "nodes_power_down", "Number of nodes marked to be powered down", "nodes_power_down", "Nodes marked to Power Down"},
	{nodesPowerUp, "nodes_power_up", "Number of nodes marked to be powered up", "nodes_power_up", "Nodes marked to Power Up"},
	{nodesPoweredDown, "nodes_powered_down", "Number of nodes powered down", "nodes_powered_down", "Powered down nodes"},
	{nodesPoweringDown, "", "", "nodes_powering_down", "Powering down nodes"},
	{nodesPoweringUp, "nodes_powering_up", "Number of nodes powering up", "nodes_powering_up", "Powering up nodes"},
	{nodesRebootIssued, "nodes_reboot_issued", "Number of nodes with Reboot Issued flag", "nodes_reboot_issued", "Nodes which initiated reboot"},
	{nodesRebootReq, "nodes_reboot_req", "Number of nodes with Reboot Requested flag", "nodes_reboot_requested", "Nodes with Reboot Requested flag"},
	{nodesResv, "nodes_resv", "Number of nodes with Reserved flag", "nodes_resv", "Nodes with Reserved flag"},
	{nodesUnknown, "nodes_unknown", "Number of nodes in Unknown state", "nodes_unknown", "Nodes in Unknown state"},
}

// perNode are slurmctld's per-node gauges, labelled node. Memory is in
// MB under the _bytes names, as slurmctld reports real_memory.
var perNode = []struct {
	name, help string
	value      func(n *controller.NodeMetrics) float64
}{
	{"slurm_node_cpus", "Total number of cpus in the node", func(n *controller.NodeMetrics) float64 { return float64(n.CPUs) }},
	{"slurm_node_cpus_alloc", "Allocated cpus in the node", func(n *controller.NodeMetrics) float64 { return float64(n.Use.CPUs) }},
	{"slurm_node_cpus_effective", "CPUs allocatable to jobs not reserved for system usage", func(n *controller.NodeMetrics) float64 { return float64(n.CPUs) }},
	{"slurm_node_cpus_idle", "Idle cpus in the node", func(n *controller.NodeMetrics) float64 { return float64(idleCPUs(n)) }},
	{"slurm_node_memory_alloc_bytes", "Bytes allocated to jobs in the node", func(n *controller.NodeMetrics) float64 { return float64(n.Use.MemMB) }},
	{"slurm_node_memory_effective_bytes", "Memory allocatable to jobs not reserved for system usage", func(n *controller.NodeMetrics) float64 { return float64(n.MemMB) }},
	{"slurm_node_memory_free_bytes", "Free memory in bytes of the node", func(n *controller.NodeMetrics) float64 { return float64(n.FreeMemMB) }},
	{"slurm_node_memory_bytes", "Total memory in bytes of the node", func(n *controller.NodeMetrics) float64 { return float64(n.MemMB) }},
}

// nodeGPUs are Drover's per-node GPU gauges, served with the node set
// (and refused with it under PrivateData): slurmctld's openmetrics
// plugin reports no GRES.
var nodeGPUs = []struct {
	name, help string
	value      func(n *controller.NodeMetrics) float64
}{
	{"drover_node_gpus", "GPUs the node offers to jobs", func(n *controller.NodeMetrics) float64 { return float64(n.GPUs) }},
	{"drover_node_gpus_alloc", "GPUs of the node held by running jobs", func(n *controller.NodeMetrics) float64 { return float64(n.Use.GPUs) }},
}

func idleCPUs(n *controller.NodeMetrics) uint32 {
	if n.Use.CPUs >= n.CPUs {
		return 0
	}
	return n.CPUs - n.Use.CPUs
}

// nodesCollector is /metrics/nodes.
type nodesCollector struct {
	src    func() Source
	node   []*prometheus.Desc
	total  *prometheus.Desc
	counts []*prometheus.Desc
}

func newNodesCollector(src func() Source) *nodesCollector {
	c := &nodesCollector{src: src, total: prometheus.NewDesc("slurm_nodes", "Total number of nodes", nil, nil)}
	for _, m := range perNode {
		c.node = append(c.node, prometheus.NewDesc(m.name, m.help, []string{"node"}, nil))
	}
	for _, m := range nodeGPUs {
		c.node = append(c.node, prometheus.NewDesc(m.name, m.help, []string{"node"}, nil))
	}
	for _, m := range nodeMetrics {
		if m.name == "" {
			c.counts = append(c.counts, nil)
			continue
		}
		c.counts = append(c.counts, prometheus.NewDesc("slurm_"+m.name, m.help, nil, nil))
	}
	return c
}

func (c *nodesCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.total
	for _, d := range slices.Concat(c.node, c.counts) {
		if d != nil {
			ch <- d
		}
	}
}

func (c *nodesCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.src()
	if src == nil {
		return
	}
	v := src.Metrics()
	var counts nodeCounts
	for i := range v.Nodes {
		n := &v.Nodes[i]
		for j, m := range perNode {
			ch <- prometheus.MustNewConstMetric(c.node[j], prometheus.GaugeValue, m.value(n), n.Name)
		}
		for j, m := range nodeGPUs {
			ch <- prometheus.MustNewConstMetric(c.node[len(perNode)+j], prometheus.GaugeValue, m.value(n), n.Name)
		}
		counts.countNode(n)
	}
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, float64(len(v.Nodes)))
	for i, m := range nodeMetrics {
		if c.counts[i] != nil {
			ch <- prometheus.MustNewConstMetric(c.counts[i], prometheus.GaugeValue, float64(counts[m.count]))
		}
	}
}
