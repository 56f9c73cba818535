package nodeagent

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/plugins/protocol"
)

// healthGres is a GPU plugin whose first health answer reports an XID 79
// on GPU 1 and GPU 2 lost, and nothing after.
type healthGres struct {
	mu   sync.Mutex
	sent bool
}

func (g *healthGres) Prepare(context.Context, protocol.PrepareRequest) (*protocol.PrepareReply, error) {
	return &protocol.PrepareReply{}, nil
}

func (g *healthGres) Health(context.Context) (*protocol.HealthReply, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sent {
		return &protocol.HealthReply{}, nil
	}
	g.sent = true
	return &protocol.HealthReply{Events: []gres.HealthEvent{{Index: 1, XID: 79}, {Index: 2, Lost: true}}}, nil
}

func (g *healthGres) Usage(context.Context, []int, []int) (*protocol.UsageReply, error) {
	return &protocol.UsageReply{}, nil
}

func (g *healthGres) Close() {}

// TestMetrics: GET /metrics on the daemon's listener answers without
// credentials, and counts the GPU plugin's critical events by kind and
// XID beside the running jobs and steps.
func TestMetrics(t *testing.T) {
	ta := startAgent(t, func(cfg *Config) { cfg.Gres, cfg.HealthInterval = &healthGres{}, 10*time.Millisecond })
	want := map[string]float64{
		`drover_node_gpu_xid_errors_total{gpu="1",xid="79"}`:       1,
		`drover_node_gpu_health_events_total{gpu="1",kind="xid"}`:  1,
		`drover_node_gpu_health_events_total{gpu="2",kind="lost"}`: 1,
		`drover_node_steps_running`:                                0,
		`drover_node_jobs_running`:                                 0,
		`drover_node_cgroup_failures_total`:                        0,
	}
	var got map[string]float64
	deadline := time.Now().Add(testWait)
	for {
		got = scrapeAgent(t, ta.url+PathMetrics)
		if got[`drover_node_gpu_health_events_total{gpu="2",kind="lost"}`] == 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}

// scrapeAgent reads a metrics page into series name{labels} -> value.
func scrapeAgent(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, lp := range m.GetLabel() {
				labels = append(labels, lp.GetName()+`="`+lp.GetValue()+`"`)
			}
			key := name
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}
