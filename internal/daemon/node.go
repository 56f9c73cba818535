package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/failover"
	"github.com/droverhq/drover/internal/nodeagent"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/tlsconf"
	"github.com/droverhq/drover/spank/plugconf"
)

// Version is Drover's own version, set at build time.
var Version = "0.1.0-dev"

// RunNode runs a node daemon until ctx ends.
func RunNode(ctx context.Context, v *viper.Viper, logger *slog.Logger) error {
	sweepPluginSockets(logger)
	path := ConfPath(v.GetString("conf"))
	// keyBase is the slurm.conf path beside which the key and the TLS
	// files are: a configless node runs from its cache, where neither
	// is ever written.
	keyBase := path
	name := hostName(v)
	var fetch *fetcher
	if wantsConfigless(v) {
		cached, f, err := nodeConfigless(ctx, v, name, keyBase, logger)
		if err != nil {
			return noController(v, path, err)
		}
		path, fetch = cached, f
	}
	sc, err := LoadConf(path, logger)
	if err != nil {
		return err
	}
	if fetch != nil {
		fetch.addControllers(sc)
	}
	dynamic := strings.TrimSpace(v.GetString("dynamic"))
	nc, err := nodeLine(sc, path, name, dynamic)
	if err != nil {
		return err
	}
	if sc.Node(name) != nil {
		dynamic = ""
	}
	port := int(nc.Port)
	if port == 0 {
		port = int(sc.SlurmdPort)
	}
	listen := v.GetString("listen")
	if listen == "" {
		listen = net.JoinHostPort(nodeAddr(nc), strconv.Itoa(port))
	}
	spool := strings.ReplaceAll(sc.SlurmdSpoolDir, "%n", name)
	if d := v.GetString("spool-dir"); d != "" {
		spool = d
	}
	cg, err := slurmconf.LoadCgroupConf(filepath.Join(confDir(path), "cgroup.conf"))
	if err != nil {
		return err
	}
	gpus, source, gresPlugin, err := nodeGPUs(ctx, v, sc, path, name, logger)
	if err != nil {
		return err
	}
	tlsServer, tlsClient, err := ClusterTLS(v, sc, keyBase, tlsconf.Slurmd)
	if err != nil {
		return err
	}
	scheme := "http"
	if tlsClient != nil {
		scheme = "https"
	}
	cfg := nodeagent.Config{
		Name:        name,
		Dynamic:     dynamic,
		Controllers: controllerURLs(sc, scheme),
		Retry:       failover.Windows(sc.MessageTimeout, sc.SlurmctldTimeout),
		TLSServer:   tlsServer,
		TLSClient:   tlsClient,
		Listen:      listen,
		SpoolDir:    spool,
		CPUs:        uint32(nc.CPUs),
		RealMemory:  nc.RealMemory,
		GPUs:        gpus,
		GPUSource:   source,
		Version:     Version,
		// Several clusters (tests, dev) may share a machine: the cgroup
		// subtree names the cluster as well as the node.
		CgroupRoot:       "drover/" + sc.ClusterName + "/" + name,
		ConstrainDevices: cg.ConstrainDevices,
		HealthInterval:   v.GetDuration("gpu-health-interval"),
		AcctGather:       sc.JobAcctGatherType,
		AcctGatherFreq:   sc.JobAcctGatherFrequency,
	}
	cfg.PMIxPlugin = helperPath("drover-mpi-pmix")
	if gresPlugin != nil {
		// A nil *host.Gres in the interface would not be nil.
		cfg.Gres = gresPlugin
	}
	if v.GetBool("no-cgroups") {
		cfg.DisableCgroups = true
	}
	ring, err := ClusterKey(v, sc, keyBase)
	if err != nil {
		return err
	}
	cfg.Keys = clusterkey.NewHolder(ring)
	if fetch != nil {
		// Jobs read this host's copy, not the controller's path, and the
		// fetches are signed with the key the daemon holds from now on.
		cfg.ConfPath = path
		fetch.client.Signer.Keys = cfg.Keys
		if tlsClient != nil {
			// Later fetches follow the cluster's TLS.
			fetch.client = nodeproto.NewClient(fetch.client.Signer, tlsClient)
		}
	}
	ai, err := sc.AuthInfo()
	if err != nil {
		return err
	}
	cfg.AuthTTL = ai.TTL
	cfg.PlugStack, cfg.PluginDir = plugconf.ConfPaths(sc, path)
	cfg.Reload = func() (nodeagent.Reloaded, error) {
		if fetch != nil {
			// Configless: the controller's files first, as slurmd takes
			// them with REQUEST_RECONFIGURE_WITH_CONFIG. A failed fetch
			// leaves the cache and the configuration as they were.
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if _, err := fetch.fetch(ctx); err != nil {
				return nodeagent.Reloaded{}, fmt.Errorf("fetch the configuration: %w", err)
			}
		}
		return reloadNode(v, path, keyBase, name, dynamic, logger)
	}
	servePprof(ctx, v, logger)
	a, err := nodeagent.New(cfg, logger)
	if err != nil {
		if gresPlugin != nil {
			gresPlugin.Close()
		}
		return err
	}
	defer a.Close()
	if fetch != nil && fetch.last == nil {
		go fetch.untilFetched(ctx, retryOf(v), func() { _ = a.Reconfigure() })
	}
	// The node daemon is its host's credential service, as slurmd is
	// for auth/slurm. On a host with several node daemons (tests,
	// multiple-slurmd) the first to start serves it.
	if _, err := startSack(ctx, sackSocket(v, sc), name, cfg.Keys, cfg.AuthTTL, logger); errors.Is(err, syscall.EADDRINUSE) {
		logger.Info("another daemon of this host serves its credential service", "socket", sackSocket(v, sc))
	} else if err != nil {
		logger.Warn("credential service not started: commands on this host cannot reach the controller over TCP", "err", err)
	}
	// SIGHUP reads the files again, as the controller's reconfigure
	// does (and slurmd's SIGHUP).
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	// The node daemon is ready once it serves launches.
	ready := make(chan net.Addr, 1)
	go func() {
		select {
		case <-ready:
		case <-ctx.Done():
			return
		}
		stopping := announce(ctx, logger)
		defer stopping()
		for {
			select {
			case <-hup:
				_ = a.Reconfigure() // logged there
			case <-ctx.Done():
				return
			}
		}
	}()
	return a.Run(ctx, ready)
}

// nodeLine is the node's NodeName line: slurm.conf's, or for a node it
// does not list the --dynamic definition (slurmd -Z).
func nodeLine(sc *slurmconf.Config, path, name, dynamic string) (*slurmconf.Node, error) {
	if nc := sc.Node(name); nc != nil {
		return nc, nil
	}
	if dynamic == "" {
		return nil, fmt.Errorf("node %s is not defined in %s (a dynamic node needs --dynamic \"CPUs=... RealMemory=...\")", name, path)
	}
	own, err := slurmconf.ParseNodeLine("NodeName=" + name + " " + dynamic)
	if err != nil || len(own) != 1 {
		return nil, fmt.Errorf("--dynamic %q: not a node definition: %v", dynamic, err)
	}
	nc := &own[0]
	if nc.Port == 0 {
		nc.Port = sc.SlurmdPort
	}
	return nc, nil
}

// reloadNode reads slurm.conf and cgroup.conf again for scontrol
// reconfigure: what of them a running node daemon can take.
func reloadNode(v *viper.Viper, path, keyBase, name, dynamic string, logger *slog.Logger) (nodeagent.Reloaded, error) {
	sc, err := LoadConf(path, logger)
	if err != nil {
		return nodeagent.Reloaded{}, err
	}
	nc, err := nodeLine(sc, path, name, dynamic)
	if err != nil {
		return nodeagent.Reloaded{}, err
	}
	cg, err := slurmconf.LoadCgroupConf(filepath.Join(confDir(path), "cgroup.conf"))
	if err != nil {
		return nodeagent.Reloaded{}, err
	}
	ring, err := ClusterKey(v, sc, keyBase)
	if err != nil {
		return nodeagent.Reloaded{}, err
	}
	r := nodeagent.Reloaded{CPUs: uint32(nc.CPUs), RealMemory: nc.RealMemory, ConstrainDevices: cg.ConstrainDevices, Keys: ring}
	r.PlugStack, r.PluginDir = plugconf.ConfPaths(sc, path)
	return r, nil
}

func nodeAddr(n *slurmconf.Node) string {
	if n.Addr != "" {
		return n.Addr
	}
	return n.Name
}

// controllerURLs are the controllers' REST addresses, SlurmctldHost
// order.
func controllerURLs(sc *slurmconf.Config, scheme string) []string {
	var out []string
	for _, a := range sc.ControllerAddrs() {
		out = append(out, scheme+"://"+a)
	}
	return out
}

// confDir is where gres.conf sits next to slurm.conf.
func confDir(confPath string) string { return filepath.Dir(confPath) }
