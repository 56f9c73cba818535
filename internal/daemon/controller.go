package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/jwtauth"
	"github.com/droverhq/drover/internal/metrics"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/restapi"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/tlsconf"
)

// RunController runs a controller until ctx ends.
func RunController(ctx context.Context, v *viper.Viper, logger *slog.Logger, ready func(addr net.Addr)) error {
	sweepPluginSockets(logger)
	path := ConfPath(v.GetString("conf"))
	sc, err := LoadConf(path, logger)
	if err != nil {
		return err
	}
	cfg, err := controllerConfig(v, path, logger)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		if cfg.JobSubmit != nil {
			cfg.JobSubmit.Close()
		}
		return fmt.Errorf("create StateSaveLocation: %w", err)
	}
	servePprof(ctx, v, logger)
	live := &liveController{v: v, path: path, logger: logger, fatal: make(chan error, 1),
		opts: restapi.Options{MaxBody: int64(v.GetSizeInBytes("rest-max-body"))}}
	live.keys = clusterkey.NewHolder(cfg.Keys.Ring())
	live.auth = controller.NewAuth(live.keys, cfg.AuthTTL)
	live.changed = sync.NewCond(&live.mu)
	// Drover's own metrics outlive reconfigures, as the listeners do.
	live.own = metrics.NewController()
	live.opts.Observe = live.own.Request
	// Authentication is read once: a reconfigure cannot change it, as it
	// cannot change slurmctld's.
	if live.opts.JWT, err = jwtConfig(sc, cfg.StateDir, logger); err != nil {
		return err
	}
	// TLS is read once, as the listeners are: slurmctld's reconfigure
	// cannot change them either.
	tlsServer, tlsClient, err := ClusterTLS(v, sc, path, tlsconf.Ctld)
	if err != nil {
		return err
	}
	if len(sc.SlurmctldHosts) > 1 {
		self, err := selfController(v, sc)
		if err != nil {
			return err
		}
		live.repl, err = newReplication(sc, self, cfg.StateDir, live.keys, tlsClient, v.GetBool("recover"), logger, live.leading, func(err error) {
			select {
			case live.fatal <- fmt.Errorf("replica: %w", err):
			default:
			}
		})
		if err != nil {
			return err
		}
		defer live.repl.close()
		live.own.WatchReplica(live.repl.metrics)
	}
	listen := v.GetString("listen")
	if listen == "" {
		host := cfg.ControlAddr
		if host == "" {
			host = "0.0.0.0"
		}
		listen = net.JoinHostPort(host, strconv.Itoa(cfg.Port))
	}
	socket := SocketPath(v, sc)
	var routed http.Handler = live
	if live.repl != nil {
		routed = live.repl.handler(live, live.leads, func(r *http.Request) (*msgauth.Claims, error) { return live.auth.VerifyRequest(r, 0) }, live.reloadOnSignal)
	}
	// Probes and metrics come before authentication, as slurmctld
	// answers both to callers without credentials. The port opens
	// before the controller starts: raft's connections come through it,
	// and requests get a standby answer until the controller is there.
	front := health(metrics.NewEndpoints(live.metricsSource, live.own).Wrap(routed), live.ready)
	sctx, stopServing := context.WithCancel(ctx)
	defer stopServing()
	addr, errc, err := restapi.Serve(sctx, front, listen, socket, tlsServer, logger)
	if err != nil {
		if cfg.JobSubmit != nil {
			cfg.JobSubmit.Close()
		}
		return err
	}
	g, err := live.start(cfg, nil)
	if err != nil {
		if cfg.JobSubmit != nil {
			cfg.JobSubmit.Close()
		}
		return err
	}
	live.mu.Lock()
	live.cur = g
	live.mu.Unlock()
	defer live.close()
	if live.repl != nil {
		// A controller starts in standby, as slurmctld's backups do,
		// and runs SlurmctldPrimaryOffProg then; elected before the
		// controller was there to be told, it leads now.
		if live.repl.log.Load().IsLeader() {
			live.leading(true)
		} else {
			live.primaryProg(g, false)
		}
	}
	// SIGHUP reads slurm.conf again, as scontrol reconfigure does.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	logger.Info("controller ready", "cluster", cfg.ClusterName, "listen", addr.String(), "socket", socket, "state", cfg.StateDir, "tls", tlsServer != nil)
	if ready != nil {
		ready(addr)
	}
	defer announce(ctx, logger)()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errc:
			return err
		case err := <-live.fatal:
			return err
		case <-hup:
			if err := live.reloadOnSignal(ctx); err != nil {
				logger.Error("SIGHUP: reconfigure refused", "err", err)
			}
		}
	}
}

// jwtConfig reads auth/jwt's settings and key: AuthAltTypes=auth/jwt turns
// it on, and then a missing or short key stops the controller, as it
// stops slurmctld.
func jwtConfig(sc *slurmconf.Config, stateDir string, logger *slog.Logger) (*restapi.JWT, error) {
	types, _ := sc.Value("AuthAltTypes")
	params, _ := sc.Value("AuthAltParameters")
	c, err := jwtauth.ParseConfig(types, params, stateDir)
	if err != nil || !c.Enabled {
		return nil, err
	}
	key, err := jwtauth.LoadKey(c.KeyFile)
	if err != nil {
		return nil, err
	}
	logger.Info("auth/jwt enabled", "key", c.KeyFile)
	return &restapi.JWT{Key: key, Config: c}, nil
}
