package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctlstate"
)

// partHelp are the help texts slurmctld words differently for
// partitions.
var partHelp = map[string]string{
	"jobs":           "Number of jobs in this partition",
	"jobs_finished":  "Number of jobs in Finished",
	"jobs_revoked":   "Number of revoked jobs",
	"jobs_signaling": "Number of jobs in Signaling state",
	"jobs_started":   "Number of jobs started",
}

// partExtra are the partition gauges beside the job and node counts.
var partExtra = []struct {
	name, help string
	value      func(p *partView) float64
}{
	{"slurm_partition_jobs_max_job_nodes", "Max of the max_nodes required of all pending jobs in that partition", func(p *partView) float64 { return float64(p.jobs.MaxJobNodes) }},
	{"slurm_partition_jobs_max_job_nodes_nohold", "Max of the max_nodes required of all pending jobs in that partition excluding Held jobs", func(p *partView) float64 { return float64(p.jobs.MaxJobNodesNoHold) }},
	{"slurm_partition_jobs_min_job_nodes", "Max of the min_nodes required of all pending jobs in that partition", func(p *partView) float64 { return float64(p.jobs.MinJobNodes) }},
	{"slurm_partition_jobs_min_job_nodes_nohold", "Max of the min_nodes required of all pending jobs in that partition excluding Held jobs", func(p *partView) float64 { return float64(p.jobs.MinJobNodesNoHold) }},
	// Drover keeps no per-job PartitionNodeLimit wait count: 0.
	{"slurm_partition_jobs_wait_part_node_limit", "Jobs wait partition node limit", func(*partView) float64 { return 0 }},
	{"slurm_partition_nodes_cpus_efctv", "Number of effective CPUs on all nodes, excludes CoreSpec", func(p *partView) float64 { return float64(p.cpus) }},
	{"slurm_partition_nodes_cpus_idle", "Number of idle CPUs on all nodes", func(p *partView) float64 { return float64(p.cpusIdle) }},
	{"slurm_partition_nodes_cpus_alloc", "Number of allocated cpus", func(p *partView) float64 { return float64(p.cpusAlloc) }},
	// Memory in MB, as slurmctld reports it.
	{"slurm_partition_nodes_mem_alloc", "Amount of allocated memory of all nodes", func(p *partView) float64 { return float64(p.memAlloc) }},
	{"slurm_partition_nodes_mem_avail", "Amount of available memory of all nodes", func(p *partView) float64 { return float64(p.memTotal) }},
	{"slurm_partition_nodes_mem_free", "Amount of free memory in all nodes", func(p *partView) float64 { return float64(p.memFree) }},
	{"slurm_partition_nodes_mem_tot", "Total amount of memory of all nodes", func(p *partView) float64 { return float64(p.memTotal) }},
	{"slurm_partition_cpus", "Partition total cpus", func(p *partView) float64 { return float64(p.cpus) }},
	{"slurm_partition_nodes", "Partition total nodes", func(p *partView) float64 { return float64(p.nodes) }},
	// Drover's own: slurmctld's openmetrics plugin reports no GRES.
	{"drover_partition_gpus", "GPUs the partition's nodes offer to jobs", func(p *partView) float64 { return float64(p.gpus) }},
	{"drover_partition_gpus_alloc", "GPUs of the partition's nodes held by running jobs", func(p *partView) float64 { return float64(p.gpusAlloc) }},
}

// partView is one partition's sums over its nodes and its jobs.
type partView struct {
	jobs                        ctlstate.PartitionJobs
	counts                      nodeCounts
	nodes                       int
	cpus, cpusAlloc, cpusIdle   uint64
	memAlloc, memFree, memTotal uint64
	gpus, gpusAlloc             uint64
}

// partitionsCollector is /metrics/partitions.
type partitionsCollector struct {
	src    func() Source
	total  *prometheus.Desc
	jobs   jobSet
	extra  []*prometheus.Desc
	counts []*prometheus.Desc
}

func newPartitionsCollector(src func() Source) *partitionsCollector {
	c := &partitionsCollector{src: src, total: prometheus.NewDesc("slurm_partitions", "Total number of partitions", nil, nil),
		jobs: newJobSet("slurm_partition_", "partition", ctlstate.CountLive, partHelp)}
	for _, m := range partExtra {
		c.extra = append(c.extra, prometheus.NewDesc(m.name, m.help, []string{"partition"}, nil))
	}
	for _, m := range nodeMetrics {
		c.counts = append(c.counts, prometheus.NewDesc("slurm_partition_"+m.partName, m.partHelp, []string{"partition"}, nil))
	}
	return c
}

func (c *partitionsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.total
	for _, d := range c.jobs.descs {
		ch <- d
	}
	for _, d := range c.extra {
		ch <- d
	}
	for _, d := range c.counts {
		ch <- d
	}
}

func (c *partitionsCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.src()
	if src == nil {
		return
	}
	v := src.Metrics()
	nodes := make(map[string]*controller.NodeMetrics, len(v.Nodes))
	for i := range v.Nodes {
		nodes[v.Nodes[i].Name] = &v.Nodes[i]
	}
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, float64(len(v.Partitions)))
	for _, p := range v.Partitions {
		pv := partView{jobs: v.Jobs.ByPartition[p.Name]}
		for _, name := range p.Nodes {
			n := nodes[name]
			if n == nil {
				continue
			}
			pv.nodes++
			pv.cpus += uint64(n.CPUs)
			pv.cpusAlloc += uint64(n.Use.CPUs)
			pv.cpusIdle += uint64(idleCPUs(n))
			pv.memAlloc += n.Use.MemMB
			pv.memFree += n.FreeMemMB
			pv.memTotal += n.MemMB
			pv.gpus += uint64(n.GPUs)
			pv.gpusAlloc += uint64(n.Use.GPUs)
			pv.counts.countNode(n)
		}
		c.jobs.collect(ch, &pv.jobs.Counts, p.Name)
		for i, m := range partExtra {
			ch <- prometheus.MustNewConstMetric(c.extra[i], prometheus.GaugeValue, m.value(&pv), p.Name)
		}
		for i, m := range nodeMetrics {
			ch <- prometheus.MustNewConstMetric(c.counts[i], prometheus.GaugeValue, float64(pv.counts[m.count]), p.Name)
		}
	}
}
