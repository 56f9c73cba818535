// Package metrics serves the controller's and the node daemon's
// Prometheus metrics: Slurm 25.11's metrics/openmetrics sets under
// /metrics/jobs, /metrics/nodes, /metrics/partitions, /metrics/scheduler
// and /metrics/jobs-users-accts, with slurmctld's names, help and labels,
// and Drover's own under a drover_ prefix.
//
// The Slurm sets are read from the controller's running counts
// (controller.MetricsView), so a scrape walks nodes, partitions, users
// and accounts but never the jobs: its cost stays flat with 100,000 jobs
// in the queue.
package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctlstate"
)

// Source is what the Slurm sets read: the controller serving now.
type Source interface {
	Metrics() controller.MetricsView
	SchedulerStats() controller.SchedulerStats
}

// none marks a count Drover has no such state for (federation,
// burst buffers, power saving...): slurmctld reports it, and so does
// Drover, as 0.
const none ctlstate.JobCount = -1

// jobMetric is one of slurmctld's job counts: the name after the set's
// prefix, the count it reads and slurmctld's help text.
type jobMetric struct {
	name  string
	count ctlstate.JobCount
	help  string
}

// jobMetrics are slurmctld's job counts in openmetrics.c's order. The
// "jobs" count itself differs by set (jobsCount).
var jobMetrics = []jobMetric{
	{"jobs_bootfail", ctlstate.CountBootFail, "Number of jobs in BootFail state"},
	{"jobs_cancelled", ctlstate.CountCancelled, "Number of jobs in Cancelled state"},
	{"jobs_completed", ctlstate.CountCompleted, "Number of jobs in Completed state"},
	{"jobs_completing", ctlstate.CountCompleting, "Number of jobs in Completing state"},
	{"jobs_configuring", none, "Number of jobs in Configuring state"},
	{"jobs_cpus_alloc", ctlstate.CountCPUsAlloc, "Total number of Cpus allocated by jobs"},
	{"jobs_deadline", ctlstate.CountDeadline, "Number of jobs in Deadline state"},
	{"jobs_expediting", none, "Number of jobs in Expediting state"},
	{"jobs_failed", ctlstate.CountFailed, "Number of jobs in Failed state"},
	{"jobs_fed_requeued", none, "Number of jobs requeued in a federation"},
	{"jobs_finished", ctlstate.CountFinished, "Number of finished jobs"},
	{"jobs_hold", ctlstate.CountHold, "Number of jobs in Hold state"},
	{"jobs", ctlstate.CountJobs, "Total number of jobs"},
	// In MB, as slurmctld reports it under this name.
	{"jobs_memory_alloc", ctlstate.CountMemAllocMB, "Total memory bytes allocated by jobs"},
	{"jobs_node_failed", ctlstate.CountNodeFail, "Number of jobs in Node Failed state"},
	{"jobs_nodes_alloc", ctlstate.CountNodesAlloc, "Total number of nodes allocated by jobs"},
	{"jobs_outofmemory", ctlstate.CountOutOfMemory, "Number of jobs in Out of Memory state"},
	{"jobs_pending", ctlstate.CountPending, "Number of jobs in Pending state"},
	{"jobs_powerup_node", none, "Number of jobs in PowerUp Node state"},
	{"jobs_preempted", ctlstate.CountPreempted, "Number of jobs in Preempted state"},
	{"jobs_requeued", none, "Number of jobs in Requeued state"},
	{"jobs_resizing", none, "Number of jobs in Resizing state"},
	{"jobs_revoked", none, "Number of jobs in Revoked state"},
	{"jobs_running", ctlstate.CountRunning, "Number of jobs in Running state"},
	{"jobs_signaling", none, "Number of jobs being signaled"},
	{"jobs_stageout", none, "Number of jobs in StageOut state"},
	{"jobs_started", ctlstate.CountStarted, "Number of started jobs"},
	{"jobs_suspended", ctlstate.CountSuspended, "Number of jobs in Suspended state"},
	{"jobs_timeout", ctlstate.CountTimeout, "Number of jobs in Timeout state"},
}

// jobSet is one set of job counts: slurm_jobs_*, slurm_partition_jobs_*
// or slurm_user_jobs_* and slurm_account_jobs_*, with the label that
// names whose counts they are ("" for the totals).
type jobSet struct {
	descs []*prometheus.Desc
	// jobs is what the set's "jobs" counts: every record, an array's
	// tasks each (totals), records not completed (partitions), or
	// records (users and accounts), as slurmctld's statistics.c counts.
	jobs ctlstate.JobCount
}

func newJobSet(prefix, label string, jobs ctlstate.JobCount, help map[string]string) jobSet {
	s := jobSet{jobs: jobs}
	var labels []string
	if label != "" {
		labels = []string{label}
	}
	for _, m := range jobMetrics {
		h := m.help
		if o, ok := help[m.name]; ok {
			h = o
		}
		s.descs = append(s.descs, prometheus.NewDesc(prefix+m.name, h, labels, nil))
	}
	return s
}

func (s jobSet) collect(ch chan<- prometheus.Metric, c *ctlstate.JobCounts, labels ...string) {
	for i, m := range jobMetrics {
		n := m.count
		if m.name == "jobs" {
			n = s.jobs
		}
		var v float64
		if n != none {
			v = float64(c[n])
		}
		ch <- prometheus.MustNewConstMetric(s.descs[i], prometheus.GaugeValue, v, labels...)
	}
}

// jobsCollector is /metrics/jobs.
type jobsCollector struct {
	src func() Source
	set jobSet
}

func newJobsCollector(src func() Source) *jobsCollector {
	return &jobsCollector{src: src, set: newJobSet("slurm_", "", ctlstate.CountJobs, nil)}
}

func (c *jobsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.set.descs {
		ch <- d
	}
}

func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.src()
	if src == nil {
		return
	}
	v := src.Metrics()
	c.set.collect(ch, &v.Jobs.Total)
}

// usersAcctsCollector is /metrics/jobs-users-accts: every user's and
// every account's job counts. Its cardinality is that of the users and
// accounts with jobs in the controller's memory, as slurmctld warns.
type usersAcctsCollector struct {
	src          func() Source
	users, accts jobSet
}

// uaHelp are the help texts slurmctld words differently for users and
// accounts.
var uaHelp = map[string]string{"jobs_revoked": "Number of jobs revoked"}

func newUsersAcctsCollector(src func() Source) *usersAcctsCollector {
	return &usersAcctsCollector{src: src,
		users: newJobSet("slurm_user_", "username", ctlstate.CountRecords, uaHelp),
		accts: newJobSet("slurm_account_", "account", ctlstate.CountRecords, uaHelp)}
}

func (c *usersAcctsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range slices.Concat(c.users.descs, c.accts.descs) {
		ch <- d
	}
}

func (c *usersAcctsCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.src()
	if src == nil {
		return
	}
	v := src.Metrics()
	for name, counts := range v.Jobs.ByUser {
		c.users.collect(ch, &counts, name)
	}
	for name, counts := range v.Jobs.ByAccount {
		c.accts.collect(ch, &counts, name)
	}
}
