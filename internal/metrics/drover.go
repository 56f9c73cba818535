package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// latencyBuckets span a state-log fsync on fast flash (100 µs) to a
// scheduling pass over a large queue (10 s).
var latencyBuckets = prometheus.ExponentialBuckets(0.0001, 2.5, 12)

// Controller are Drover's own metrics of a controller, under drover_.
// Every label takes a bounded set of values: an operation id, a pass
// kind, a plugin kind and operation, a status class; never a job, user
// or node name. One lives for the whole daemon: a reconfigure's new
// controller reports into the same series.
type Controller struct {
	Registry   *prometheus.Registry
	commit     prometheus.Histogram
	commitRecs prometheus.Histogram
	rest       *prometheus.HistogramVec
	pass       *prometheus.HistogramVec
	heartbeats prometheus.Counter
	plugin     *prometheus.HistogramVec
	pluginErrs *prometheus.CounterVec
}

// NewController makes the controller's own metrics, with the Go
// runtime's and the process's beside them.
func NewController() *Controller {
	m := &Controller{
		Registry: prometheus.NewRegistry(),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drover_state_commit_seconds",
			Help: "Time to write and sync one state log transaction (group commit)", Buckets: latencyBuckets}),
		commitRecs: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "drover_state_commit_records",
			Help: "Records in one state log transaction", Buckets: prometheus.ExponentialBuckets(1, 4, 7)}),
		rest: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "drover_rest_request_seconds",
			Help: "REST request latency by OpenAPI operation id (or route) and status class", Buckets: latencyBuckets}, []string{"operation", "code"}),
		pass: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "drover_schedule_pass_seconds",
			Help: "Scheduling cycle time; pass=backfill when the backfill planner ran in it", Buckets: latencyBuckets}, []string{"pass"}),
		heartbeats: prometheus.NewCounter(prometheus.CounterOpts{Name: "drover_node_heartbeats_total",
			Help: "Node daemon heartbeats received"}),
		plugin: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "drover_plugin_call_seconds",
			Help: "Calls the controller made to plugins, by plugin kind and operation", Buckets: latencyBuckets}, []string{"kind", "op"}),
		pluginErrs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "drover_plugin_call_errors_total",
			Help: "Plugin calls that returned an error (a refusal included), by plugin kind and operation"}, []string{"kind", "op"}),
	}
	m.Registry.MustRegister(m.commit, m.commitRecs, m.rest, m.pass, m.heartbeats, m.plugin, m.pluginErrs,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Commit observes one state log transaction (state.Options.OnCommit).
func (m *Controller) Commit(records int, took time.Duration) {
	m.commit.Observe(took.Seconds())
	m.commitRecs.Observe(float64(records))
}

// Request observes one REST request (restapi.Options.Observe).
func (m *Controller) Request(op string, status int, took time.Duration) {
	m.rest.WithLabelValues(op, strconv.Itoa(status/100)+"xx").Observe(took.Seconds())
}

// SchedulePass observes one scheduling cycle (controller.Observer).
func (m *Controller) SchedulePass(backfill bool, took time.Duration) {
	pass := "main"
	if backfill {
		pass = "backfill"
	}
	m.pass.WithLabelValues(pass).Observe(took.Seconds())
}

// Heartbeat counts one node daemon heartbeat (controller.Observer).
func (m *Controller) Heartbeat() { m.heartbeats.Inc() }

// PluginCall observes one plugin call (controller.Observer).
func (m *Controller) PluginCall(kind, op string, took time.Duration, err error) {
	m.plugin.WithLabelValues(kind, op).Observe(took.Seconds())
	if err != nil {
		m.pluginErrs.WithLabelValues(kind, op).Inc()
	}
}

// Replica is a controller's replica of the replicated log as the metrics
// report it (replog.Stats, without the dependency).
type Replica struct {
	// State is raft's: "Leader", "Follower", "Candidate" or "Shutdown".
	State                           string
	Term, CommitIndex, AppliedIndex uint64
	// LastContact is when a follower last heard from the leader (zero
	// on the leader, or before any contact).
	LastContact time.Time
	// LeaderChanges counts the new leaders the replica learnt of.
	LeaderChanges uint64
}

// raftStates are the values of drover_raft_state's state label.
var raftStates = []string{"Leader", "Follower", "Candidate", "Shutdown"}

// WatchReplica reports read's replica under drover_raft_ at every
// scrape: a controller of several (several SlurmctldHost lines) calls
// it once; a single controller has no such series. read returns false
// while the replica is not open.
func (m *Controller) WatchReplica(read func() (Replica, bool)) {
	m.Registry.MustRegister(&replicaCollector{read: read})
}

var (
	raftStateDesc = prometheus.NewDesc("drover_raft_state",
		"This controller's raft state: 1 for the state it is in (Leader, Follower, Candidate, Shutdown), 0 for the others", []string{"state"}, nil)
	raftTermDesc = prometheus.NewDesc("drover_raft_term",
		"The raft term this controller's replica is in", nil, nil)
	raftCommitDesc = prometheus.NewDesc("drover_raft_commit_index",
		"The last log index this controller's replica knows committed", nil, nil)
	raftAppliedDesc = prometheus.NewDesc("drover_raft_applied_index",
		"The last log index applied to this controller's state", nil, nil)
	raftContactDesc = prometheus.NewDesc("drover_raft_last_contact_seconds",
		"Seconds since this follower last heard from the leader (absent on the leader and before any contact)", nil, nil)
	raftChangesDesc = prometheus.NewDesc("drover_raft_leader_changes_total",
		"Times this controller's replica learnt of a new leader since it started", nil, nil)
)

type replicaCollector struct {
	read func() (Replica, bool)
}

func (c *replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{raftStateDesc, raftTermDesc, raftCommitDesc, raftAppliedDesc, raftContactDesc, raftChangesDesc} {
		ch <- d
	}
}

func (c *replicaCollector) Collect(ch chan<- prometheus.Metric) {
	r, ok := c.read()
	if !ok {
		return
	}
	for _, s := range raftStates {
		v := 0.0
		if s == r.State {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(raftStateDesc, prometheus.GaugeValue, v, s)
	}
	ch <- prometheus.MustNewConstMetric(raftTermDesc, prometheus.GaugeValue, float64(r.Term))
	ch <- prometheus.MustNewConstMetric(raftCommitDesc, prometheus.GaugeValue, float64(r.CommitIndex))
	ch <- prometheus.MustNewConstMetric(raftAppliedDesc, prometheus.GaugeValue, float64(r.AppliedIndex))
	if !r.LastContact.IsZero() {
		ch <- prometheus.MustNewConstMetric(raftContactDesc, prometheus.GaugeValue, time.Since(r.LastContact).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(raftChangesDesc, prometheus.CounterValue, float64(r.LeaderChanges))
}
