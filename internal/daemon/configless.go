package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/configless"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/tlsconf"
	"github.com/droverhq/drover/internal/usercred"
)

// Resolver is where a daemon without --conf-server and without a local
// slurm.conf looks up _slurmctld._tcp; tests replace it.
var Resolver configless.Resolver

// confRetry is how long a daemon waits between tries to fetch its
// files when it has none, as slurmd and sackd wait 10 seconds.
const confRetry = 10 * time.Second

// fetcher fetches a configless daemon's files from its controllers.
type fetcher struct {
	// servers are the controllers to ask, in order; srvMu guards them
	// and pref, the one that answered last, asked first.
	srvMu   sync.Mutex
	servers []configless.Server
	pref    int
	client  *nodeproto.Client
	// cache is the folder the files are written to.
	cache  string
	logger *slog.Logger
	// mu serializes writes to the cache (a SIGHUP and the controller's
	// reconfigure may come together); last is the reply last written.
	mu   sync.Mutex
	last *nodeproto.ConfigReply
}

// wantsConfigless reports whether a daemon runs configless, in Slurm's
// order: --conf-server, then SLURM_CONF_SERVER, then a local slurm.conf
// (--conf, SLURM_CONF or the default path) wins, then DNS SRV records.
func wantsConfigless(v *viper.Viper) bool {
	if v.GetString("conf-server") != "" || os.Getenv("SLURM_CONF_SERVER") != "" {
		return true
	}
	if v.GetString("conf") != "" || os.Getenv("SLURM_CONF") != "" {
		return false
	}
	_, err := os.Stat(ConfPath(""))
	return errors.Is(err, os.ErrNotExist)
}

// noController says why a configless start failed; when the daemon
// went configless only because slurm.conf is missing, it says that
// first, since that is the likelier mistake.
func noController(v *viper.Viper, path string, err error) error {
	if v.GetString("conf-server") == "" && os.Getenv("SLURM_CONF_SERVER") == "" {
		return fmt.Errorf("%s does not exist, and no controller to fetch it from: %w", path, err)
	}
	return err
}

// confServers are the controllers to ask: --conf-server,
// SLURM_CONF_SERVER, or the _slurmctld._tcp SRV records.
func confServers(ctx context.Context, v *viper.Viper) ([]configless.Server, error) {
	s := v.GetString("conf-server")
	if s == "" {
		s = os.Getenv("SLURM_CONF_SERVER")
	}
	if s != "" {
		return configless.ParseServers(s)
	}
	return configless.LookupServers(ctx, Resolver)
}

// bootKey is the cluster key a configless daemon signs its first fetch
// with: --key-file, or slurm.jwks or slurm.key in the folder slurm.conf
// would be in (the key is never distributed). slurm.conf's SlurmUser is
// not known yet; the key may be owned by root, the daemon's user or the
// user slurm, Slurm's usual SlurmUser.
func bootKey(v *viper.Viper, keyBase string) (*clusterkey.Ring, error) {
	var owners []uint32
	if id, err := usercred.LookupName("slurm"); err == nil {
		owners = append(owners, id.UID)
	}
	ring, err := clusterkey.Load(keyBase, v.GetString("key-file"), owners...)
	if err != nil {
		return nil, fmt.Errorf("cluster key: %w", err)
	}
	return ring, nil
}

// bootTLS is the client side of TLS for the first fetch: with
// --ca-cert-file (slurmd's option) the controller is reached over TLS
// and must present a certificate of that CA for the name dialled; nil
// without, as the host has no slurm.conf yet to say TLSType.
func bootTLS(v *viper.Viper) (*tls.Config, error) {
	ca := v.GetString("ca-cert-file")
	if ca == "" {
		return nil, nil
	}
	return tlsconf.Config{Enabled: true, CAFile: ca}.Client()
}

// ask fetches the files from the controllers, the one that answered
// last first, as Slurm's clients start with the controller they reached
// before.
func (f *fetcher) ask(ctx context.Context) (*nodeproto.ConfigReply, error) {
	f.srvMu.Lock()
	pref := f.pref
	order := append(slices.Clone(f.servers[pref:]), f.servers[:pref]...)
	f.srvMu.Unlock()
	r, i, err := configless.Fetch(ctx, f.client, order)
	if err != nil {
		return nil, err
	}
	f.srvMu.Lock()
	if n := len(f.servers); n > 0 {
		f.pref = (pref + i) % n
	}
	f.srvMu.Unlock()
	return r, nil
}

// addControllers adds the SlurmctldHosts of the fetched slurm.conf to
// the controllers asked (--conf-server or DNS may name only one), so
// that later fetches reach a backup controller as every other message
// does.
func (f *fetcher) addControllers(sc *slurmconf.Config) {
	f.srvMu.Lock()
	defer f.srvMu.Unlock()
	for _, a := range sc.ControllerAddrs() {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		p, err := strconv.Atoi(port)
		if err != nil {
			continue
		}
		s := configless.Server{Host: host, Port: p}
		if !slices.Contains(f.servers, s) {
			f.servers = append(f.servers, s)
		}
	}
}

// fetch gets the files and writes them to the cache: the reply, or why
// neither could be done.
func (f *fetcher) fetch(ctx context.Context) (*nodeproto.ConfigReply, error) {
	r, err := f.ask(ctx)
	if err != nil {
		return nil, err
	}
	if err := f.store(r); err != nil {
		return nil, err
	}
	return r, nil
}

// refresh fetches again and rewrites the cache when the files changed;
// a failure keeps the cache as it was, and is logged.
func (f *fetcher) refresh(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, err := f.ask(ctx)
	if err != nil {
		f.logger.Warn("configuration not fetched again; keeping the cached copy", "err", err)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if reflect.DeepEqual(r, f.last) {
		return
	}
	if err := configless.Write(f.cache, r); err != nil {
		f.logger.Error("configuration not written to the cache", "cache", f.cache, "err", err)
		return
	}
	f.last = r
	f.logger.Info("configuration changed on the controller; cache rewritten", "cache", f.cache, "files", existing(r))
}

// retryOf is the conf-retry setting, confRetry by default.
func retryOf(v *viper.Viper) time.Duration {
	if d := v.GetDuration("conf-retry"); d > 0 {
		return d
	}
	return confRetry
}

// untilFetched is for a daemon that started from its cached copy: it
// tries the controller every retry until it answers, then calls
// reconfigure, which fetches the current files and runs from them.
func (f *fetcher) untilFetched(ctx context.Context, retry time.Duration, reconfigure func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(retry):
		}
		if _, err := f.ask(ctx); err == nil {
			f.logger.Info("the controller answers again: reading its configuration")
			reconfigure()
			return
		}
	}
}

// establish fetches the files at start, not yet written. When no
// controller answers it runs from the cached copy if there is one (nil,
// logged); otherwise it tries again every retry until ctx ends, with
// slurmd's wording.
func (f *fetcher) establish(ctx context.Context, retry time.Duration) (*nodeproto.ConfigReply, error) {
	for {
		r, err := f.ask(ctx)
		if err == nil {
			return r, nil
		}
		if configless.Cached(f.cache) {
			f.logger.Warn("failed to load configs from the controller, running from the cached copy", "cache", f.cache, "err", err)
			return nil, nil
		}
		f.logger.Error(fmt.Sprintf("failed to load configs. Retrying in %s.", retry), "err", err)
		select {
		case <-ctx.Done():
			f.srvMu.Lock()
			list := serverList(f.servers)
			f.srvMu.Unlock()
			return nil, fmt.Errorf("failed to load configs from %s: %w", list, err)
		case <-time.After(retry):
		}
	}
}

// store writes a fetched reply to the cache.
func (f *fetcher) store(r *nodeproto.ConfigReply) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := configless.Write(f.cache, r); err != nil {
		return err
	}
	f.last = r
	f.logger.Info("configuration fetched from the controller", "cache", f.cache, "files", existing(r))
	return nil
}

// existing names the files a reply holds.
func existing(r *nodeproto.ConfigReply) string {
	var names []string
	for _, f := range r.Files {
		if f.Exists {
			names = append(names, f.Name)
		}
	}
	return strings.Join(names, ",")
}

func serverList(s []configless.Server) string {
	var out []string
	for _, x := range s {
		out = append(out, x.Addr())
	}
	return strings.Join(out, ",")
}

// nodeConfigless sets a configless node daemon up: it finds the
// controllers, fetches the files into SlurmdSpoolDir/conf-cache and
// returns the slurm.conf to run from there, with the fetcher that
// reconfigures fetch again. keyBase is the slurm.conf path whose folder
// holds the key.
func nodeConfigless(ctx context.Context, v *viper.Viper, name, keyBase string, logger *slog.Logger) (string, *fetcher, error) {
	servers, err := confServers(ctx, v)
	if err != nil {
		return "", nil, err
	}
	ring, err := bootKey(v, keyBase)
	if err != nil {
		return "", nil, err
	}
	// Until the controller says where SlurmdSpoolDir is, the cache of an
	// earlier run is looked for where --spool-dir or the default puts it.
	spool := v.GetString("spool-dir")
	if spool == "" {
		spool = strings.ReplaceAll(slurmconf.DefaultSlurmdSpoolDir, "%n", name)
	}
	tlsClient, err := bootTLS(v)
	if err != nil {
		return "", nil, err
	}
	f := &fetcher{
		servers: servers,
		client:  nodeproto.NewClient(&msgauth.Signer{Keys: clusterkey.NewHolder(ring), Issuer: msgauth.Node(name)}, tlsClient),
		cache:   filepath.Join(spool, configless.CacheFolder),
		logger:  logger,
	}
	r, err := f.establish(ctx, retryOf(v))
	if err != nil {
		return "", nil, err
	}
	if r != nil {
		if v.GetString("spool-dir") == "" && r.SlurmdSpoolDir != "" {
			// The controller's SlurmdSpoolDir holds the cache, as
			// slurmd puts its conf-cache there.
			f.cache = filepath.Join(strings.ReplaceAll(r.SlurmdSpoolDir, "%n", name), configless.CacheFolder)
		}
		if err := f.store(r); err != nil {
			return "", nil, err
		}
	}
	linkRunConf(v, f.cache, logger)
	return filepath.Join(f.cache, "slurm.conf"), f, nil
}

// linkRunConf points the run-conf setting (/run/slurm/conf by default
// from the command line; empty: no link) at the cache, as slurmd does, so that commands run on the node
// outside a job find slurm.conf. It is not an error if it cannot.
func linkRunConf(v *viper.Viper, cache string, logger *slog.Logger) {
	link := v.GetString("run-conf")
	if link == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		logger.Warn("unable to create the folder of the configuration link", "link", link, "err", err)
		return
	}
	if fi, err := os.Lstat(link); err == nil && fi.Mode()&os.ModeSymlink == 0 {
		// A real folder there is a login service's (sackd) own cache.
		logger.Warn("not replacing a folder with the configuration link", "link", link)
		return
	}
	_ = os.Remove(link)
	if err := os.Symlink(cache, link); err != nil {
		logger.Warn("unable to create the configuration link", "link", link, "err", err)
	}
}
