package daemon

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/spf13/viper"
)

// servePprof serves Go's profiler on the setting pprof-listen (off by
// default): a controller or node daemon under load can then be profiled
// in place, which is how docs/BENCHMARKS.md finds where time goes.
func servePprof(ctx context.Context, v *viper.Viper, logger *slog.Logger) {
	addr := v.GetString("pprof-listen")
	if addr == "" {
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		logger.Error("pprof listener", "addr", addr, "err", err)
		return
	}
	srv := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	logger.Info("profiler listening", "addr", ln.Addr().String())
	go srv.Serve(ln)
}
