package nodeagent

import (
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/droverhq/drover/gres"
)

// PathMetrics is where the node daemon serves its own metrics, on its
// listener and without authentication, as the controller serves its
// own: counts of what runs here and what failed, no job, user or file
// names. slurmd has no metrics endpoint; this one is Drover's.
const PathMetrics = "/metrics"

// agentMetrics are the node daemon's own metrics, under drover_node_.
// Labels are bounded: a GPU index, an event kind, an XID number.
type agentMetrics struct {
	registry *prometheus.Registry
	// gpuEvents counts the critical GPU events the GPU plugin reported
	// (what drains the node), by device and kind; xids the XID errors
	// among them by number. Application XIDs (13, 31, 43...) never
	// reach them: the plugin leaves them out, as they do not drain.
	gpuEvents *prometheus.CounterVec
	xids      *prometheus.CounterVec
}

func newAgentMetrics(a *Agent) *agentMetrics {
	m := &agentMetrics{
		registry: prometheus.NewRegistry(),
		gpuEvents: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drover_node_gpu_health_events_total",
			Help: "Critical GPU events the GPU plugin reported (kind: xid, ecc_dbe, lost), by device index"}, []string{"gpu", "kind"}),
		xids: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drover_node_gpu_xid_errors_total",
			Help: "Critical XID errors the GPU plugin reported, by device index and XID"}, []string{"gpu", "xid"}),
	}
	m.registry.MustRegister(m.gpuEvents, m.xids,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "drover_node_jobs_running",
			Help: "Batch jobs and allocations running on this node"}, func() float64 {
			a.mu.Lock()
			defer a.mu.Unlock()
			return float64(len(a.jobs))
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "drover_node_steps_running",
			Help: "Job steps (srun) running on this node"}, func() float64 {
			a.mu.Lock()
			defer a.mu.Unlock()
			return float64(len(a.steps))
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "drover_node_cgroup_failures_total",
			Help: "Job and step cgroups that could not be made"}, func() float64 {
			if a.tracker == nil {
				return 0
			}
			return float64(a.tracker.CgroupFailures())
		}),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// gpuEvent counts one critical event of the GPU plugin.
func (m *agentMetrics) gpuEvent(ev gres.HealthEvent) {
	if m == nil {
		return
	}
	gpu := strconv.Itoa(ev.Index)
	switch {
	case ev.Lost:
		m.gpuEvents.WithLabelValues(gpu, "lost").Inc()
	case ev.DoubleBitECC:
		m.gpuEvents.WithLabelValues(gpu, "ecc_dbe").Inc()
	}
	if ev.XID != 0 {
		m.gpuEvents.WithLabelValues(gpu, "xid").Inc()
		m.xids.WithLabelValues(gpu, strconv.FormatUint(ev.XID, 10)).Inc()
	}
}

func (m *agentMetrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// MetricsGatherer is the daemon's own metrics registry, for tests and
// tools that list what it exports.
func (a *Agent) MetricsGatherer() prometheus.Gatherer { return a.metrics.registry }
