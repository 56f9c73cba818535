package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
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

// RunSack runs `drover sackd`: a login host's credential service, as
// Slurm's sackd (compute hosts get theirs from the node daemon).
func RunSack(ctx context.Context, v *viper.Viper, logger *slog.Logger, ready func(string)) error {
	path := ConfPath(v.GetString("conf"))
	sc, err := LoadConf(path, logger)
	if err != nil {
		return err
	}
	ring, err := ClusterKey(v, sc, path)
	if err != nil {
		return err
	}
	ai, err := sc.AuthInfo()
	if err != nil {
		return err
	}
	host := v.GetString("name")
	if host == "" {
		h, _ := os.Hostname()
		host, _, _ = strings.Cut(h, ".")
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
	// SIGHUP reads the key again (a rotation), as sackd reconfigures.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case err := <-errc:
			return err
		case <-hup:
			ring, err := ClusterKey(v, sc, path)
			if err != nil {
				logger.Error("SIGHUP: cluster key refused, keeping the old one", "err", err)
				continue
			}
			keys.Store(ring)
			logger.Info("SIGHUP: cluster key read again", "path", ring.Path, "signing", ring.Signing().ID)
		}
	}
}
