package restapi

import (
	"net/http"
	"time"
)

// routeFinder names the OpenAPI operation a request is for, as one
// version's ogen router finds it.
type routeFinder func(method, path string) (string, bool)

// observed tells observe each request's operation, status and duration,
// for Drover's REST latency metric. The operation is the OpenAPI
// operationId ("slurm_v0044_get_jobs") or, outside the slurmrestd APIs,
// the mux pattern the request matched: never the raw path, whose job ids
// and names would make a metric series each.
func observed(next http.Handler, mux *http.ServeMux, finders []routeFinder, observe func(op string, status int, took time.Duration)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		begin := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		observe(operation(r, mux, finders), sw.status, time.Since(begin))
	})
}

func operation(r *http.Request, mux *http.ServeMux, finders []routeFinder) string {
	for _, find := range finders {
		if op, ok := find(r.Method, r.URL.Path); ok {
			return op
		}
	}
	if _, pattern := mux.Handler(r); pattern != "" && pattern != "/" {
		return pattern
	}
	return "unknown"
}

// statusWriter remembers the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes of
// streamed job lists, deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
