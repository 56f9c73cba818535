// Package grafana holds the Grafana dashboard built on the controller's
// and the node daemons' metrics (drover.json); its test checks that
// every metric the dashboard queries is one they export.
package grafana

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/metrics"
	"github.com/droverhq/drover/internal/nodeagent"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/restapi"
	"github.com/droverhq/drover/plugins/protocol"
)

// TestDashboardMetricsExist: every slurm_ and drover_ metric named in the
// dashboard's PromQL is one a controller or a node daemon serves, as
// their registries list them once each kind of event has happened.
func TestDashboardMetricsExist(t *testing.T) {
	exported := map[string]bool{}
	for name := range controllerMetrics(t) {
		exported[name] = true
	}
	for name := range nodeMetrics(t) {
		exported[name] = true
	}
	used := dashboardMetrics(t, "drover.json")
	if len(used) == 0 {
		t.Fatal("the dashboard queries no metric")
	}
	for _, name := range used {
		if !exported[name] && !exported[histogramOf(name)] {
			t.Errorf("drover.json queries %s, which neither the controller nor a node daemon exports", name)
		}
	}
}

// histogramOf is the family a histogram's series belongs to.
func histogramOf(series string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(series, suffix); ok {
			return base
		}
	}
	return series
}

var metricName = regexp.MustCompile(`\b(?:slurm|drover)_[a-zA-Z0-9_]+`)

// dashboardMetrics lists the slurm_ and drover_ names in every panel's
// queries.
func dashboardMetrics(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, metricName.FindAllString(tg.Expr, -1)...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// controllerMetrics runs a controller that has scheduled a job, answered
// a REST request, committed to its state log, received a heartbeat,
// called a plugin and reports a replica, then lists what its metrics
// endpoints serve.
func controllerMetrics(t *testing.T) map[string]*dto.MetricFamily {
	own := metrics.NewController()
	c := ctltest.New(t, func(cfg *controller.Config) {
		cfg.MetricsType = "metrics/openmetrics"
		cfg.Observer, cfg.StoreOptions.OnCommit = own, own.Commit
	})
	c.RegisterAll()
	id := c.Submit(ctltest.Alice, ctltest.Request())
	c.Ctl.Start()
	ctltest.Eventually(t, func() bool { return c.Job(id).State == job.Running }, "job %d not running", id)
	if err := c.Ctl.Heartbeat(nodeproto.Heartbeat{Name: "n1"}); err != nil {
		t.Fatal(err)
	}
	// A replicated controller's series: the replica's figures as a
	// follower reports them (raft itself is tested in internal/replog).
	own.WatchReplica(func() (metrics.Replica, bool) {
		return metrics.Replica{State: "Follower", Term: 3, CommitIndex: 9, AppliedIndex: 8, LastContact: time.Now(), LeaderChanges: 2}, true
	})
	// No job_submit plugin is configured here: the call is reported as
	// the controller reports one.
	own.PluginCall("job_submit", "submit", time.Millisecond, errors.New("refused"))
	h, err := restapi.Handler(c.Ctl, slog.New(slog.DiscardHandler), restapi.Options{Observe: own.Request})
	if err != nil {
		t.Fatal(err)
	}
	front := metrics.NewEndpoints(func() metrics.Live { return c.Ctl }, own).Wrap(h)
	front.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/slurm/v0.0.44/jobs/", nil))
	out := map[string]*dto.MetricFamily{}
	for _, path := range []string{metrics.PathJobs, metrics.PathNodes, metrics.PathPartitions, metrics.PathScheduler, metrics.PathUsersAccts, metrics.PathDrover} {
		w := httptest.NewRecorder()
		front.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d", path, w.Code)
		}
		for name, f := range parse(t, w.Body) {
			out[name] = f
		}
	}
	return out
}

// gpuFault is a GPU plugin that reports one XID and one lost GPU.
type gpuFault struct{ sent bool }

func (g *gpuFault) Prepare(context.Context, protocol.PrepareRequest) (*protocol.PrepareReply, error) {
	return &protocol.PrepareReply{}, nil
}

func (g *gpuFault) Health(context.Context) (*protocol.HealthReply, error) {
	if g.sent {
		return &protocol.HealthReply{}, nil
	}
	g.sent = true
	return &protocol.HealthReply{Events: []gres.HealthEvent{{Index: 0, XID: 79}, {Index: 1, Lost: true}}}, nil
}

func (g *gpuFault) Usage(context.Context, []int, []int) (*protocol.UsageReply, error) {
	return &protocol.UsageReply{}, nil
}

func (g *gpuFault) Close() {}

// nodeMetrics runs a node daemon whose GPU plugin reports faults, and
// lists what its /metrics serves once it counted them.
func nodeMetrics(t *testing.T) map[string]*dto.MetricFamily {
	ctrl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nodeproto.Reply(w, http.StatusOK, struct{}{})
	}))
	t.Cleanup(ctrl.Close)
	a, err := nodeagent.New(nodeagent.Config{Name: "n1", Controllers: []string{ctrl.URL}, Listen: "127.0.0.1:0", SpoolDir: t.TempDir(), CPUs: 2,
		Keys: clusterkey.NewHolder(clusterkey.FromSecret(ctltest.Key)), Gres: &gpuFault{}, HealthInterval: 10 * time.Millisecond},
		slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready, errc := make(chan net.Addr, 1), make(chan error, 1)
	go func() { errc <- a.Run(ctx, ready) }()
	t.Cleanup(func() {
		cancel()
		<-errc
		a.Close()
	})
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-errc:
		t.Fatalf("node daemon stopped: %v", err)
	}
	var fams map[string]*dto.MetricFamily
	ctltest.Eventually(t, func() bool {
		resp, err := http.Get("http://" + addr.String() + nodeagent.PathMetrics)
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		fams = parse(t, resp.Body)
		return fams["drover_node_gpu_xid_errors_total"] != nil && fams["drover_node_gpu_health_events_total"] != nil
	}, "GPU faults never counted")
	return fams
}

func parse(t *testing.T, r io.Reader) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}
