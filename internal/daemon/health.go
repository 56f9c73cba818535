package daemon

import (
	"io"
	"net/http"

	"github.com/droverhq/drover/internal/metrics"
)

// Probe paths, as load balancers and orchestrators (Kubernetes) ask them.
const (
	PathLive  = "/livez"
	PathReady = "/readyz"
)

// health answers liveness and readiness probes on a daemon's listeners
// before any authentication, as probes bring no credentials: GET /livez
// (the daemon serves HTTP) and GET /readyz (it answers requests now; 503
// while it cannot, as during a reconfigure's swap or shutdown). They say
// nothing beyond that; every other path goes to next, authenticated.
func health(next http.Handler, ready func() bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != PathLive && r.URL.Path != PathReady {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Path == PathReady && !ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "not ready\n")
			return
		}
		io.WriteString(w, "ok\n")
	})
}

// ready reports whether the controller answers requests now: it has one
// and no reconfigure is replacing it.
func (l *liveController) ready() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur != nil && !l.swap
}

// metricsSource is the controller the metrics endpoints read: none while
// a reconfigure swaps it or the daemon stops, as /readyz says.
func (l *liveController) metricsSource() metrics.Live {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cur == nil || l.swap {
		return nil
	}
	return l.cur.ctl
}
