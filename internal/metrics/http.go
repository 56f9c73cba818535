package metrics

import (
	"io"
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The controller's metrics paths: slurmctld's, and Drover's own.
const (
	PathIndex      = "/metrics"
	PathJobs       = "/metrics/jobs"
	PathNodes      = "/metrics/nodes"
	PathPartitions = "/metrics/partitions"
	PathScheduler  = "/metrics/scheduler"
	PathUsersAccts = "/metrics/jobs-users-accts"
	PathDrover     = "/metrics/drover"
)

// index is slurmctld's answer to GET /metrics, with Drover's own set
// added.
const index = "slurmctld index of metrics endpoints:\n" +
	"  '/metrics/jobs': get job metrics\n" +
	"  '/metrics/nodes': get node metrics\n" +
	"  '/metrics/partitions': get partition metrics\n" +
	"  '/metrics/jobs-users-accts': get user and account jobs metrics\n" +
	"  '/metrics/scheduler': get scheduler metrics\n" +
	"  '/metrics/drover': get Drover's own metrics\n"

// Live is the controller the endpoints read now, or nil while there is
// none that serves (starting, a reconfigure's swap, shutdown).
type Live interface {
	Source
	MetricsSettings() (metricsType string, private bool)
}

// Endpoints answers the controller's metrics paths before any
// authentication, as slurmctld serves them to scrapers that bring no
// credentials.
type Endpoints struct {
	live func() Live
	sets map[string]http.Handler
	own  http.Handler
}

// NewEndpoints serves the Slurm sets read from live and Drover's own
// from own (nil: none).
func NewEndpoints(live func() Live, own *Controller) *Endpoints {
	src := func() Source {
		if l := live(); l != nil {
			return l
		}
		return nil
	}
	e := &Endpoints{live: live, sets: map[string]http.Handler{}}
	for path, c := range map[string]prometheus.Collector{
		PathJobs:       newJobsCollector(src),
		PathNodes:      newNodesCollector(src),
		PathPartitions: newPartitionsCollector(src),
		PathScheduler:  newSchedulerCollector(src),
		PathUsersAccts: newUsersAcctsCollector(src),
	} {
		r := prometheus.NewRegistry()
		r.MustRegister(c)
		e.sets[path] = promhttp.HandlerFor(r, promhttp.HandlerOpts{EnableOpenMetrics: true})
	}
	if own != nil {
		e.own = promhttp.HandlerFor(own.Registry, promhttp.HandlerOpts{EnableOpenMetrics: true})
	}
	return e
}

// Wrap answers the metrics paths and hands every other request to next.
func (e *Endpoints) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := strings.TrimSuffix(r.URL.Path, "/")
		set, isSet := e.sets[path]
		if path != PathIndex && !isSet && (path != PathDrover || e.own == nil) {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		switch {
		case path == PathIndex:
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, index)
		case path == PathDrover:
			e.own.ServeHTTP(w, r)
		default:
			e.serveSet(w, r, set)
		}
	})
}

// serveSet answers one Slurm set as slurmctld does: 503 while no
// controller serves, 401 with PrivateData set (any of it), an empty
// body without MetricsType, the set otherwise.
func (e *Endpoints) serveSet(w http.ResponseWriter, r *http.Request, set http.Handler) {
	l := e.live()
	if l == nil {
		http.Error(w, "controller not ready", http.StatusServiceUnavailable)
		return
	}
	mt, private := l.MetricsSettings()
	switch {
	case private:
		w.WriteHeader(http.StatusUnauthorized)
	case mt == "":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	default:
		set.ServeHTTP(w, r)
	}
}
