// Package controller is Drover's slurmctld: it owns the durable job and node
// state (a command log applied to an in-memory state machine), runs the
// scheduler, talks to node daemons, and offers the services that the REST
// bridges call. It knows nothing of wire formats.
package controller

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/configless"
	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/jobcomp"
	"github.com/droverhq/drover/internal/jobsubmit"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/priority"
	"github.com/droverhq/drover/internal/replog"
	"github.com/droverhq/drover/internal/sched"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/droverhq/drover/internal/state"
	"github.com/droverhq/drover/internal/topology"
)

// Config is what the controller needs from slurm.conf and Drover's settings.
type Config struct {
	ClusterName string
	// PrivateData is slurm.conf's PrivateData= list ("jobs", "nodes",
	// "usage"...): what users other than operators may not see of
	// others.
	PrivateData []string
	// MetricsType is slurm.conf's MetricsType: "metrics/openmetrics"
	// serves the Slurm metrics sets; "" serves them empty, as slurmctld
	// without a metrics plugin does.
	MetricsType string
	// JobSubmit is JobSubmitPlugins' filters (nil: none).
	JobSubmit *jobsubmit.Chain
	// Licenses are slurm.conf's Licenses=, the cluster's own (not from
	// the database).
	Licenses []slurmconf.License
	// JobComp is JobCompType's job completion log (nil: jobcomp/none).
	JobComp *jobcomp.Writer
	// Accounting is the job accounting store (nil:
	// accounting_storage/none).
	Accounting AcctStore
	// RequeueDelay is how long a requeued job waits before it may start
	// again (AuthInfo cred_expire + 1 s; 0: not at all).
	RequeueDelay time.Duration
	// TRES are the TRES the cluster tracks (AccountingStorageTRES as
	// slurmctld completes it), in its order.
	TRES []string
	// ControlHost is SlurmctldHost's name; ControlAddr where it listens.
	ControlHost string
	ControlAddr string
	Port        int
	// SlurmConfPath is passed to jobs as SLURM_CONF; SlurmConf is what
	// the controller read there (nil when the configuration was built
	// otherwise, as in tests).
	SlurmConfPath string
	SlurmConf     *slurmconf.Config
	StateDir      string
	SlurmdTimeout time.Duration
	KillWait      time.Duration
	MinJobAge     time.Duration
	FirstJobID    uint32
	MaxArraySize  uint32
	Defaults      sched.Defaults
	Nodes         []node.Node
	Partitions    []partition.Partition
	// SlurmUser may act on every job, like root.
	SlurmUserID uint32
	// Operators and Administrators are users Drover's settings give
	// those AdminLevels, beside the accounting model's.
	Operators      []string
	Administrators []string
	// MaxNodeCount bounds how many nodes, dynamic ones included, the
	// cluster may have (0: no bound).
	MaxNodeCount int
	// Configless are the files handed to node daemons and login hosts
	// (SlurmctldParameters=enable_configless), read with slurm.conf;
	// nil: configless mode is off and their requests are refused.
	Configless *configless.Served
	// Reload reads slurm.conf again and replaces this controller with
	// one built from it (scontrol reconfigure); nil: it cannot.
	Reload func(ctx context.Context) error
	// NoJobRequeue is slurm.conf's JobRequeue=0: batch jobs are not
	// requeued unless they ask (--requeue).
	NoJobRequeue bool
	// ReturnToService is slurm.conf's: 1 or 2 let a node that was DOWN for
	// not responding return when it registers again.
	ReturnToService int
	// KillInvalidDepend cancels a job whose dependency can never be
	// satisfied (DependencyParameters=kill_invalid_depend) instead of
	// leaving it pending with reason DependencyNeverSatisfied.
	KillInvalidDepend bool
	// Scheduler is SchedulerType: "sched/backfill" (the default) or
	// "sched/builtin" (the main pass alone).
	Scheduler string
	// Backfill are SchedulerParameters' bf_* settings.
	Backfill sched.BackfillParams
	// Priority is priority/multifactor's settings (nil: priority/basic,
	// where a job keeps the priority it was given at submission).
	Priority *priority.Config
	// Topology is topology.conf's switches or blocks (nil: flat).
	Topology *topology.Topology
	// PreemptByPartition is PreemptType=preempt/partition_prio: a job may
	// preempt running jobs of partitions of a lower PriorityTier whose
	// PreemptMode is not OFF.
	PreemptByPartition bool
	// PreemptByQOS is PreemptType=preempt/qos: a job may preempt running
	// jobs whose QOS its own QOS's Preempt list names.
	PreemptByQOS bool
	// Enforce is AccountingStorageEnforce.
	Enforce assoc.Enforce
	// Keys are the cluster key (slurm.key or slurm.jwks): job step
	// credentials and the messages to node daemons are signed with it.
	Keys *clusterkey.Holder
	// AuthTTL is how long a signed message lives (AuthInfo's ttl=; 0:
	// msgauth.DefaultTTL).
	AuthTTL time.Duration
	// TLSClient is how the controller reaches the node daemons over TLS
	// (nil: plain HTTP; TLSType=tls/s2n).
	TLSClient *tls.Config
	// Auth checks the node daemons' messages and the users' credentials
	// their hosts sign (nil: one made from Keys). The daemon shares one
	// across reconfigures, so that its replay cache survives them.
	Auth *msgauth.Verifier
	// Warnings are what deriving the configuration found wrong but
	// survivable; New logs them.
	Warnings []string
	// SchedInterval bounds how long a pending job waits for a cycle when
	// nothing kicks the scheduler.
	SchedInterval time.Duration
	// StoreOptions tune the state log.
	StoreOptions state.Options
	// Replicate, when set, gives the controller a replica of the
	// replicated log (several SlurmctldHost lines) instead of a state
	// log of its own: it is called with the controller's state machine
	// and returns the replica, opened or handed over to it. The daemon
	// owns the replica, which outlives reconfigures.
	Replicate func(fsm state.FSM) (*replog.Log, error)
	// Peers are the other controllers when there are several (the
	// daemon's replication); nil: this one alone, which answers for
	// itself.
	Peers Peers
	// Observer receives the timings Drover's own metrics report
	// (scheduling passes, heartbeats, plugin calls); nil: none. The
	// daemon keeps one across reconfigures, so that counts carry on.
	Observer Observer
	// Now, when set, replaces time.Now as the controller's clock, so that
	// tests (and later the trace simulator) can drive time limits, node
	// timeouts and purges without waiting.
	Now func() time.Time
}

// Identity is the authenticated caller of a service.
type Identity struct {
	UID   uint32
	GID   uint32
	User  string
	Group string
}

// Controller is a running controller.
type Controller struct {
	cfg    Config
	logger *slog.Logger
	now    func() time.Time
	sched  sched.Scheduler
	client *nodeproto.Client

	log store
	// replica is log when the controllers are replicated (nil: one
	// controller): only its leader schedules and writes.
	replica *replog.Log
	// acctCPUs is the cluster size last written to the accounting
	// store (0: not yet).
	acctCPUs atomic.Int64

	mu        sync.RWMutex
	st        *ctlstate.State
	nodes     map[string]*node.Node
	nodeOrder []string
	parts     map[string]*partition.Partition
	partOrder []string
	defPart   string
	// partMaxCPUs is the most CPUs a node of each partition has
	// (slurmctld's max_cpu_cnt), for pending jobs' node counts.
	partMaxCPUs map[string]uint32
	reasons     map[job.ID]job.Reason
	// depText is what the last cycle found left of pending jobs'
	// dependencies (dependencyText).
	depText map[job.ID]string
	// planned is the last backfill pass's plan for pending jobs.
	planned map[job.ID]sched.Planned
	// lastBackfill is when the last backfill pass ran (controller clock).
	lastBackfill time.Time
	// resvUsed is when a job last ran in each reservation (PURGE_COMP).
	resvUsed map[string]time.Time
	// prioCluster is what multifactor factors are relative to; partTRES
	// the partitions' TRES (partTRESLocked).
	prioCluster priority.Cluster
	partTRESMu  sync.Mutex
	partTRES    map[string]job.TRES
	// fairShare is each user association's fair-share factor (keyed
	// priority.AssocKey) and shareRows the whole tree, from the last usage
	// update; usageReset is set once PriorityUsageResetPeriod=NOW has
	// cleared usage in this run.
	fairShare  map[string]float64
	shareRows  []priority.ShareRow
	usageReset bool
	// admins are the users whose AdminLevel makes them operators.
	admins adminSet
	// idleAt is the state's command count when a cycle last found no job
	// to schedule (idle set): until a command changes the state, another
	// cycle would find none either, as held jobs need a command to be
	// released. Used by the scheduling loop alone.
	idleAt uint64
	idle   bool

	kick   chan struct{}
	cycles cycleClock
	// looping is set while the scheduling loop runs (the controller
	// leads).
	looping atomic.Bool
	stop    chan struct{}
	// leadMu guards term: the channel that stops the leader's loops,
	// nil while the controller does not lead; wg counts the loops.
	leadMu  sync.Mutex
	term    chan struct{}
	wg      sync.WaitGroup
	started time.Time

	stats Stats
	// diagBase is the counters at the last sdiag -r (nil before one);
	// diagMu keeps two resets from interleaving.
	diagBase atomic.Pointer[diagBase]
	diagMu   sync.Mutex
}

// Stats are the counters sdiag and /diag show.
type Stats struct {
	ScheduleCycles   atomic.Uint64
	LastCycleMicros  atomic.Int64
	MaxCycleMicros   atomic.Int64
	TotalCycleMicros atomic.Int64
	LastCycleTime    atomic.Int64 // unix seconds
	Launches         atomic.Uint64
	LaunchFailures   atomic.Uint64
	// Backfill passes are the cycles that ran the backfill planner
	// (sdiag's "Backfilling stats"); Backfilled counts the jobs they
	// started.
	BackfillCycles      atomic.Uint64
	BackfillLastMicros  atomic.Int64
	BackfillMaxMicros   atomic.Int64
	BackfillTotalMicros atomic.Int64
	Backfilled          atomic.Uint64
	RPCs                sync.Map // string -> *atomic.Uint64
	// CycleDepth sums the pending jobs each main cycle looked at
	// (slurmctld's schedule_cycle_depth), for sdiag's "Mean depth cycle".
	CycleDepth atomic.Uint64
	// ExitEndOfQueue counts the main cycles that ended at the end of the
	// job queue: all of them, since Drover's planner looks at every
	// pending job in each (it has no default_queue_depth,
	// sched_max_job_start or max_sched_time to stop it earlier).
	ExitEndOfQueue atomic.Uint64
	// The maxima /diag reports: MaxCycleMicros and BackfillMaxMicros
	// since the last sdiag -r, which zeroes these and not those.
	diagMaxCycleMicros    atomic.Int64
	diagBackfillMaxMicros atomic.Int64
	// serving is the requests being served now (Serving).
	serving atomic.Int64
	// rpcMicros is the time spent serving each kind of request
	// (string -> *atomic.Uint64), and users the requests each user sent
	// (uint32 -> *userRPCs); the front keeps them (Served).
	rpcMicros sync.Map
	users     sync.Map
}

// CountRPC counts one request of a kind for diag.
func (s *Stats) CountRPC(kind string) {
	v, _ := s.RPCs.LoadOrStore(kind, new(atomic.Uint64))
	v.(*atomic.Uint64).Add(1)
}

// CountRPCCtx counts one request of a kind for diag, as CountRPC does;
// when the front serving it follows the request (WithRPCNote), the count
// is left to the front, which adds the time the request took and who
// sent it once it has been answered, as slurmctld records an RPC's
// count and time after serving it.
func (s *Stats) CountRPCCtx(ctx context.Context, kind string) {
	if n, ok := ctx.Value(rpcNoteKey{}).(*RPCNote); ok {
		n.kind = kind
		return
	}
	s.CountRPC(kind)
}

// New opens the state under cfg.StateDir, restores it and returns a
// controller ready to Start.
func New(cfg Config, logger *slog.Logger) (*Controller, error) {
	if cfg.FirstJobID == 0 {
		cfg.FirstJobID = 1
	}
	if cfg.MaxArraySize == 0 {
		cfg.MaxArraySize = 1001
	}
	for _, w := range cfg.Warnings {
		logger.Warn(w)
	}
	if cfg.Backfill == (sched.BackfillParams{}) {
		cfg.Backfill = sched.DefaultBackfillParams()
	}
	if cfg.SchedInterval == 0 {
		cfg.SchedInterval = time.Second
	}
	if len(cfg.TRES) == 0 {
		// What slurmctld tracks when AccountingStorageTRES says nothing.
		cfg.TRES = slurmconf.AccountingTRES("")
	}
	if cfg.SlurmdTimeout == 0 {
		cfg.SlurmdTimeout = 300 * time.Second
	}
	if cfg.KillWait == 0 {
		cfg.KillWait = 30 * time.Second
	}
	if cfg.MinJobAge == 0 {
		cfg.MinJobAge = 300 * time.Second
	}
	if cfg.Auth == nil {
		cfg.Auth = NewAuth(cfg.Keys, cfg.AuthTTL)
	}
	c := &Controller{
		cfg:         cfg,
		logger:      logger,
		now:         time.Now,
		sched:       newScheduler(&cfg),
		client:      nodeproto.NewClient(&msgauth.Signer{Keys: cfg.Keys, Issuer: msgauth.Controller, TTL: cfg.AuthTTL}, cfg.TLSClient),
		st:          ctlstate.New(1, cfg.Accounting != nil),
		nodes:       map[string]*node.Node{},
		parts:       map[string]*partition.Partition{},
		reasons:     map[job.ID]job.Reason{},
		resvUsed:    map[string]time.Time{},
		prioCluster: priorityCluster(&cfg),
		kick:        make(chan struct{}, 1),
		stop:        make(chan struct{}),
	}
	if cfg.Now != nil {
		c.now = cfg.Now
	}
	c.syncLayoutLocked()
	if cfg.Replicate != nil {
		r, err := cfg.Replicate((*fsmAdapter)(c))
		if err != nil {
			return nil, fmt.Errorf("open controller state: %w", err)
		}
		c.log, c.replica = r, r
	} else {
		l, err := state.Open(c.StatePath(), (*fsmAdapter)(c), cfg.StoreOptions)
		if err != nil {
			return nil, fmt.Errorf("open controller state: %w", err)
		}
		c.log = l
	}
	c.mu.Lock()
	c.syncLayoutLocked()
	c.acctChangedLocked()
	c.mu.Unlock()
	return c, nil
}

// store is the controller's durable command log: a state.Log of its own,
// or its replica of the replicated log.
type store interface {
	ApplyWithBlobs(ctx context.Context, record []byte, blobs []state.Blob) (any, error)
	Blob(key string) ([]byte, error)
	DeleteBlobs(keys []string) error
	BlobKeys() ([]string, error)
	Snapshot() error
	Close() error
}

// fsmAdapter feeds the state log's records to the controller's fsm.
type fsmAdapter Controller

// ReleasedBlobs names the blobs a purge made unneeded, so that every
// replica deletes the scripts of the jobs it forgot; and those a
// repeated submission stored for no job (ctlstate.Result.Repeated).
func (a *fsmAdapter) ReleasedBlobs(res any) []string {
	r, _ := res.(ctlstate.Result)
	return scriptBlobKeys(r.Unreferenced)
}

func (a *fsmAdapter) Apply(_ uint64, record []byte) any {
	c := (*Controller)(a)
	var cmd ctlstate.Command
	if err := json.Unmarshal(record, &cmd); err != nil {
		return ctlstate.Result{Err: fmt.Errorf("decode command: %w", err)}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	res := c.st.Apply(&cmd)
	switch cmd.Op {
	case ctlstate.OpNodeCreate, ctlstate.OpNodeDelete, ctlstate.OpPartSet, ctlstate.OpPartDelete:
		c.syncLayoutLocked()
	}
	return res
}

// Snapshot streams the state to w under the read lock: readers carry on,
// and no command can change the state half way through (the log calls
// Snapshot between batches anyway).
func (a *fsmAdapter) Snapshot(w io.Writer) error {
	c := (*Controller)(a)
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.st.Snapshot(w)
}

func (a *fsmAdapter) Restore(r io.Reader) error {
	c := (*Controller)(a)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.st.Restore(r); err != nil {
		return err
	}
	c.syncLayoutLocked()
	return nil
}

// propose commits cmd durably and applies it.
func (c *Controller) propose(ctx context.Context, cmd *ctlstate.Command) (ctlstate.Result, error) {
	return c.proposeWithBlobs(ctx, cmd, nil)
}

// proposeWithBlobs commits cmd together with bulky data it refers to.
func (c *Controller) proposeWithBlobs(ctx context.Context, cmd *ctlstate.Command, blobs []state.Blob) (ctlstate.Result, error) {
	if cmd.Time.IsZero() {
		cmd.Time = c.now()
	}
	// Ids keep increasing across restarts, and jump up when FirstJobId
	// grows (see command.MinJobID).
	cmd.MinJobID = job.ID(c.cfg.FirstJobID)
	cmd.RequeueDelay = c.cfg.RequeueDelay
	rec, err := json.Marshal(cmd)
	if err != nil {
		return ctlstate.Result{}, fmt.Errorf("encode %s command: %w", cmd.Op, err)
	}
	out, err := c.log.ApplyWithBlobs(ctx, rec, blobs)
	if errors.Is(err, replog.ErrNotLeader) {
		return ctlstate.Result{}, slurmerr.New(slurmerr.InStandbyUseBackup, "commit %s: %v", cmd.Op, err)
	}
	if errors.Is(err, replog.ErrOutcomeUnknown) {
		// Slurm's client, its answer lost, cannot tell either: a request
		// safe to repeat (a submission with a request id) is repeated.
		return ctlstate.Result{}, slurmerr.New(slurmerr.SocketTimeout, "commit %s: %v", cmd.Op, err)
	}
	if err != nil {
		return ctlstate.Result{}, fmt.Errorf("commit %s: %w", cmd.Op, err)
	}
	res, _ := out.(ctlstate.Result)
	if err := c.cfg.JobComp.Record(res.Runs); err != nil {
		// The job's state is durable; only its line in the log is lost.
		c.logger.Error("write job completion record", "err", err)
	}
	for _, e := range res.EndSteps {
		msg := endSignal(e.JobID, nodeproto.EndCancelled, c.cfg.KillWait)
		msg.StepsOnly = true
		for _, n := range e.Nodes {
			c.sendSignalOn(e.JobID, n, msg)
		}
	}
	return res, res.Err
}

// Start runs the controller: a single controller leads at once; a
// replicated one leads when its replica wins an election (Lead, Follow).
func (c *Controller) Start() {
	c.started = c.now()
	if c.replica == nil || c.replica.IsLeader() {
		if err := c.Lead(); err != nil {
			c.logger.Error("take the lead", "err", err)
		}
	}
}

// ErrClosed is Lead's answer once the controller is closed (a
// reconfigure replaced it).
var ErrClosed = errors.New("the controller is closed")

// leadBarrier bounds how long a new leader waits for its state to hold
// every entry committed before its election.
const leadBarrier = 10 * time.Second

// Lead starts the leader's work: scheduling, time limits, node checks,
// purges and the accounting outbox. A replicated controller first
// applies everything committed before its election, then gives every
// node SlurmdTimeout to register with it, as after a restart: the node
// daemons keep their jobs running, and report them when they register.
func (c *Controller) Lead() error {
	c.leadMu.Lock()
	defer c.leadMu.Unlock()
	if c.term != nil {
		return nil
	}
	select {
	case <-c.stop:
		return ErrClosed
	default:
	}
	if c.replica != nil {
		if err := c.replica.Barrier(leadBarrier); err != nil {
			return err
		}
		c.logger.Info("this controller leads", "host", c.cfg.ControlHost)
	}
	if err := c.deleteOrphanScripts(); err != nil {
		c.logger.Warn("clean up scripts of purged jobs", "err", err)
	}
	now := c.now()
	c.mu.Lock()
	for _, n := range c.nodes {
		n.LastHeartbeat = now
	}
	c.mu.Unlock()
	stop := make(chan struct{})
	c.term = stop
	c.idle = false
	c.wg.Add(2)
	c.looping.Store(true)
	go c.scheduleLoop(stop)
	go c.housekeepingLoop(stop)
	if c.cfg.Accounting != nil {
		c.wg.Add(1)
		go c.acctLoop(stop)
	}
	c.Kick()
	return nil
}

// Follow stops the leader's work, when another controller leads. What
// the node daemons told this one is forgotten: should it lead again,
// they register with it again.
func (c *Controller) Follow() {
	if !c.stopLeading() {
		return
	}
	c.mu.Lock()
	for _, n := range c.nodes {
		n.Registered, n.Responding = false, false
	}
	c.mu.Unlock()
	c.logger.Info("this controller follows", "host", c.cfg.ControlHost)
}

// stopLeading stops the leader's loops, reporting whether they ran.
func (c *Controller) stopLeading() bool {
	c.leadMu.Lock()
	defer c.leadMu.Unlock()
	if c.term == nil {
		return false
	}
	close(c.term)
	c.term = nil
	c.wg.Wait()
	c.looping.Store(false)
	return true
}

// Leading reports whether this controller leads now.
func (c *Controller) Leading() bool {
	c.leadMu.Lock()
	defer c.leadMu.Unlock()
	return c.term != nil
}

// Close stops the loops and closes the state (a replica stays open: the
// daemon owns it).
func (c *Controller) Close() error {
	c.stopLeading()
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	if c.replica != nil {
		return nil
	}
	return c.log.Close()
}

// Kick asks for a scheduling cycle soon.
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Logger is where the controller logs, for the API in front of it.
func (c *Controller) Logger() *slog.Logger { return c.logger }

// ClusterName returns the cluster's name.
func (c *Controller) ClusterName() string { return c.cfg.ClusterName }

// KillWait is how long processes get between SIGTERM and SIGKILL.
func (c *Controller) KillWait() time.Duration { return c.cfg.KillWait }

// MaxArraySize is slurm.conf's MaxArraySize: array indices must be below
// it.
func (c *Controller) MaxArraySize() uint32 { return c.cfg.MaxArraySize }

// ControlHost returns the controller's host name.
func (c *Controller) ControlHost() string { return c.cfg.ControlHost }

// HidesJobsFrom reports whether who may see only their own jobs
// (PrivateData=jobs, and who is no operator).
func (c *Controller) HidesJobsFrom(who Identity) bool { return c.Hides("jobs", who) }

// Hides reports whether slurm.conf's PrivateData keeps what ("jobs",
// "nodes", "partitions", "usage", ...) of others from who: everyone but
// root, SlurmUser and operators, as slurmctld's validate_operator.
func (c *Controller) Hides(what string, who Identity) bool {
	return slices.Contains(c.cfg.PrivateData, what) && !c.privileged(who)
}

// Licenses are the cluster's licenses, as slurm.conf gives them.
func (c *Controller) Licenses() []slurmconf.License { return c.cfg.Licenses }

// ControlPort is SlurmctldPort.
func (c *Controller) ControlPort() int { return c.cfg.Port }

// TRESNames are the TRES the cluster tracks, AccountingStorageTRES's
// order ("cpu", "mem", ..., "gres/gpu").
func (c *Controller) TRESNames() []string { return append([]string(nil), c.cfg.TRES...) }

// StatePath is the controller's state file.
func (c *Controller) StatePath() string { return StatePath(c.cfg.StateDir) }

// StatePath is the single controller's state log in stateDir.
func StatePath(stateDir string) string { return filepath.Join(stateDir, "drover-state.db") }

// SlurmConfPath is where the controller read slurm.conf.
func (c *Controller) SlurmConfPath() string { return c.cfg.SlurmConfPath }

// SlurmConf is slurm.conf as the controller read it when it started (or
// was last reconfigured), nil when it was not built from one.
func (c *Controller) SlurmConf() *slurmconf.Config { return c.cfg.SlurmConf }

// NextJobID is the id the next submission gets, at least.
func (c *Controller) NextJobID() uint32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return uint32(max(c.st.NextJobID, job.ID(c.cfg.FirstJobID)))
}

// StartTime returns when the controller started.
func (c *Controller) StartTime() time.Time { return c.started }

// StatsRef exposes the counters.
func (c *Controller) StatsRef() *Stats { return &c.stats }

// CountRPC counts one request of a kind for sdiag (Stats.CountRPCCtx),
// for the front ends that know the controller only through an interface
// of their own (internal/controller/nodeapi) and so cannot name Stats.
func (c *Controller) CountRPC(ctx context.Context, kind string) { c.stats.CountRPCCtx(ctx, kind) }

// LogStats returns the state log's counters (none for a replica: see
// ReplicaStats).
func (c *Controller) LogStats() state.Stats {
	if l, ok := c.log.(*state.Log); ok {
		return l.Stats()
	}
	return state.Stats{}
}

// Replica returns the controller's replica of the replicated log (nil:
// a single controller).
func (c *Controller) Replica() *replog.Log { return c.replica }

// JobCounters returns submitted/started/completed/cancelled/failed totals.
func (c *Controller) JobCounters() (submitted, started, completed, cancelled, failed uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	k := c.st.Counters
	return k.Submitted, k.Started, k.Completed, k.Cancelled, k.Failed
}

func (c *Controller) scheduleLoop(stop <-chan struct{}) {
	defer c.wg.Done()
	t := time.NewTicker(c.cfg.SchedInterval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-c.kick:
		case <-t.C:
		}
		c.cycles.begin()
		if err := c.scheduleOnce(context.Background()); err != nil {
			c.logger.Error("scheduling cycle failed", "err", err)
		}
		c.cycles.end()
	}
}

// cycleClock counts scheduling cycles, so that a request can wait for
// one that begins after it (awaitCycle).
type cycleClock struct {
	mu       sync.Mutex
	started  uint64
	finished uint64
	// ended is closed, and replaced, whenever a cycle ends.
	ended chan struct{}
}

func (k *cycleClock) begin() {
	k.mu.Lock()
	k.started++
	k.mu.Unlock()
}

func (k *cycleClock) end() {
	k.mu.Lock()
	k.finished++
	if k.ended != nil {
		close(k.ended)
		k.ended = nil
	}
	k.mu.Unlock()
}

// awaitCycle kicks the scheduler and waits until a cycle that began after
// the call has ended, for at most limit (or until ctx ends): what was
// committed before the call has then been considered for a start.
func (c *Controller) awaitCycle(ctx context.Context, limit time.Duration) {
	if !c.looping.Load() {
		// No loop to wait for (a controller not started, in tests).
		c.Kick()
		return
	}
	k := &c.cycles
	k.mu.Lock()
	// A cycle under way may have read the state before the caller's
	// change: only the one after it counts.
	target := k.started + 1
	k.mu.Unlock()
	c.Kick()
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		k.mu.Lock()
		if k.finished >= target {
			k.mu.Unlock()
			return
		}
		if k.ended == nil {
			k.ended = make(chan struct{})
		}
		ended := k.ended
		k.mu.Unlock()
		select {
		case <-ended:
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		case <-c.stop:
			return
		}
	}
}

// scheduleOnce runs one cycle: snapshot, plan, commit, launch.
func (c *Controller) scheduleOnce(ctx context.Context) error {
	begin := time.Now()
	c.mu.RLock()
	applied := c.st.Applied()
	c.mu.RUnlock()
	if c.idle && applied == c.idleAt {
		return nil
	}
	snap, depText := c.snapshot()
	c.mu.Lock()
	c.depText = depText
	c.mu.Unlock()
	if len(snap.Pending) == 0 {
		c.idle, c.idleAt = true, applied
		return nil
	}
	c.idle = false
	plan := c.sched.Schedule(snap)
	c.mu.Lock()
	c.reasons = plan.Reasons
	if snap.Backfill {
		c.planned = plan.Planned
		c.lastBackfill = snap.Now
	}
	c.mu.Unlock()
	if c.cfg.KillInvalidDepend {
		if err := c.killInvalidDepend(ctx, snap); err != nil {
			return err
		}
	}
	for _, pr := range plan.Preempt {
		if err := c.preempt(ctx, pr); err != nil {
			return err
		}
	}
	if len(plan.Starts) > 0 {
		cmd := &ctlstate.Command{Op: ctlstate.OpStart, Start: &ctlstate.StartCmd{}}
		for _, s := range plan.Starts {
			cmd.Start.Starts = append(cmd.Start.Starts, ctlstate.StartEntry{JobID: s.JobID, Task: s.Task, Alloc: s.Alloc, Backfill: plan.Backfilled[s.JobID]})
		}
		res, err := c.propose(ctx, cmd)
		if err != nil {
			return err
		}
		for _, s := range res.Started {
			c.launch(s.JobID)
		}
	}
	took := time.Since(begin)
	us := took.Microseconds()
	if snap.Backfill {
		c.stats.BackfillCycles.Add(1)
		c.stats.BackfillLastMicros.Store(us)
		c.stats.BackfillTotalMicros.Add(us)
		c.stats.Backfilled.Add(uint64(len(plan.Backfilled)))
		if us > c.stats.BackfillMaxMicros.Load() {
			c.stats.BackfillMaxMicros.Store(us)
		}
		storeMax(&c.stats.diagBackfillMaxMicros, us)
	}
	c.observer().SchedulePass(snap.Backfill, took)
	c.stats.ScheduleCycles.Add(1)
	c.stats.LastCycleMicros.Store(us)
	c.stats.TotalCycleMicros.Add(us)
	c.stats.LastCycleTime.Store(c.now().Unix())
	if us > c.stats.MaxCycleMicros.Load() {
		c.stats.MaxCycleMicros.Store(us)
	}
	storeMax(&c.stats.diagMaxCycleMicros, us)
	c.stats.CycleDepth.Add(uint64(len(snap.Pending)))
	c.stats.ExitEndOfQueue.Add(1)
	return nil
}

// snapshot copies what the scheduler reads, and returns the pending jobs'
// dependencies as they are left (see dependencyText).
func (c *Controller) snapshot() (*sched.Snapshot, map[job.ID]string) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	s := &sched.Snapshot{
		Now:          c.now(),
		Partitions:   make(map[string]*partition.Partition, len(c.parts)),
		ArrayRunning: map[job.ID]uint32{},
		Blocked:      map[job.ID]job.Reason{},
		Preempt:      c.cfg.PreemptByPartition,
		PreemptQOS:   c.cfg.PreemptByQOS,
		Topology:     c.cfg.Topology,
	}
	if s.PreemptQOS {
		s.QOS = map[string]sched.QOS{}
		for _, q := range c.st.Acct.QOSList() {
			s.QOS[q.Name] = sched.QOS{Priority: q.Priority, Preempt: q.Preempt}
		}
	}
	if _, ok := c.sched.(*sched.Backfill); ok {
		s.Backfill = s.Now.Sub(c.lastBackfill) >= c.cfg.Backfill.Interval
	}
	deps := &dependencyView{st: c.st}
	texts := map[job.ID]string{}
	for name, p := range c.parts {
		cp := *p
		s.Partitions[name] = &cp
	}
	for _, r := range c.st.Resvs {
		cp := cloneResv(r)
		s.Reservations = append(s.Reservations, &cp)
	}
	used := c.usageLocked()
	for _, name := range c.nodeOrder {
		n := c.nodeViewLocked(name)
		s.Nodes = append(s.Nodes, sched.NodeState{Node: n, Used: used[name]})
	}
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		switch {
		case j.State == job.Pending && j.Hold != job.NotHeld:
			// Held jobs keep the reason their hold gave them; leaving them
			// out keeps cycles cheap when thousands are held.
		case j.State == job.Pending:
			cp := shallowCopy(j)
			cp.Priority = c.priorityLocked(j, s.Now)
			s.Pending = append(s.Pending, cp)
			if j.Req.Dependency != "" {
				r, text := deps.evaluate(j, s.Now)
				if r != "" {
					s.Blocked[j.ID] = r
				}
				texts[j.ID] = text
			}
		}
		if j.Alloc != nil && (j.State == job.Running || j.Completing) {
			end := j.EndTime
			if j.Completing {
				end = s.Now
			}
			s.Running = append(s.Running, sched.Running{ID: j.ID, Alloc: j.Alloc, End: end,
				Partition: j.Req.Partition, QOS: j.Req.QOS, Start: j.StartTime, Ending: j.Completing || j.RequeueOnEnd})
			if j.State == job.Running && j.IsArray() {
				s.ArrayRunning[j.ArrayJobID]++
			}
		}
	}
	s.Policy = c.policyLocked(s.Pending)
	return s, texts
}

// newScheduler returns the scheduler SchedulerType names.
func newScheduler(cfg *Config) sched.Scheduler {
	if cfg.Scheduler == "sched/builtin" {
		return &sched.FIFO{Defaults: cfg.Defaults}
	}
	return &sched.Backfill{FIFO: sched.FIFO{Defaults: cfg.Defaults}, Params: cfg.Backfill}
}

// usageLocked sums the allocations of jobs that hold resources.
func (c *Controller) usageLocked() map[string]node.Alloc {
	used := make(map[string]node.Alloc, len(c.nodes))
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if j.Alloc == nil || !(j.State == job.Running || j.Completing) {
			continue
		}
		for _, na := range j.Alloc.Nodes {
			u := used[na.Node]
			u.CPUs += na.CPUs
			u.MemMB += na.MemMB
			u.Jobs++
			for _, g := range na.GPUs {
				for len(u.GPUs) <= g {
					u.GPUs = append(u.GPUs, false)
				}
				u.GPUs[g] = true
			}
			used[na.Node] = u
		}
	}
	return used
}

// nodeViewLocked returns a copy of a node with its durable admin state.
func (c *Controller) nodeViewLocked(name string) *node.Node {
	n := *c.nodes[name]
	n.GPUs = append([]node.GPU(nil), n.GPUs...)
	if a := c.st.Nodes[name]; a != nil {
		n.Drain, n.Down = a.Drain, a.Down
		n.Reason, n.ReasonUID, n.ReasonTime = a.Reason, a.ReasonUID, a.ReasonTime
	}
	return &n
}

func (c *Controller) housekeepingLoop(stop <-chan struct{}) {
	defer c.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	lastPurge, lastLimits := c.now(), time.Time{}
	// Fair-share usage is counted from the controller's start, as
	// slurmctld's decay thread starts counting when it starts, not from
	// the first tick: a job that ends before then would otherwise be
	// charged or not depending on when the tick comes.
	c.updateUsage(context.Background())
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx := context.Background()
		c.sendWarnings(ctx)
		c.enforceTimeLimits(ctx)
		c.checkNodes(ctx)
		c.maintainReservations(ctx)
		if c.updateUsage(ctx) || c.now().Sub(lastLimits) >= limitCheckPeriod {
			lastLimits = c.now()
			c.enforceUsageLimits(ctx)
		}
		if now := c.now(); now.Sub(lastPurge) >= 30*time.Second {
			lastPurge = now
			if err := c.purge(ctx, now); err != nil {
				c.logger.Error("purge old jobs", "err", err)
			}
		}
	}
}

// purge forgets jobs that finished more than MinJobAge before now, as
// slurmctld's purge_old_job does.
func (c *Controller) purge(ctx context.Context, now time.Time) error {
	res, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpPurge, Purge: &ctlstate.PurgeCmd{Before: now.Add(-c.cfg.MinJobAge)}})
	if err != nil {
		return err
	}
	return c.deleteScripts(res.Unreferenced)
}

// enforceTimeLimits ends running jobs past their limit with TIMEOUT.
func (c *Controller) enforceTimeLimits(ctx context.Context) {
	now := c.now()
	var due []job.ID
	c.mu.RLock()
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		limited := j.Req.TimeLimit != job.Infinite && j.Req.TimeLimit != 0
		if j.State == job.Running && limited && !now.Before(j.EndTime) {
			due = append(due, id)
		}
	}
	c.mu.RUnlock()
	for _, id := range due {
		c.logger.Info("time limit reached", "job", id)
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpCancel, Cancel: &ctlstate.CancelCmd{JobIDs: []job.ID{id}, State: job.Timeout, Reason: job.ReasonTimeLimit}}); err != nil {
			c.logger.Error("time out job", "job", id, "err", err)
			continue
		}
		c.terminate(id, nodeproto.EndTimeout)
	}
}

// limitCheckPeriod is how often running jobs are checked against the
// limits on what they may use, besides after each usage update: slurmctld's
// PERIODIC_TIMEOUT.
const limitCheckPeriod = 30 * time.Second

// enforceUsageLimits ends with TIMEOUT the running jobs that reached a
// limit on what they may use, as slurmctld's job_time_limit does with
// acct_policy_job_time_out.
func (c *Controller) enforceUsageLimits(ctx context.Context) {
	now := c.now()
	c.mu.RLock()
	due := c.limitTimeoutsLocked(now)
	c.mu.RUnlock()
	for _, id := range slices.Sorted(maps.Keys(due)) {
		c.logger.Info("job reached an accounting limit", "job", id, "limit", due[id])
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpCancel, Cancel: &ctlstate.CancelCmd{JobIDs: []job.ID{id}, State: job.Timeout, Reason: job.ReasonTimeLimit}}); err != nil {
			c.logger.Error("time out job", "job", id, "err", err)
			continue
		}
		c.terminate(id, nodeproto.EndTimeout)
	}
}

// checkNodes marks nodes that stopped answering DOWN after SlurmdTimeout.
func (c *Controller) checkNodes(ctx context.Context) {
	now := c.now()
	var dead []string
	c.mu.Lock()
	for _, name := range c.nodeOrder {
		n := c.nodes[name]
		a := c.st.Nodes[name]
		if n.Future || (a != nil && a.Down) {
			continue
		}
		if now.Sub(n.LastHeartbeat) > c.cfg.SlurmdTimeout {
			n.Responding = false
			n.Registered = false
			dead = append(dead, name)
		}
	}
	c.mu.Unlock()
	for _, name := range dead {
		c.logger.Warn("node not responding, setting DOWN", "node", name)
		res, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpNodeFail, NodeFail: &ctlstate.NodeFailCmd{Name: name, Reason: "Not responding"}})
		if err != nil {
			c.logger.Error("fail node", "node", name, "err", err)
			continue
		}
		for _, k := range res.Kill {
			if k.Node != name {
				c.killBatch(k)
			}
		}
		if len(res.Ended) > 0 {
			c.Kick()
		}
	}
}

var errClosed = errors.New("controller is shutting down")
