package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"

	"github.com/spf13/viper"
)

// servePprof serves Go's profiler on the setting pprof-listen (off by
// default): a controller or node daemon under load can then be profiled
// in place, which is how docs/BENCHMARKS.md finds where time goes. It
// listens on loopback only: a profile is not for the cluster network.
func servePprof(ctx context.Context, v *viper.Viper, logger *slog.Logger) {
	addr := v.GetString("pprof-listen")
	if addr == "" {
		return
	}
	if err := loopbackOnly(addr); err != nil {
		logger.Error("pprof listener refused", "addr", addr, "err", err)
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

// loopbackOnly refuses a listen address that is not on loopback.
func loopbackOnly(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("%q is not a loopback address (127.0.0.1:PORT or [::1]:PORT)", host)
	}
	return nil
}
