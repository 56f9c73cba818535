package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/droverhq/drover/internal/controller"
)

type schedStats = controller.SchedulerStats

func zero(*schedStats) float64 { return 0 }

func mean(sum, n uint64) float64 {
	if n == 0 {
		return 0
	}
	return float64(sum / n)
}

func unixOrZero(s *schedStats, t func(*schedStats) int64) float64 {
	if v := t(s); v > 0 {
		return float64(v)
	}
	return 0
}

// schedMetrics are slurmctld's scheduler gauges in openmetrics.c's
// order, read from the same counters sdiag reports (SchedulerStats).
// Times are in microseconds, timestamps in Unix seconds, as slurmctld
// has them. What Drover does not measure (agent threads and queues,
// backfill depth and table size, exit reasons, RPC latency) is 0.
var schedMetrics = []struct {
	name, help string
	value      func(s *schedStats) float64
}{
	{"slurm_agent_cnt", "Number of agent threads", zero},
	{"slurm_agent_queue_size", "Outgoing RPC retry queue length", zero},
	{"slurm_agent_thread_cnt", "Total active agent-created threads", zero},
	{"slurm_bf_depth_mean", "Mean backfill cycle depth", zero},
	{"slurm_bf_mean_cycle", "Mean backfill cycle time", func(s *schedStats) float64 { return mean(s.BackfillTotalMicros, s.BackfillCycles) }},
	{"slurm_bf_mean_table_sz", "Mean backfill table size", zero},
	{"slurm_bf_queue_len_mean", "Mean backfill queue length", zero},
	{"slurm_bf_try_depth_mean", "Mean depth attempts in backfill", zero},
	{"slurm_backfilled_het_jobs", "Heterogeneous components backfilled", zero},
	{"slurm_backfilled_jobs", "Total backfilled jobs since reset", func(s *schedStats) float64 { return float64(s.Backfilled) }},
	{"slurm_bf_active", "Backfill scheduler active jobs", zero},
	{"slurm_bf_cycle_cnt", "Backfill cycle count", func(s *schedStats) float64 { return float64(s.BackfillCycles) }},
	{"slurm_bf_cycle_last", "Last backfill cycle time", func(s *schedStats) float64 { return float64(s.BackfillLastMicros) }},
	{"slurm_bf_cycle_max", "Max backfill cycle time", func(s *schedStats) float64 { return float64(s.BackfillMaxMicros) }},
	{"slurm_bf_cycle_tot", "Sum of backfill cycle times", func(s *schedStats) float64 { return float64(s.BackfillTotalMicros) }},
	{"slurm_bf_depth_tot", "Sum of backfill job depths", zero},
	{"slurm_bf_depth_try_tot", "Sum of backfill depth attempts", zero},
	{"slurm_bf_last_depth", "Last backfill depth", zero},
	{"slurm_bf_last_depth_try", "Last backfill depth attempts", zero},
	{"slurm_bf_queue_len", "Backfill queue length", zero},
	{"slurm_bf_queue_len_tot", "Sum of backfill queue lengths", zero},
	{"slurm_bf_table_size", "Backfill table size", zero},
	{"slurm_bf_table_size_tot", "Sum of backfill table sizes", zero},
	{"slurm_bf_when_last_cycle", "Timestamp of last backfill cycle", func(s *schedStats) float64 {
		return unixOrZero(s, func(s *schedStats) int64 { return s.LastBackfill.Unix() })
	}},
	{"slurm_sdiag_jobs_canceled", "Jobs canceled since reset", func(s *schedStats) float64 { return float64(s.Cancelled) }},
	{"slurm_sdiag_jobs_completed", "Jobs completed since reset", func(s *schedStats) float64 { return float64(s.Completed) }},
	{"slurm_sdiag_jobs_failed", "Jobs failed since reset", func(s *schedStats) float64 { return float64(s.Failed) }},
	{"slurm_sdiag_jobs_pending", "Jobs pending at timestamp", func(s *schedStats) float64 { return float64(s.Pending) }},
	{"slurm_sdiag_jobs_running", "Jobs running at timestamp", func(s *schedStats) float64 { return float64(s.Running) }},
	{"slurm_sdiag_jobs_started", "Jobs started since reset", func(s *schedStats) float64 { return float64(s.Started) }},
	{"slurm_sdiag_jobs_submitted", "Jobs submitted since reset", func(s *schedStats) float64 { return float64(s.Submitted) }},
	{"slurm_sdiag_job_states_ts", "Job states timestamp", func(s *schedStats) float64 { return float64(s.Time.Unix()) }},
	{"slurm_last_backfilled_jobs", "Backfilled jobs since last cycle", zero},
	{"slurm_sdiag_latency", "Measurement latency", zero},
	{"slurm_schedule_cycle_cnt", "Scheduling cycle count", func(s *schedStats) float64 { return float64(s.Cycles) }},
	{"slurm_schedule_cycle_depth", "Processed jobs depth total", zero},
	{"slurm_schedule_cycle_last", "Last scheduling cycle time", func(s *schedStats) float64 { return float64(s.LastCycleMicros) }},
	{"slurm_schedule_cycle_max", "Max scheduling cycle time", func(s *schedStats) float64 { return float64(s.MaxCycleMicros) }},
	{"slurm_schedule_cycle_tot", "Sum of scheduling cycle times", func(s *schedStats) float64 { return float64(s.TotalCycleMicros) }},
	{"slurm_schedule_queue_len", "Jobs pending queue length", func(s *schedStats) float64 { return float64(s.Pending) }},
	{"slurm_sched_exit_end", "End of job queue", zero},
	{"slurm_sched_exit_max_depth", "Hit default_queue_depth", zero},
	{"slurm_sched_exit_max_job_start", "Hit sched_max_job_start", zero},
	{"slurm_sched_exit_lic", "Blocked on licenses", zero},
	{"slurm_sched_exit_rpc_cnt", "Hit max_rpc_cnt", zero},
	{"slurm_sched_exit_timeout", "Timeout (max_sched_time)", zero},
	{"slurm_bf_exit_end", "End of job queue", zero},
	{"slurm_bf_exit_max_job_start", "Hit bf_max_job_start", zero},
	{"slurm_bf_exit_max_job_test", "Hit bf_max_job_test", zero},
	{"slurm_bf_exit_state_changed", "System state changed", zero},
	{"slurm_bf_exit_table_limit", "Hit table size limit (bf_node_space_size)", zero},
	{"slurm_bf_exit_timeout", "Timeout (bf_max_time)", zero},
	{"slurm_sched_mean_cycle", "Mean scheduling cycle time", func(s *schedStats) float64 { return mean(s.TotalCycleMicros, s.Cycles) }},
	{"slurm_sched_mean_depth_cycle", "Mean depth of scheduling cycles", zero},
	{"slurm_server_thread_cnt", "Active slurmctld threads count", zero},
	{"slurm_slurmdbd_queue_size", "Queued messages to SlurmDBD", func(s *schedStats) float64 { return float64(s.AcctQueued) }},
	{"slurm_last_proc_req_start", "Timestamp of last process request start", func(s *schedStats) float64 { return float64(s.Start.Unix()) }},
	{"slurm_sched_stats_timestamp", "Statistics snapshot timestamp", func(s *schedStats) float64 { return float64(s.Time.Unix()) }},
}

// schedulerCollector is /metrics/scheduler.
type schedulerCollector struct {
	src   func() Source
	descs []*prometheus.Desc
}

func newSchedulerCollector(src func() Source) *schedulerCollector {
	c := &schedulerCollector{src: src}
	for _, m := range schedMetrics {
		c.descs = append(c.descs, prometheus.NewDesc(m.name, m.help, nil, nil))
	}
	return c
}

func (c *schedulerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *schedulerCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.src()
	if src == nil {
		return
	}
	s := src.SchedulerStats()
	for i, m := range schedMetrics {
		ch <- prometheus.MustNewConstMetric(c.descs[i], prometheus.GaugeValue, m.value(&s))
	}
}
