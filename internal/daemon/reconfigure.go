package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/viper"

	"github.com/droverhq/drover/internal/acctdb"
	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/configless"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/metrics"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/restapi"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/slurmerr"
)

// quiesceTimeout bounds how long a reconfigure waits for the requests in
// flight to finish before it gives up and keeps the old configuration.
const quiesceTimeout = 30 * time.Second

// liveController serves the running controller's API and replaces the
// controller when slurm.conf is read again, with the listeners, the
// state and the nodes' registrations kept. A request waits while the
// replacement runs, so that none sees the old controller closed.
type liveController struct {
	v      *viper.Viper
	path   string
	logger *slog.Logger
	opts   restapi.Options
	// keys and auth outlive generations: a reconfigure reads the key
	// files again into keys (a rotation), and auth's replay cache must
	// not forget what it saw.
	keys    *clusterkey.Holder
	auth    *msgauth.Verifier
	fatal   chan error // the daemon cannot go on
	mu      sync.Mutex
	changed *sync.Cond // active or swapping changed
	active  int        // requests in flight
	swap    bool       // a reconfigure is replacing the controller
	cur     *generation
	// own are Drover's own metrics, fed by every generation.
	own *metrics.Controller
	// repl is the replica and its routing when controllers are
	// replicated (nil: one controller).
	repl *replication
	// primaryMu keeps SlurmctldPrimaryOnProg and OffProg in the order
	// of the changes they follow.
	primaryMu sync.Mutex
}

// primaryProg runs SlurmctldPrimaryOnProg (on) or OffProg, once the
// previous one ended, if leading says it still applies.
func (l *liveController) primaryProg(g *generation, on bool) {
	l.primaryMu.Lock()
	defer l.primaryMu.Unlock()
	if g.ctl.Leading() != on {
		return
	}
	key := "SlurmctldPrimaryOffProg"
	if on {
		key = "SlurmctldPrimaryOnProg"
	}
	runPrimaryProg(l.logger, g.cfg.SlurmConf, key)
}

// generation is one controller built from one reading of slurm.conf.
type generation struct {
	cfg     controller.Config
	ctl     *controller.Controller
	handler http.Handler
}

// controllerConfig reads slurm.conf and Drover's settings into a
// controller configuration, job_submit plugins started.
func controllerConfig(v *viper.Viper, path string, logger *slog.Logger) (controller.Config, error) {
	sc, err := LoadConf(path, logger)
	if err != nil {
		return controller.Config{}, err
	}
	cfg, err := controller.ConfigFromSlurm(sc, path)
	if err != nil {
		return controller.Config{}, err
	}
	if len(sc.SlurmctldHosts) > 1 {
		// One of several controllers: this one listens where its own
		// line says.
		self, err := selfController(v, sc)
		if err != nil {
			return controller.Config{}, err
		}
		cfg.ControlHost, cfg.ControlAddr = self.Name, self.Addr
	}
	if d := v.GetString("state-dir"); d != "" {
		cfg.StateDir = d
	}
	if sc.Configless() {
		// Read with slurm.conf, so that a reconfigure hands out the new
		// files and nodes never get files newer than the controller runs.
		if cfg.Configless, err = configless.Load(path, sc); err != nil {
			return controller.Config{}, err
		}
	}
	cfg.Operators, cfg.Administrators = settingList(v, "operators"), settingList(v, "administrators")
	ring, err := ClusterKey(v, sc, path)
	if err != nil {
		return controller.Config{}, err
	}
	// A holder of the generation's own until it starts (liveController.start).
	cfg.Keys = clusterkey.NewHolder(ring)
	if _, cfg.TLSClient, err = ClusterTLS(v, sc, path, ""); err != nil {
		return controller.Config{}, err
	}
	if cfg.JobSubmit, err = jobSubmitChain(sc, path, logger); err != nil {
		return controller.Config{}, err
	}
	if len(sc.SlurmctldHosts) > 1 && embeddedAccounting(sc) {
		if cfg.JobSubmit != nil {
			cfg.JobSubmit.Close()
		}
		// Each controller would write what it accounted while leading
		// into a file of its own, and sacct would answer from whichever
		// leads: records must go where every controller writes.
		return controller.Config{}, fmt.Errorf("%d SlurmctldHost lines: the embedded accounting store (AccountingStorageType=%s) keeps records on one controller's disk; replicated controllers write them to PostgreSQL (accounting_storage/pgsql) or keep none (accounting_storage/none)", len(sc.SlurmctldHosts), orDefault(sc.AccountingStorageType))
	}
	if cfg.Accounting, err = accountingStore(v, sc, cfg.StateDir); err != nil {
		if cfg.JobSubmit != nil {
			cfg.JobSubmit.Close()
		}
		return controller.Config{}, err
	}
	return cfg, nil
}

// accountingStore is the job accounting store slurm.conf asks for, not
// opened yet (nil: accounting_storage/none).
func accountingStore(v *viper.Viper, sc *slurmconf.Config, stateDir string) (controller.AcctStore, error) {
	st := acctdb.Settings{Type: sc.AccountingStorageType, StateDir: stateDir}
	st.Host, _ = sc.Value("AccountingStorageHost")
	st.User, _ = sc.Value("AccountingStorageUser")
	st.Pass, _ = sc.Value("AccountingStoragePass")
	st.Loc, _ = sc.Value("AccountingStorageLoc")
	if p := v.GetString("accounting-storage-pass"); p != "" {
		// Drover's settings keep the password out of slurm.conf, which
		// every host and user reads.
		st.Pass = p
	}
	if port, ok := sc.Value("AccountingStoragePort"); ok {
		n, err := strconv.Atoi(port)
		if err != nil {
			return nil, fmt.Errorf("AccountingStoragePort=%s: %w", port, err)
		}
		st.Port = n
	}
	c, on, err := acctdb.FromSettings(st)
	if err != nil || !on {
		return nil, err
	}
	return acctdb.NewLazy(c), nil
}

// embeddedAccounting reports whether slurm.conf asks for the embedded
// (SQLite) accounting store, explicitly or by default.
func embeddedAccounting(sc *slurmconf.Config) bool {
	c, on, err := acctdb.FromSettings(acctdb.Settings{Type: sc.AccountingStorageType, StateDir: "/"})
	return err == nil && on && c.Kind == acctdb.SQLite
}

func orDefault(t string) string {
	if t == "" {
		return "accounting_storage/slurmdbd, the default"
	}
	return t
}

// settingList reads a list setting given as a YAML list or as a
// comma-separated string (a flag or DROVER_* variable).
func settingList(v *viper.Viper, key string) []string {
	var out []string
	for _, s := range v.GetStringSlice(key) {
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

// start builds and starts a controller and its API from cfg.
func (l *liveController) start(cfg controller.Config, handover *controller.Handover) (*generation, error) {
	cfg.Reload = l.reload
	if l.own != nil {
		cfg.Observer, cfg.StoreOptions.OnCommit = l.own, l.own.Commit
	}
	ring := cfg.Keys.Ring()
	cfg.Keys, cfg.Auth = l.keys, l.auth
	if l.repl != nil {
		cfg.Replicate, cfg.Peers = l.repl.open, l.repl
	}
	ctl, err := controller.New(cfg, l.logger)
	if err != nil {
		return nil, err
	}
	l.keys.Store(ring)
	if handover != nil {
		ctl.Adopt(*handover)
	}
	h, err := restapi.Handler(ctl, l.logger, l.opts)
	if err != nil {
		ctl.Close()
		return nil, err
	}
	ctl.Start()
	return &generation{cfg: cfg, ctl: ctl, handler: h}, nil
}

// close stops the running controller for good.
func (l *liveController) close() {
	l.mu.Lock()
	g := l.cur
	l.cur = nil
	l.mu.Unlock()
	if g != nil {
		leading := l.repl != nil && g.ctl.Leading()
		g.stop(l.logger)
		if leading {
			// slurmctld in control runs it as it shuts down.
			l.primaryMu.Lock()
			runPrimaryProg(l.logger, g.cfg.SlurmConf, "SlurmctldPrimaryOffProg")
			l.primaryMu.Unlock()
		}
	}
}

func (g *generation) stop(logger *slog.Logger) {
	if err := g.ctl.Close(); err != nil {
		logger.Error("close controller", "err", err)
	}
	if g.cfg.JobSubmit != nil {
		g.cfg.JobSubmit.Close()
	}
	if l, ok := g.cfg.Accounting.(*acctdb.Lazy); ok {
		if err := l.Close(); err != nil {
			logger.Error("close the accounting store", "err", err)
		}
	}
}

// leads reports whether this daemon's controller leads (always, when
// it is the only one); a reconfigure under way is waited for.
func (l *liveController) leads() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.swap {
		l.changed.Wait()
	}
	return l.cur != nil && l.cur.ctl.Leading()
}

// leading is the replica's news of an election won or lost. The
// controller is told once no reconfigure is replacing it; one that won
// but cannot lead (its state would not catch up) hands leadership on.
func (l *liveController) leading(lead bool) {
	l.mu.Lock()
	for l.swap {
		l.changed.Wait()
	}
	g := l.cur
	l.mu.Unlock()
	// Not under l.mu: stopping the loops may wait on a write to the
	// accounting store, and requests must not wait with it. A
	// reconfigure that begins meanwhile closes g, which Lead and Follow
	// allow for, and its successor asks the replica itself.
	if g == nil {
		return
	}
	if !lead {
		if g.ctl.Leading() {
			g.ctl.Follow()
			l.primaryProg(g, false)
		}
		return
	}
	was := g.ctl.Leading()
	if err := g.ctl.Lead(); err != nil && !errors.Is(err, controller.ErrClosed) {
		l.logger.Error("elected, but cannot lead: handing leadership over", "err", err)
		if err := l.repl.log.Load().TransferLeadership(""); err != nil {
			l.logger.Error("hand leadership over", "err", err)
		}
		return
	}
	if !was {
		l.primaryProg(g, true)
	}
}

// primaryProgTimeout bounds SlurmctldPrimaryOnProg and OffProg, which
// move things like a service address: a hung one must not hold the
// controller's leadership changes.
const primaryProgTimeout = time.Minute

// runPrimaryProg runs slurm.conf's SlurmctldPrimaryOnProg or
// SlurmctldPrimaryOffProg, as slurmctld runs them when it takes or
// leaves control (to move a service address, say): as the controller's
// own user, with no arguments, its output logged.
func runPrimaryProg(logger *slog.Logger, sc *slurmconf.Config, key string) {
	if sc == nil {
		return
	}
	prog, ok := sc.Value(key)
	if !ok || prog == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), primaryProgTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, prog).CombinedOutput()
	if err != nil {
		logger.Error(key+" failed", "program", prog, "err", err, "output", strings.TrimSpace(string(out)))
		return
	}
	logger.Info(key+" ran", "program", prog)
}

// enter counts a request in flight, once no reconfigure is replacing
// the controller, and returns the controller it runs on; leave ends it.
func (l *liveController) enter() *generation {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.swap {
		l.changed.Wait()
	}
	l.active++
	return l.cur
}

func (l *liveController) leave() {
	l.mu.Lock()
	l.active--
	l.changed.Broadcast()
	l.mu.Unlock()
}

func (l *liveController) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g := l.enter()
	defer l.leave()
	if g == nil {
		// Starting or stopping: another controller may answer.
		standby(w)
		return
	}
	g.handler.ServeHTTP(w, r)
}

// reload is the controllers' Reload: it runs inside the reconfigure
// request. slurm.conf is read and checked first, and a refusal leaves
// the running controller alone; then, once the other requests in flight
// are done, the controller is closed and one built from the new
// configuration opens the same state. Should that fail, the old
// configuration is started again, as slurmctld keeps running when its
// successor does not start.
func (l *liveController) reload(ctx context.Context) error {
	next, err := controllerConfig(l.v, l.path, l.logger)
	if err != nil {
		l.logger.Error("reconfigure: slurm.conf refused, configuration unchanged", "err", err)
		return slurmerr.New(slurmerr.Unspecified, "%v", err)
	}
	dropNext := func() {
		if next.JobSubmit != nil {
			next.JobSubmit.Close()
		}
	}
	refuse := func(err error) error {
		l.mu.Unlock()
		dropNext()
		l.logger.Error("reconfigure refused, configuration unchanged", "err", err)
		return err
	}
	l.mu.Lock()
	if l.swap {
		return refuse(slurmerr.New(slurmerr.Disabled, "a reconfigure is already in progress"))
	}
	old := l.cur
	if err := old.ctl.CheckSuccessor(&next); err != nil {
		return refuse(slurmerr.New(slurmerr.Unspecified, "%v", err))
	}
	if err := checkFixed(old.cfg, next); err != nil {
		return refuse(slurmerr.New(slurmerr.Unspecified, "%v", err))
	}
	l.swap = true
	// This request is in flight too: wait for the others.
	timer := time.AfterFunc(quiesceTimeout, func() {
		l.mu.Lock()
		l.changed.Broadcast()
		l.mu.Unlock()
	})
	deadline := time.Now().Add(quiesceTimeout)
	for l.active > 1 && time.Now().Before(deadline) {
		l.changed.Wait()
	}
	timer.Stop()
	busy := l.active > 1
	l.mu.Unlock()
	finish := func(g *generation) {
		l.mu.Lock()
		l.cur, l.swap = g, false
		l.changed.Broadcast()
		l.mu.Unlock()
	}
	if busy {
		finish(old)
		dropNext()
		return slurmerr.New(slurmerr.Unspecified, "reconfigure: requests still in flight after %s; configuration unchanged", quiesceTimeout)
	}
	handover := old.ctl.Handover()
	// The old controller closes; its job_submit plugins stay up until its
	// successor runs, so that falling back keeps them.
	if err := old.ctl.Close(); err != nil {
		l.logger.Error("close controller", "err", err)
	}
	g, err := l.start(next, &handover)
	if err == nil {
		finish(g)
		if old.cfg.JobSubmit != nil {
			old.cfg.JobSubmit.Close()
		}
		l.logger.Info("reconfigured: the controller runs the new slurm.conf")
		go g.ctl.ReconfigureNodes(context.Background())
		if l.repl != nil && g.cfg.SlurmConf != nil {
			go l.repl.reconfigured(context.Background(), g.cfg.SlurmConf)
		}
		return nil
	}
	dropNext()
	l.logger.Error("reconfigure: the new configuration did not start; starting the old one again", "err", err)
	back, berr := l.start(old.cfg, &handover)
	if berr != nil {
		finish(nil)
		if old.cfg.JobSubmit != nil {
			old.cfg.JobSubmit.Close()
		}
		l.fatal <- fmt.Errorf("reconfigure: the old configuration did not start again either: %w", errors.Join(err, berr))
		return slurmerr.New(slurmerr.Unspecified, "reconfigure failed and the controller stopped: %v", berr)
	}
	finish(back)
	return slurmerr.New(slurmerr.Unspecified, "reconfigure: %v; configuration unchanged", err)
}

// reloadOnSignal is reload for SIGHUP, on which slurmctld reconfigures
// too (systemd's ExecReload): it counts as a request in flight, as reload
// expects of its caller.
func (l *liveController) reloadOnSignal(ctx context.Context) error {
	l.enter()
	defer l.leave()
	return l.reload(ctx)
}

// checkFixed refuses changes a reconfigure cannot make: where the
// controller listens and keeps its state, as slurmctld's reconfigure
// cannot change its listening ports either.
func checkFixed(old, next controller.Config) error {
	var problems []string
	if old.Port != next.Port {
		problems = append(problems, fmt.Sprintf("SlurmctldPort %d -> %d", old.Port, next.Port))
	}
	if old.ControlAddr != next.ControlAddr || old.ControlHost != next.ControlHost {
		problems = append(problems, fmt.Sprintf("SlurmctldHost %s -> %s", old.ControlHost, next.ControlHost))
	}
	if old.StateDir != next.StateDir {
		problems = append(problems, fmt.Sprintf("StateSaveLocation %s -> %s", old.StateDir, next.StateDir))
	}
	if len(problems) > 0 {
		return fmt.Errorf("these need the controller restarted: %s", strings.Join(problems, ", "))
	}
	return nil
}
