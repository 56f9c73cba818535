// Package nodeagent is Drover's slurmd: it registers a node with the
// controller, sends heartbeats, runs batch jobs as their users with Slurm's
// environment and output files, runs the tasks of srun's job steps with
// their I/O streamed to srun (slurmstepd's part, step.go), enforces kill
// requests on whole process trees, and reports how each job ended until
// the controller acknowledges.
package nodeagent

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/droverhq/drover/plugins/host"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/failover"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/proctrack"
	stepcred "github.com/droverhq/drover/internal/step/cred"
)

// Config configures a node daemon.
type Config struct {
	// Dynamic is the node's definition when slurm.conf does not list it
	// (slurmd -Z): the controller makes it a dynamic node.
	Dynamic string
	Name    string
	// Controllers are the controllers' base URLs (http://host:port),
	// SlurmctldHost order: each message goes to whichever is up, as
	// slurmd reaches a backup slurmctld when the primary is down.
	Controllers []string
	// Retry bounds how long a message keeps trying the controllers
	// (zero: failover's defaults, Slurm's).
	Retry failover.Options
	// Listen is the address to serve launches on (SlurmdPort).
	Listen string
	// Advertise is the address the controller should use (defaults to the
	// listener's).
	Advertise string
	SpoolDir  string
	// ConfPath, when set, is the slurm.conf jobs get as SLURM_CONF
	// instead of the controller's path: a configless node's cache.
	ConfPath   string
	CPUs       uint32
	RealMemory uint64
	GPUs       []nodeproto.GPU
	GPUSource  string
	Version    string
	// CgroupRoot names this daemon's cgroup subtree; empty disables
	// cgroups (process groups only).
	CgroupRoot     string
	DisableCgroups bool
	// Keys is the cluster key (slurm.key or slurm.jwks): the messages
	// between the daemon and the controller are signed with it, and so
	// are step credentials. Without it every request is refused.
	Keys *clusterkey.Holder
	// AuthTTL is how long a signed message lives (AuthInfo's ttl=; 0:
	// msgauth.DefaultTTL).
	AuthTTL time.Duration
	// TLSServer and TLSClient are TLSType=tls/s2n's: the daemon listens
	// with its certificate and reaches the controller (Controllers are
	// then https) trusting the cluster's CA. Nil: plain HTTP.
	TLSServer, TLSClient *tls.Config
	// PlugStack is plugstack.conf (none: no launch hooks); PluginDir
	// the colon-separated folders its relative plugin paths are in.
	PlugStack, PluginDir string
	// Gres is the GPU plugin that discovered GPUs (nil: gres.conf or
	// slurm.conf described them); HealthInterval how often it is asked
	// for GPU failures (default DefaultHealthInterval). The agent closes
	// it.
	Gres           GresPlugin
	HealthInterval time.Duration
	// PMIxPlugin is the program that serves srun --mpi=pmix
	// (drover-mpi-pmix), started on the first such step ("": none).
	PMIxPlugin string
	// Reload reads the daemon's files again when the controller asks
	// (scontrol reconfigure); nil: it cannot.
	Reload func() (Reloaded, error)
	// ConstrainDevices is cgroup.conf's ConstrainDevices=yes: tasks
	// cannot open the node's GPUs they were not given.
	ConstrainDevices bool
	// AcctGather is JobAcctGatherType ("": GatherLinux); AcctGatherFreq
	// the task sampling interval of JobAcctGatherFrequency (0: only
	// when sstat asks).
	AcctGather     string
	AcctGatherFreq time.Duration
}

// Agent is a running node daemon.
type Agent struct {
	cfg    Config
	logger *slog.Logger
	// client sends to the controllers, ctl is the base URL its
	// requests name (the first controller; the failover picks).
	client *nodeproto.Client
	ctl    string
	// auth checks the controller's messages to this node.
	auth    *msgauth.Verifier
	tracker *proctrack.Tracker
	started time.Time

	spank spankState
	files files
	// pmix is the PMIx plugin, once a step needed it.
	pmixOnce sync.Once
	pmix     *host.MPI

	mu   sync.Mutex
	jobs map[uint32]*runningJob
	done map[uint32]nodeproto.JobDone // finished, not yet acknowledged
	lost map[uint32]bool
	// ended lists jobs told to end before their launch arrived (the two
	// requests race); their launch is answered by an immediate end.
	ended    map[uint32]nodeproto.EndKind
	hbEvery  time.Duration
	kickDone chan struct{}
	needReg  chan struct{}

	// steps are the job steps running here (srun's tasks); replay
	// refuses a step credential used twice. closing refuses new steps
	// while the daemon stops; stepCtx ends with it; stepWG counts the
	// steps' goroutines.
	steps      map[stepKey]*step
	replay     *stepcred.ReplayCache
	closing    bool
	stepCtx    context.Context
	stepCancel context.CancelFunc
	stepWG     sync.WaitGroup

	addr net.Addr
	// metrics are the daemon's own (PathMetrics).
	metrics *agentMetrics
}

// New prepares an agent: spool folder, process tracking, and the jobs a
// previous run of this daemon left behind.
func New(cfg Config, logger *slog.Logger) (*Agent, error) {
	if err := os.MkdirAll(cfg.SpoolDir, 0o755); err != nil {
		return nil, fmt.Errorf("create spool folder: %w", err)
	}
	tr, err := proctrack.New(proctrack.Options{Root: cgroupRoot(cfg), DisableCgroups: cfg.DisableCgroups || cfg.CgroupRoot == ""})
	if err != nil {
		return nil, fmt.Errorf("process tracking: %w", err)
	}
	signer := &msgauth.Signer{Keys: cfg.Keys, Issuer: msgauth.Node(cfg.Name), TTL: cfg.AuthTTL}
	client, ctl, err := nodeproto.NewControllerClient(signer, cfg.TLSClient, cfg.Controllers, cfg.Retry)
	if err != nil {
		return nil, fmt.Errorf("controllers: %w", err)
	}
	a := &Agent{
		cfg: cfg, logger: logger, tracker: tr,
		client: client, ctl: ctl,
		auth: &msgauth.Verifier{Keys: cfg.Keys, Audience: msgauth.Node(cfg.Name), MaxTTL: cfg.AuthTTL,
			Since: time.Now(), Replay: msgauth.NewReplay()},
		started:  time.Now(),
		jobs:     map[uint32]*runningJob{},
		done:     map[uint32]nodeproto.JobDone{},
		lost:     map[uint32]bool{},
		ended:    map[uint32]nodeproto.EndKind{},
		hbEvery:  5 * time.Second,
		kickDone: make(chan struct{}, 1),
		needReg:  make(chan struct{}, 1),
		steps:    map[stepKey]*step{},
		replay:   stepcred.NewReplayCache(),
	}
	a.metrics = newAgentMetrics(a)
	a.files.Store(reloadedOf(&cfg))
	a.stepCtx, a.stepCancel = context.WithCancel(context.Background())
	if err := a.recoverSpool(); err != nil {
		return nil, err
	}
	logger.Info("process tracking", "mode", tr.Mode())
	return a, nil
}

func cgroupRoot(cfg Config) string {
	if cfg.CgroupRoot != "" {
		return cfg.CgroupRoot
	}
	return "drover/" + cfg.Name
}

// recoverSpool finds jobs a previous run left: finished ones are reported
// again; ones without an exit status lost their processes with the daemon.
func (a *Agent) recoverSpool() error {
	entries, err := os.ReadDir(a.cfg.SpoolDir)
	if err != nil {
		return fmt.Errorf("read spool folder: %w", err)
	}
	for _, e := range entries {
		id, ok := strings.CutPrefix(e.Name(), "job")
		if !ok || !e.IsDir() {
			continue
		}
		n, err := strconv.ParseUint(id, 10, 32)
		if err != nil {
			continue
		}
		dir := filepath.Join(a.cfg.SpoolDir, e.Name())
		var d nodeproto.JobDone
		if data, err := os.ReadFile(filepath.Join(dir, "done.json")); err == nil && json.Unmarshal(data, &d) == nil {
			a.done[uint32(n)] = d
			continue
		}
		a.lost[uint32(n)] = true
	}
	// Processes of lost jobs may still run: end them.
	if orphans, err := a.tracker.Orphans(); err == nil {
		for _, name := range orphans {
			if g, err := a.tracker.Adopt(name); err == nil {
				_ = g.Kill()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_ = g.Destroy(ctx)
				cancel()
			}
		}
	}
	return nil
}

// Addr is where the agent listens (after Run started).
func (a *Agent) Addr() net.Addr { return a.addr }

// Run serves launches and keeps the controller informed until ctx ends.
func (a *Agent) Run(ctx context.Context, ready chan<- net.Addr) error {
	ln, err := net.Listen("tcp", a.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", a.cfg.Listen, err)
	}
	if a.cfg.TLSServer != nil {
		ln = tls.NewListener(ln, a.cfg.TLSServer)
	}
	a.addr = ln.Addr()
	mux := http.NewServeMux()
	mux.Handle("POST "+nodeproto.PathLaunch, a.fromController(a.handleLaunch))
	mux.Handle("POST "+nodeproto.PathSignal, a.fromController(a.handleSignal))
	// A step launch comes from srun, a user's program: the step
	// credential the controller signed is its proof (verifyStepCred).
	mux.HandleFunc("POST "+nodeproto.PathStepLaunch, a.handleStepLaunch)
	mux.Handle("POST "+nodeproto.PathReconfigure, a.fromController(a.handleReconfigure))
	mux.Handle("POST "+nodeproto.PathStepStat, a.fromController(a.handleStepStat))
	// Status counts only, to scrapers without credentials (metrics.go).
	mux.Handle("GET "+PathMetrics, a.metrics.handler())
	// Anyone on the network may connect: a slow or idle client holds a
	// connection for bounded times only (bodies are at most MaxBody).
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		WriteTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready <- ln.Addr()
	}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); a.controllerLoop(ctx) }()
	go func() { defer wg.Done(); a.reportLoop(ctx) }()
	go func() { defer wg.Done(); a.healthLoop(ctx) }()
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	a.endSteps()
	wg.Wait()
	return err
}

func (a *Agent) advertise() string {
	if a.cfg.Advertise != "" {
		return a.cfg.Advertise
	}
	return a.addr.String()
}

// controllerLoop registers, then heartbeats; any sign that the controller
// forgot the node (a restart) leads to a new registration.
func (a *Agent) controllerLoop(ctx context.Context) {
	registered := false
	backoff := 100 * time.Millisecond
	for {
		if !registered {
			if err := a.register(ctx); err != nil {
				a.logger.Warn("registration failed, retrying", "err", err, "in", backoff)
				if !sleep(ctx, backoff) {
					return
				}
				backoff = min(backoff*2, 5*time.Second)
				continue
			}
			registered, backoff = true, 100*time.Millisecond
		}
		a.mu.Lock()
		every := a.hbEvery
		a.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-a.needReg:
			registered = false
			continue
		case <-time.After(every):
		}
		if err := a.heartbeat(ctx); err != nil {
			var se *nodeproto.StatusError
			if errors.As(err, &se) && se.Code == http.StatusConflict {
				registered = false
				continue
			}
			a.logger.Warn("heartbeat failed", "err", err)
			registered = false
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

func (a *Agent) register(ctx context.Context) error {
	files := a.current()
	reg := nodeproto.Register{
		Name: a.cfg.Name, Addr: a.advertise(), CPUs: files.CPUs, RealMemory: files.RealMemory,
		FreeMemMB: freeMemMB(), GPUs: a.cfg.GPUs, GPUSource: a.cfg.GPUSource,
		BootTime: bootTime(), Started: a.started, Version: a.cfg.Version,
		Arch: machine(), OS: osRelease(), Dynamic: a.cfg.Dynamic,
	}
	a.mu.Lock()
	for id := range a.jobs {
		reg.Jobs = append(reg.Jobs, nodeproto.JobStatus{JobID: id, Running: true})
	}
	for id, d := range a.done {
		d := d
		reg.Jobs = append(reg.Jobs, nodeproto.JobStatus{JobID: id, Done: &d})
	}
	for id := range a.lost {
		reg.Jobs = append(reg.Jobs, nodeproto.JobStatus{JobID: id, Lost: true})
	}
	a.mu.Unlock()
	var reply nodeproto.RegisterReply
	// A registration the controller may have taken, sent again, tells
	// it the same: safe to retry on another controller.
	if err := a.client.Post(failover.Idempotent(ctx), msgauth.Controller, a.ctl+nodeproto.PathRegister, reg, &reply); err != nil {
		return err
	}
	a.mu.Lock()
	if reply.HeartbeatEvery > 0 {
		a.hbEvery = reply.HeartbeatEvery
	}
	// The controller has now seen these reports.
	for _, js := range reg.Jobs {
		if js.Done != nil || js.Lost {
			delete(a.lost, js.JobID)
			a.forgetLocked(js.JobID)
		}
	}
	var kill []*runningJob
	for _, id := range reply.Kill {
		if j := a.jobs[id]; j != nil {
			kill = append(kill, j)
		}
	}
	a.mu.Unlock()
	for _, j := range kill {
		a.logger.Warn("controller does not know job, killing it", "job", j.id)
		j.terminate(nodeproto.EndCancelled, 0)
	}
	for _, id := range reply.Kill {
		// Its steps here go with it.
		for _, s := range a.stepsOf(id, nil) {
			s.terminate(0)
		}
	}
	a.logger.Info("registered with controller", "node", a.cfg.Name, "addr", reg.Addr)
	return nil
}

func (a *Agent) heartbeat(ctx context.Context) error {
	hb := nodeproto.Heartbeat{Name: a.cfg.Name, FreeMemMB: freeMemMB(), Load: loadAvg()}
	a.mu.Lock()
	for id := range a.jobs {
		hb.Running = append(hb.Running, id)
	}
	a.mu.Unlock()
	return a.client.Post(failover.Idempotent(ctx), msgauth.Controller, a.ctl+nodeproto.PathHeartbeat, hb, nil)
}

// reportLoop delivers job ends until the controller acknowledges each.
func (a *Agent) reportLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-a.kickDone:
		case <-time.After(time.Second):
		}
		a.mu.Lock()
		pending := make([]nodeproto.JobDone, 0, len(a.done))
		for _, d := range a.done {
			pending = append(pending, d)
		}
		a.mu.Unlock()
		for _, d := range pending {
			// Sent until acknowledged anyway: a second copy is one the
			// controller already expects.
			err := a.client.Post(failover.Idempotent(ctx), msgauth.Controller, a.ctl+nodeproto.PathJobDone, d, nil)
			if err != nil {
				a.logger.Debug("job end report failed, will retry", "job", d.JobID, "err", err)
				break
			}
			a.mu.Lock()
			if cur, ok := a.done[d.JobID]; ok && cur.Run == d.Run {
				a.forgetLocked(d.JobID)
			}
			a.mu.Unlock()
		}
	}
}

// forgetLocked drops a job's reported end and its spool folder, unless a
// new run of the job has started here meanwhile (a requeued job may come
// back to the same node). Caller holds a.mu.
func (a *Agent) forgetLocked(id uint32) {
	delete(a.done, id)
	if a.jobs[id] == nil {
		_ = os.RemoveAll(a.jobDir(id))
	}
}

func (a *Agent) jobDir(id uint32) string {
	return filepath.Join(a.cfg.SpoolDir, "job"+strconv.FormatUint(uint64(id), 10))
}

func (a *Agent) handleLaunch(w http.ResponseWriter, r *http.Request) {
	var l nodeproto.Launch
	if err := nodeproto.Decode(r, &l); err != nil {
		nodeproto.Fail(w, http.StatusBadRequest, err)
		return
	}
	if err := a.launch(&l); err != nil {
		nodeproto.Fail(w, http.StatusInternalServerError, err)
		return
	}
	nodeproto.Reply(w, http.StatusOK, struct{}{})
}

func (a *Agent) handleSignal(w http.ResponseWriter, r *http.Request) {
	var s nodeproto.Signal
	if err := nodeproto.Decode(r, &s); err != nil {
		nodeproto.Fail(w, http.StatusBadRequest, err)
		return
	}
	if s.StepsOnly || s.StepID != nil {
		// Only the job's steps here: a node that runs none of the
		// job's batch script has nothing else to reach, and nothing
		// to remember for a launch that may follow.
		a.signalSteps(&s)
		nodeproto.Reply(w, http.StatusOK, struct{}{})
		return
	}
	if s.Terminate {
		// Ending a job ends its steps on this node too.
		a.signalSteps(&s)
	}
	a.mu.Lock()
	j := a.jobs[s.JobID]
	_, finished := a.done[s.JobID]
	if j == nil && s.Terminate && !finished {
		a.ended[s.JobID] = s.Kind
	}
	a.mu.Unlock()
	if j == nil {
		if s.Terminate {
			// Ended before it started here: the launch, when it comes,
			// is not run.
			nodeproto.Reply(w, http.StatusOK, struct{}{})
			return
		}
		nodeproto.Fail(w, http.StatusNotFound, fmt.Errorf("job %d is not running here", s.JobID))
		return
	}
	if s.Terminate {
		j.terminate(s.Kind, s.KillWait)
	} else if err := j.signal(syscall.Signal(s.Signal), s.ShellOnly); err != nil {
		nodeproto.Fail(w, http.StatusInternalServerError, err)
		return
	}
	nodeproto.Reply(w, http.StatusOK, struct{}{})
}

// finish records a job's end durably and queues its report.
func (a *Agent) finish(d nodeproto.JobDone) {
	data, _ := json.Marshal(d)
	if err := os.WriteFile(filepath.Join(a.jobDir(d.JobID), "done.json"), data, 0o600); err != nil {
		a.logger.Error("record job end", "job", d.JobID, "err", err)
	}
	a.mu.Lock()
	delete(a.jobs, d.JobID)
	a.done[d.JobID] = d
	a.mu.Unlock()
	select {
	case a.kickDone <- struct{}{}:
	default:
	}
}

// Close ends the job steps still running (when Run did not) and removes
// this daemon's cgroup subtree.
func (a *Agent) Close() error {
	a.endSteps()
	a.closeSpank()
	if a.pmix != nil {
		a.pmix.Close()
	}
	if a.cfg.Gres != nil {
		a.cfg.Gres.Close()
	}
	return a.tracker.Cleanup()
}

// fromController lets through only requests the controller signed for
// this node with the cluster key: a launch, signal or reconfigure from
// anyone else, or meant for another node, or replayed, is refused and
// logged.
func (a *Agent) fromController(next http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		claims, err := a.auth.VerifyRequest(r, nodeproto.MaxBody)
		if err == nil && !claims.FromController() {
			err = fmt.Errorf("%w: %s token from %s, not the controller's", msgauth.ErrInvalid, claims.Kind, claims.Issuer())
		}
		if err != nil {
			a.logger.Warn("request refused", "path", r.URL.Path, "source", r.RemoteAddr, "err", err)
			nodeproto.Fail(w, http.StatusUnauthorized, err)
			return
		}
		next(w, r)
	})
}
