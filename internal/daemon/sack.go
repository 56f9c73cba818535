package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/configless"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/sack"
	"github.com/droverhq/drover/internal/slurmconf"
)

// sackSocket is where this host's credential service listens: the
// sack-socket setting, else the cluster's abstract socket.
func sackSocket(v *viper.Viper, sc *slurmconf.Config) string {
	if s := v.GetString("sack-socket"); s != "" {
		return s
	}
	return sack.DefaultSocket(sc.ClusterName)
}

// startSack opens this host's credential service for host (its name in
// the credentials it signs) and serves it until ctx ends.
func startSack(ctx context.Context, addr, host string, keys *clusterkey.Holder, ttl time.Duration, logger *slog.Logger) (<-chan error, error) {
	l, err := sack.Listen(addr)
	if err != nil {
		return nil, err
	}
	s := &sack.Server{Signer: &msgauth.Signer{Keys: keys, Issuer: msgauth.Host(host), TTL: ttl}, Logger: logger}
	errc := make(chan error, 1)
	go func() { errc <- s.Serve(ctx, l) }()
	logger.Info("credential service ready", "socket", addr, "host", host)
	return errc, nil
}

// DefaultConfDir is where `drover sackd` keeps a fetched configuration:
// conf under systemd's RUNTIME_DIRECTORY, else /run/slurm/conf, as
// sackd does.
func DefaultConfDir() string {
	if d := os.Getenv("RUNTIME_DIRECTORY"); d != "" {
		first, _, _ := strings.Cut(d, ":")
		return filepath.Join(first, "conf")
	}
	return configless.RunConf
}

// confRefresh is how often a configless login host asks the controller
// for its files again.
const confRefresh = time.Minute

// RunSack runs `drover sackd`: a login host's credential service, as
// Slurm's sackd (compute hosts get theirs from the node daemon). With
// --conf-server, or with no local slurm.conf, it fetches the
// configuration into its folder (/run/slurm/conf) for the host's
// commands and keeps it current.
func RunSack(ctx context.Context, v *viper.Viper, logger *slog.Logger, ready func(string)) error {
	path := ConfPath(v.GetString("conf"))
	keyBase := path
	host := hostName(v)
	var fetch *fetcher
	if wantsConfigless(v) {
		f, err := sackConfigless(ctx, v, host, keyBase, logger)
		if err != nil {
			return noController(v, path, err)
		}
		fetch, path = f, filepath.Join(f.cache, "slurm.conf")
	}
	sc, err := LoadConf(path, logger)
	if err != nil {
		return err
	}
	if fetch != nil {
		fetch.addControllers(sc)
	}
	ring, err := ClusterKey(v, sc, keyBase)
	if err != nil {
		return err
	}
	ai, err := sc.AuthInfo()
	if err != nil {
		return err
	}
	addr := sackSocket(v, sc)
	keys := clusterkey.NewHolder(ring)
	errc, err := startSack(ctx, addr, host, keys, ai.TTL, logger)
	if err != nil {
		return fmt.Errorf("%w (is another credential service running on this host?)", err)
	}
	if ready != nil {
		ready(addr)
	}
	defer announce(ctx, logger)()
	// SIGHUP reads the key again (a rotation), as sackd reconfigures,
	// and fetches the configuration again.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	var tick <-chan time.Time
	if fetch != nil {
		fetch.client.Signer.Keys = keys
		// Later fetches follow the cluster's TLS, as the commands do.
		_, tlsClient, err := ClusterTLS(v, sc, keyBase, "")
		if err != nil {
			return err
		}
		if tlsClient != nil {
			fetch.client = nodeproto.NewClient(fetch.client.Signer, tlsClient)
		}
		every := v.GetDuration("conf-refresh")
		if every <= 0 {
			every = confRefresh
		}
		t := time.NewTicker(every)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case err := <-errc:
			return err
		case <-tick:
			fetch.refresh(ctx)
		case <-hup:
			if fetch != nil {
				fetch.refresh(ctx)
			}
			ring, err := ClusterKey(v, sc, keyBase)
			if err != nil {
				logger.Error("SIGHUP: cluster key refused, keeping the old one", "err", err)
				continue
			}
			keys.Store(ring)
			logger.Info("SIGHUP: cluster key read again", "path", ring.Path, "signing", ring.Signing().ID)
		}
	}
}

// sackConfigless fetches a login host's files into the conf-dir
// setting, signed as the host's credential service.
func sackConfigless(ctx context.Context, v *viper.Viper, host, keyBase string, logger *slog.Logger) (*fetcher, error) {
	servers, err := confServers(ctx, v)
	if err != nil {
		return nil, err
	}
	ring, err := bootKey(v, keyBase)
	if err != nil {
		return nil, err
	}
	dir := v.GetString("conf-dir")
	if dir == "" {
		dir = DefaultConfDir()
	}
	tlsClient, err := bootTLS(v)
	if err != nil {
		return nil, err
	}
	f := &fetcher{
		servers: servers,
		client:  nodeproto.NewClient(&msgauth.Signer{Keys: clusterkey.NewHolder(ring), Issuer: msgauth.Host(host)}, tlsClient),
		cache:   dir,
		logger:  logger,
	}
	r, err := f.establish(ctx, retryOf(v))
	if err != nil {
		return nil, err
	}
	if r != nil {
		if err := f.store(r); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// hostName is --name, else the short host name, as slurmd and sackd name
// themselves.
func hostName(v *viper.Viper) string {
	if name := v.GetString("name"); name != "" {
		return name
	}
	h, _ := os.Hostname()
	name, _, _ := strings.Cut(h, ".")
	return name
}
