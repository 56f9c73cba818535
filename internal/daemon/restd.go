package daemon

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/failover"
	"github.com/droverhq/drover/internal/jwtauth"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/restapi"
	"github.com/droverhq/drover/internal/restd"
	"github.com/droverhq/drover/internal/tlsconf"
)

// RunRestd runs `drover restd` on listen addresses as slurmrestd takes
// them ("[host]:port" or "unix:/path") until ctx ends.
func RunRestd(ctx context.Context, v *viper.Viper, logger *slog.Logger, listen []string, ready func([]net.Addr)) error {
	if len(listen) == 0 {
		return fmt.Errorf("no listen address: give [host]:port or unix:/path, as to slurmrestd")
	}
	path := ConfPath(v.GetString("conf"))
	sc, err := LoadConf(path, logger)
	if err != nil {
		return err
	}
	tlsServer, tlsClient, err := ClusterTLS(v, sc, path, tlsconf.Restd)
	if err != nil {
		return err
	}
	scheme := "http"
	if tlsClient != nil {
		scheme = "https"
	}
	o := restd.Options{Controllers: controllerURLs(sc, scheme), Logger: logger,
		Retry:     failover.Windows(sc.MessageTimeout, sc.SlurmctldTimeout),
		Transport: tlsconf.Transport(http.DefaultTransport.(*http.Transport), tlsClient)}
	types, _ := sc.Value("AuthAltTypes")
	params, _ := sc.Value("AuthAltParameters")
	jc, err := jwtauth.ParseConfig(types, params, sc.StateSaveLocation)
	if err != nil {
		return err
	}
	if jc.Enabled {
		if o.Key, err = jwtauth.LoadKey(jc.KeyFile); err != nil {
			// Tokens still pass through to the controller, which checks
			// them; only the unix socket needs the key.
			logger.Warn("auth/jwt key not readable: unix socket callers will be refused", "key", jc.KeyFile, "err", err)
			o.Key = nil
		}
	}
	// The cluster key, where this host holds it, vouches for the unix
	// socket's callers as a login host's credential service does.
	if ring, err := ClusterKey(v, sc, path); err == nil {
		ai, err := sc.AuthInfo()
		if err != nil {
			return err
		}
		host, _ := os.Hostname()
		host, _, _ = strings.Cut(host, ".")
		o.Cluster = &msgauth.Signer{Keys: clusterkey.NewHolder(ring), Issuer: msgauth.Host(host), TTL: ai.TTL}
	} else {
		logger.Info("no cluster key here: unix socket callers are vouched for with the auth/jwt key", "err", err)
	}
	var ls []net.Listener
	closeAll := func() {
		for _, l := range ls {
			l.Close()
		}
	}
	for _, a := range listen {
		var l net.Listener
		if p, ok := strings.CutPrefix(a, "unix:"); ok {
			l, err = restapi.ListenUnix(p, logger)
		} else {
			if l, err = net.Listen("tcp", a); err != nil {
				err = fmt.Errorf("listen on %s: %w", a, err)
			} else if tlsServer != nil {
				l = tls.NewListener(l, tlsServer)
			}
		}
		if err != nil {
			closeAll()
			return err
		}
		ls = append(ls, l)
	}
	// restd is ready while it serves: whether the controller answers is
	// the controller's own probe.
	errc := restapi.ServeListeners(ctx, health(restd.Handler(o), func() bool { return true }), ls)
	var addrs []net.Addr
	for _, l := range ls {
		addrs = append(addrs, l.Addr())
	}
	logger.Info("restd ready", "controllers", o.Controllers, "listen", listen, "local_auth", o.Cluster != nil || o.Key != nil)
	if ready != nil {
		ready(addrs)
	}
	defer announce(ctx, logger)()
	select {
	case <-ctx.Done():
		return nil
	case err := <-errc:
		return err
	}
}
