package metrics_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/metrics"
	"github.com/droverhq/drover/internal/restapi"
)

var ctx = context.Background()

// live serves one controller, or none.
type live struct{ ctl *controller.Controller }

func (l *live) get() metrics.Live {
	if l.ctl == nil {
		return nil
	}
	return l.ctl
}

// server is a controller's HTTP front as the daemon builds it: the
// metrics endpoints before the authenticated REST handler.
func server(t *testing.T, c *ctltest.Cluster, own *metrics.Controller) (*httptest.Server, *live) {
	t.Helper()
	l := &live{ctl: c.Ctl}
	h, err := restapi.Handler(c.Ctl, slog.New(slog.DiscardHandler), restapi.Options{Observe: own.Request})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(metrics.NewEndpoints(l.get, own).Wrap(h))
	t.Cleanup(srv.Close)
	return srv, l
}

// scrape GETs path without credentials and parses the exposition.
func scrape(t *testing.T, srv *httptest.Server, path string) (int, string, map[string]*dto.MetricFamily) {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || len(body) == 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=") {
		return resp.StatusCode, string(body), nil
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("%s: parse: %v\n%s", path, err, body)
	}
	return resp.StatusCode, string(body), fams
}

// value is the gauge of family name whose labels are labels (name=value
// pairs), or -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		ok := len(got) == len(labels)/2
		for i := 0; ok && i < len(labels); i += 2 {
			ok = got[labels[i]] == labels[i+1]
		}
		if ok {
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

func withMetrics(cfg *controller.Config) { cfg.MetricsType = "metrics/openmetrics" }

// cluster is a controller with known jobs: alice's two running on the
// gpu partition (8 and 4 CPUs on n1 and n2), her array of 3 pending
// tasks held, bob's job pending in debug, carol's cancelled one, and n4
// drained.
func cluster(t *testing.T, mods ...func(*controller.Config)) *ctltest.Cluster {
	t.Helper()
	c := ctltest.New(t, append(mods, func(cfg *controller.Config) { cfg.SchedInterval = time.Hour })...)
	c.RegisterAll()
	if err := c.Ctl.UpdateNode(ctx, ctltest.Root, "n4", controller.NodeDrain, "maintenance"); err != nil {
		t.Fatal(err)
	}
	if err := c.Ctl.UpdateNode(ctx, ctltest.Root, "n3", controller.NodeDrain, "maintenance"); err != nil {
		t.Fatal(err)
	}
	var running []job.ID
	for _, cpus := range []uint32{8, 4} {
		running = append(running, c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) {
			r.Partition, r.CPUsPerTask, r.MemPerNode = "gpu", cpus, 2000
			r.NodeList = []string{map[uint32]string{8: "n1", 4: "n2"}[cpus]}
		})))
	}
	// The scheduling loop runs on kicks alone: a cycle each time the
	// state changes.
	c.Ctl.Start()
	ctltest.Eventually(t, func() bool {
		return c.Job(running[0]).State == job.Running && c.Job(running[1]).State == job.Running
	}, "jobs %v not running", running)
	_, err := c.Ctl.Submit(ctx, ctltest.Alice, controller.Submission{Hold: true, Req: ctltest.Request(func(r *job.Request) {
		r.Partition, r.Array = "gpu", job.ArraySpec{Expr: "0-2", Tasks: []uint32{0, 1, 2}}
	})})
	if err != nil {
		t.Fatal(err)
	}
	c.Submit(ctltest.Bob, ctltest.Request(func(r *job.Request) { r.Partition, r.MinNodes, r.MaxNodes, r.CPUsPerTask = "debug", 2, 2, 8 }))
	gone := c.Submit(ctltest.Carol, ctltest.Request(func(r *job.Request) { r.Partition = "short" }))
	if err := c.Ctl.Cancel(ctx, ctltest.Root, controller.CancelRequest{Sel: controller.JobSelector{ID: gone}}); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEndpoints scrapes every endpoint of a controller without
// credentials and checks names, labels and values against the jobs and
// nodes it holds.
func TestEndpoints(t *testing.T) {
	c := cluster(t, withMetrics)
	own := metrics.NewController()
	srv, _ := server(t, c, own)
	type sample struct {
		name   string
		labels []string
		want   float64
	}
	tests := map[string][]sample{
		metrics.PathJobs: {
			{"slurm_jobs", nil, 7}, // 2 running, 3 array tasks, bob's, carol's
			{"slurm_jobs_running", nil, 2},
			{"slurm_jobs_pending", nil, 4},
			{"slurm_jobs_hold", nil, 3},
			{"slurm_jobs_cancelled", nil, 1},
			{"slurm_jobs_finished", nil, 1},
			{"slurm_jobs_started", nil, 3},
			{"slurm_jobs_cpus_alloc", nil, 12},
			{"slurm_jobs_nodes_alloc", nil, 2},
			{"slurm_jobs_memory_alloc", nil, 4000},
			{"slurm_jobs_fed_requeued", nil, 0},
		},
		metrics.PathNodes: {
			{"slurm_nodes", nil, 4},
			{"slurm_nodes_alloc", nil, 1},
			{"slurm_nodes_mixed", nil, 1},
			{"slurm_nodes_idle", nil, 2},
			{"slurm_nodes_drain", nil, 2},
			{"slurm_nodes_drained", nil, 2},
			{"slurm_nodes_draining", nil, 0},
			{"slurm_node_cpus", []string{"node", "n1"}, 8},
			{"slurm_node_cpus_alloc", []string{"node", "n1"}, 8},
			{"slurm_node_cpus_idle", []string{"node", "n2"}, 4},
			{"slurm_node_memory_bytes", []string{"node", "n2"}, 16000},
			{"slurm_node_memory_alloc_bytes", []string{"node", "n2"}, 2000},
			{"slurm_node_memory_free_bytes", []string{"node", "n3"}, 15000},
			{"drover_node_gpus", []string{"node", "n1"}, 4},
			{"drover_node_gpus_alloc", []string{"node", "n1"}, 0},
		},
		metrics.PathPartitions: {
			{"slurm_partitions", nil, 4},
			{"slurm_partition_jobs", []string{"partition", "gpu"}, 3},
			{"slurm_partition_jobs_running", []string{"partition", "gpu"}, 2},
			{"slurm_partition_jobs_pending", []string{"partition", "gpu"}, 3},
			{"slurm_partition_jobs_hold", []string{"partition", "gpu"}, 3},
			{"slurm_partition_jobs_pending", []string{"partition", "debug"}, 1},
			{"slurm_partition_jobs_max_job_nodes", []string{"partition", "debug"}, 2},
			{"slurm_partition_jobs_min_job_nodes_nohold", []string{"partition", "debug"}, 2},
			{"slurm_partition_jobs_max_job_nodes_nohold", []string{"partition", "gpu"}, 0},
			{"slurm_partition_jobs_cancelled", []string{"partition", "short"}, 1},
			{"slurm_partition_jobs", []string{"partition", "short"}, 0},
			{"slurm_partition_nodes", []string{"partition", "gpu"}, 4},
			{"slurm_partition_cpus", []string{"partition", "gpu"}, 32},
			{"slurm_partition_nodes_cpus_alloc", []string{"partition", "debug"}, 12},
			{"slurm_partition_nodes_drain", []string{"partition", "short"}, 2},
			{"slurm_partition_jobs", []string{"partition", "closed"}, 0},
			{"drover_partition_gpus", []string{"partition", "gpu"}, 16},
		},
		metrics.PathUsersAccts: {
			{"slurm_user_jobs", []string{"username", "alice"}, 3},
			{"slurm_user_jobs_running", []string{"username", "alice"}, 2},
			{"slurm_user_jobs_pending", []string{"username", "alice"}, 3},
			{"slurm_user_jobs_pending", []string{"username", "bob"}, 1},
			{"slurm_user_jobs_cancelled", []string{"username", "carol"}, 1},
		},
		metrics.PathScheduler: {
			{"slurm_sdiag_jobs_submitted", nil, 5},
			{"slurm_sdiag_jobs_started", nil, 2},
			{"slurm_sdiag_jobs_pending", nil, 4},
			{"slurm_sdiag_jobs_running", nil, 2},
			{"slurm_schedule_queue_len", nil, 4},
		},
	}
	for path, samples := range tests {
		status, body, fams := scrape(t, srv, path)
		if status != http.StatusOK || fams == nil {
			t.Fatalf("%s: %d %q", path, status, body)
		}
		for _, s := range samples {
			if got := value(fams, s.name, s.labels...); got != s.want {
				t.Errorf("%s: %s%v = %v, want %v", path, s.name, s.labels, got, s.want)
			}
		}
		for name, f := range fams {
			if !(strings.HasPrefix(name, "slurm_") || strings.HasPrefix(name, "drover_")) || f.GetType() != dto.MetricType_GAUGE || f.GetHelp() == "" {
				t.Errorf("%s: %s: type %s, help %q: want a gauge with help", path, name, f.GetType(), f.GetHelp())
			}
		}
	}
	// The account set: the jobs were submitted without accounts.
	if _, _, fams := scrape(t, srv, metrics.PathUsersAccts); fams["slurm_account_jobs"] == nil {
		t.Error("no slurm_account_jobs")
	}
	// Drover's own: the REST request just made is counted by operation.
	resp, err := http.Get(srv.URL + "/slurm/v0.0.44/jobs/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	_, _, fams := scrape(t, srv, metrics.PathDrover)
	f := fams["drover_rest_request_seconds"]
	if f == nil || len(f.GetMetric()) != 1 {
		t.Fatalf("drover_rest_request_seconds: %v", f)
	}
	got := map[string]string{}
	for _, lp := range f.GetMetric()[0].GetLabel() {
		got[lp.GetName()] = lp.GetValue()
	}
	if diff := cmp.Diff(map[string]string{"operation": "slurm_v0044_get_jobs", "code": "4xx"}, got); diff != "" {
		t.Errorf("REST latency labels (-want +got):\n%s", diff)
	}
}

// TestIndexAndRefusals: the index lists the sets; PrivateData refuses
// them with 401 as slurmctld does; without MetricsType they are empty;
// without a controller 503; other paths still need credentials.
func TestIndexAndRefusals(t *testing.T) {
	tests := map[string]struct {
		mod        func(*controller.Config)
		noCtl      bool
		path       string
		wantStatus int
		wantBody   string
	}{
		"index":              {mod: withMetrics, path: "/metrics", wantStatus: 200, wantBody: "slurmctld index of metrics endpoints:\n"},
		"private jobs":       {mod: func(c *controller.Config) { withMetrics(c); c.PrivateData = []string{"jobs"} }, path: metrics.PathJobs, wantStatus: 401},
		"private usage":      {mod: func(c *controller.Config) { withMetrics(c); c.PrivateData = []string{"usage"} }, path: metrics.PathNodes, wantStatus: 401},
		"private, own still": {mod: func(c *controller.Config) { withMetrics(c); c.PrivateData = []string{"jobs"} }, path: metrics.PathDrover, wantStatus: 200, wantBody: "# HELP"},
		"no MetricsType":     {mod: func(*controller.Config) {}, path: metrics.PathScheduler, wantStatus: 200},
		"no controller":      {mod: withMetrics, noCtl: true, path: metrics.PathJobs, wantStatus: 503, wantBody: "controller not ready\n"},
		"not a set":          {mod: withMetrics, path: "/metrics/other", wantStatus: 401},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := ctltest.New(t, tc.mod)
			srv, l := server(t, c, metrics.NewController())
			if tc.noCtl {
				l.ctl = nil
			}
			status, body, _ := scrape(t, srv, tc.path)
			if status != tc.wantStatus || !strings.HasPrefix(body, tc.wantBody) || (tc.wantBody == "" && status != 401 && body != "") {
				t.Errorf("%s: %d %q, want %d %q", tc.path, status, body, tc.wantStatus, tc.wantBody)
			}
		})
	}
}

// TestSchedulerMatchesDiag: /metrics/scheduler and GET /diag (sdiag)
// report the same counters.
func TestSchedulerMatchesDiag(t *testing.T) {
	c := cluster(t, withMetrics)
	srv := mustServer(t, c)
	// Read while no cycle runs in between, so that both see one state.
	var ss controller.SchedulerStats
	var fams map[string]*dto.MetricFamily
	ctltest.Eventually(t, func() bool {
		ss = c.Ctl.SchedulerStats()
		_, _, fams = scrape(t, srv, metrics.PathScheduler)
		return c.Ctl.SchedulerStats().Cycles == ss.Cycles
	}, "scheduling never paused")
	if ss.Cycles == 0 || ss.BackfillCycles == 0 {
		t.Errorf("cycles %d, backfill passes %d: want some", ss.Cycles, ss.BackfillCycles)
	}
	for name, want := range map[string]uint64{
		"slurm_schedule_cycle_cnt": ss.Cycles, "slurm_sdiag_jobs_submitted": ss.Submitted, "slurm_sdiag_jobs_started": ss.Started,
		"slurm_sdiag_jobs_canceled": ss.Cancelled, "slurm_sdiag_jobs_pending": ss.Pending, "slurm_sdiag_jobs_running": ss.Running,
		"slurm_bf_cycle_cnt": ss.BackfillCycles, "slurm_schedule_cycle_max": ss.MaxCycleMicros, "slurm_schedule_cycle_tot": ss.TotalCycleMicros,
	} {
		if got := value(fams, name); got != float64(want) {
			t.Errorf("%s = %v, SchedulerStats %d", name, got, want)
		}
	}
}

func mustServer(t *testing.T, c *ctltest.Cluster) *httptest.Server {
	srv, _ := server(t, c, metrics.NewController())
	return srv
}

// TestOwn: Drover's own metrics count what the controller reports
// through its Observer and the state log's commit hook.
func TestOwn(t *testing.T) {
	own := metrics.NewController()
	c := ctltest.New(t, func(cfg *controller.Config) {
		cfg.Observer, cfg.StoreOptions.OnCommit = own, own.Commit
	})
	c.RegisterAll()
	id := c.Submit(ctltest.Alice, ctltest.Request())
	c.Ctl.Start()
	ctltest.Eventually(t, func() bool { return c.Job(id).State == job.Running }, "job %d not running", id)
	own.PluginCall("job_submit", "submit", time.Millisecond, io.EOF)
	srv, _ := server(t, c, own)
	_, _, fams := scrape(t, srv, metrics.PathDrover)
	count := func(name string) uint64 {
		f := fams[name]
		if f == nil {
			return 0
		}
		var n uint64
		for _, m := range f.GetMetric() {
			n += m.GetHistogram().GetSampleCount()
		}
		return n
	}
	if n := count("drover_state_commit_seconds"); n < 2 {
		t.Errorf("state commits observed: %d, want at least the submit and the start", n)
	}
	if n := count("drover_schedule_pass_seconds"); n == 0 {
		t.Errorf("no scheduling pass observed")
	}
	if v := value(fams, "drover_plugin_call_errors_total", "kind", "job_submit", "op", "submit"); v != 1 {
		t.Errorf("plugin errors: %v", v)
	}
}

// TestSchedulerSurvivesReset: sdiag -r restarts /diag's counters but not
// /metrics/scheduler's, which are Prometheus counters and must never go
// down.
func TestSchedulerSurvivesReset(t *testing.T) {
	c := cluster(t, withMetrics)
	srv := mustServer(t, c)
	_, _, before := scrape(t, srv, metrics.PathScheduler)
	if err := c.Ctl.ResetStats(ctltest.Root); err != nil {
		t.Fatal(err)
	}
	if d := c.Ctl.DiagStats(); d.Submitted != 0 {
		t.Errorf("/diag counts %d submitted after the reset, want 0", d.Submitted)
	}
	_, _, after := scrape(t, srv, metrics.PathScheduler)
	if got := value(after, "slurm_sdiag_jobs_submitted"); got <= 0 || got != value(before, "slurm_sdiag_jobs_submitted") {
		t.Errorf("slurm_sdiag_jobs_submitted %v after the reset, %v before", got, value(before, "slurm_sdiag_jobs_submitted"))
	}
	// A scheduling cycle may run between the scrapes; nothing may fall.
	for _, name := range []string{"slurm_sdiag_jobs_started", "slurm_sdiag_jobs_canceled", "slurm_schedule_cycle_cnt",
		"slurm_schedule_cycle_tot", "slurm_schedule_cycle_max", "slurm_bf_cycle_cnt"} {
		if b, a := value(before, name), value(after, name); a < b || b < 0 {
			t.Errorf("%s: %v before the reset, %v after", name, b, a)
		}
	}
}
