// Package replog replicates the controller's command log on
// hashicorp/raft: several controllers, one leader, every write committed
// on a majority before it is answered. A Log offers what state.Log offers
// the controller (Apply to a future result, blobs beside the records,
// snapshots streamed by the state machine), so the controller's state
// machine runs unchanged on every replica.
package replog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"

	"github.com/droverhq/drover/internal/state"
)

// Member is one controller of the cluster: its SlurmctldHost name and
// the host:port its peers and clients reach it at.
type Member struct {
	ID   string
	Addr string
}

// Config sets up a replica.
type Config struct {
	// ID is this controller's member ID.
	ID string
	// Members are every controller, this one included, in slurm.conf's
	// order; they make the cluster's first configuration.
	Members []Member
	// Dir holds the raft log, its snapshots and the blob cache.
	Dir string
	// Bootstrap starts the cluster when this replica has no state: the
	// first SlurmctldHost does, as Slurm's primary. The others wait for
	// its leader to reach them, so that a controller added later, or one
	// whose disk was replaced, joins the cluster instead of starting one.
	Bootstrap bool
	// Recover makes Members the cluster's configuration before raft
	// starts (raft's RecoverCluster): for the controllers that survived
	// the loss of a majority, each started so once, with the same
	// members (those that survived). What they hold is kept; what only
	// the lost controllers held is lost.
	Recover bool
	// Import is a single controller's state log (state.Log) to take over
	// the first time this replica leads a cluster whose log holds no
	// command yet: going from one controller to several keeps every
	// job. The file is renamed with ".imported" once taken.
	Import string
	// Stream carries raft's connections.
	Stream raft.StreamLayer
	// FailoverTimeout bounds how long the controllers go without a
	// leader before one is elected (SlurmctldTimeout: 0 = 120 s). Raft's
	// timeouts are a fraction of it, and never above one second each,
	// so that failover takes seconds whatever the bound.
	FailoverTimeout time.Duration
	// SnapshotEvery takes a snapshot after this many entries (0: state's default).
	SnapshotEvery int
	// NoSync skips fsync of the raft log (benchmarks only).
	NoSync bool
	Logger *slog.Logger
	// OnFatal is told when this replica can no longer keep what it
	// applies (a full disk, a damaged entry); the daemon should stop,
	// and rebuild from the log and its peers when it starts again.
	OnFatal func(error)
	// OnLeader is told each time this replica becomes leader (true) or
	// stops being leader (false), in order, from one goroutine.
	OnLeader func(bool)
}

// Log is one controller's replica of the replicated command log.
type Log struct {
	cfg    Config
	raft   *raft.Raft
	store  *raftboltdb.BoltStore
	trans  *raft.NetworkTransport
	fsm    *fsm
	blobs  *blobStore
	notify chan bool
	done   chan struct{}

	closeOnce sync.Once
	closeErr  error
	stats     statsCounters
	// observer tells leader changes to observed, for Stats.
	observer *raft.Observer
	observed chan raft.Observation
}

// ErrNotLeader wraps raft's refusal of a proposal on a follower: nothing
// was written, and the proposal may go to the leader.
var ErrNotLeader = raft.ErrNotLeader

// ErrOutcomeUnknown wraps a proposal's failure after raft took it: the
// leader lost its place meanwhile, and the entry may yet commit under
// the next leader. Only a proposal that is safe to repeat may be retried.
var ErrOutcomeUnknown = errors.New("outcome unknown: leadership changed while committing")

// trailingLogs is how many entries a snapshot leaves in the log, so that
// a follower a little behind catches up from the log rather than a whole
// snapshot (raft's default); tests lower it to force snapshots.
var trailingLogs uint64 = 10240

// Timeouts derived from Config.FailoverTimeout.
func timeouts(failover time.Duration) (heartbeat, lease time.Duration) {
	if failover <= 0 {
		failover = 120 * time.Second
	}
	heartbeat = min(time.Second, failover/4)
	heartbeat = max(heartbeat, 50*time.Millisecond)
	return heartbeat, heartbeat / 2
}

// Open starts this controller's replica, restoring its latest snapshot;
// a replica with no state yet joins with the configured members as the
// cluster's first configuration (every member does the same, which raft
// allows when the configurations agree).
func Open(cfg Config, target state.FSM) (*Log, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.OnFatal == nil {
		cfg.OnFatal = func(err error) { cfg.Logger.Error("replica damaged", "err", err) }
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("replog: %w", err)
	}
	l := &Log{cfg: cfg, notify: make(chan bool, 16), done: make(chan struct{})}
	blobs, err := openBlobStore(filepath.Join(cfg.Dir, "blobs.db"))
	if err != nil {
		return nil, err
	}
	l.blobs = blobs
	l.fsm = &fsm{target: target, blobs: blobs, onFatal: cfg.OnFatal}
	ok := false
	defer func() {
		if !ok {
			l.closeStores()
		}
	}()
	l.store, err = raftboltdb.New(raftboltdb.Options{Path: filepath.Join(cfg.Dir, "raft.db"), NoSync: cfg.NoSync})
	if err != nil {
		return nil, fmt.Errorf("replog: open raft log: %w", err)
	}
	hl := hclogAdapter(cfg.Logger)
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, hl)
	if err != nil {
		return nil, fmt.Errorf("replog: open snapshots: %w", err)
	}
	l.trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: cfg.Stream, MaxPool: 4, Timeout: 10 * time.Second, Logger: hl,
	})
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.Logger = hl
	rc.HeartbeatTimeout, rc.LeaderLeaseTimeout = timeouts(cfg.FailoverTimeout)
	rc.ElectionTimeout = rc.HeartbeatTimeout
	rc.SnapshotThreshold = uint64(cfg.SnapshotEvery)
	if rc.SnapshotThreshold == 0 {
		rc.SnapshotThreshold = state.DefaultSnapshotEvery
	}
	rc.SnapshotInterval = 10 * time.Second
	rc.TrailingLogs = trailingLogs
	// Proposals arriving together go out, and are synced, together: the
	// group commit state.Log does.
	rc.BatchApplyCh = true
	rc.MaxAppendEntries = 512
	rc.NotifyCh = l.notify
	rc.NoLegacyTelemetry = true
	has, err := raft.HasExistingState(l.store, l.store, snaps)
	if err != nil {
		return nil, fmt.Errorf("replog: %w", err)
	}
	var servers []raft.Server
	for _, m := range cfg.Members {
		servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(m.ID), Address: raft.ServerAddress(m.Addr)})
	}
	switch {
	case cfg.Recover:
		if !has {
			return nil, errors.New("replog: recover: this controller holds no replicated state to recover from")
		}
		// RecoverCluster replays the log into the state machine to write
		// a snapshot under the new configuration; NewRaft then restores
		// that snapshot, which replaces whatever the replay left.
		if err := raft.RecoverCluster(rc, l.fsm, l.store, l.store, snaps, l.trans, raft.Configuration{Servers: servers}); err != nil {
			return nil, fmt.Errorf("replog: recover: %w", err)
		}
		cfg.Logger.Warn("replicated state recovered: the controllers now are the ones listed", "members", len(servers))
	case !has && cfg.Bootstrap:
		if err := raft.BootstrapCluster(rc, l.store, l.store, snaps, l.trans, raft.Configuration{Servers: servers}); err != nil {
			return nil, fmt.Errorf("replog: first configuration: %w", err)
		}
	}
	l.raft, err = raft.NewRaft(rc, l.fsm, l.store, l.store, snaps, l.trans)
	if err != nil {
		return nil, fmt.Errorf("replog: start raft: %w", err)
	}
	ok = true
	go l.watch()
	l.observed = make(chan raft.Observation, 16)
	l.observer = raft.NewObserver(l.observed, false, func(o *raft.Observation) bool {
		lo, ok := o.Data.(raft.LeaderObservation)
		return ok && lo.LeaderID != ""
	})
	l.raft.RegisterObserver(l.observer)
	go func() {
		for range l.observed {
			l.stats.leaderChanges.Add(1)
		}
	}()
	return l, nil
}

// watch passes leadership changes on, one at a time and in order.
func (l *Log) watch() {
	defer close(l.done)
	for lead := range l.notify {
		if lead {
			l.stats.terms.Add(1)
			if err := l.importLegacy(); err != nil {
				l.cfg.Logger.Error("take over the single controller's state", "file", l.cfg.Import, "err", err)
			}
		}
		if l.cfg.OnLeader != nil {
			l.cfg.OnLeader(lead)
		}
	}
}

// ApplyWithBlobs commits record (and blobs, which every replica stores)
// on a majority and applies it, returning the state machine's result.
// It fails with ErrNotLeader on a follower, and with ErrOutcomeUnknown
// when leadership changed after raft took the proposal.
func (l *Log) ApplyWithBlobs(ctx context.Context, record []byte, blobs []state.Blob) (any, error) {
	for _, b := range blobs {
		if b.Key == "" || len(b.Data) > state.MaxRecordSize {
			return nil, fmt.Errorf("replog: apply: blob %q of %d bytes: empty key or over the %d byte limit", b.Key, len(b.Data), state.MaxRecordSize)
		}
	}
	if len(record) > state.MaxRecordSize {
		return nil, fmt.Errorf("replog: apply: record of %d bytes exceeds the %d byte limit", len(record), state.MaxRecordSize)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("replog: apply: %w", err)
	}
	var enqueue time.Duration
	if dl, ok := ctx.Deadline(); ok {
		enqueue = max(time.Until(dl), time.Millisecond)
	}
	start := time.Now()
	f := l.raft.Apply(encodeEntry(record, blobs), enqueue)
	if err := f.Error(); err != nil {
		switch {
		case errors.Is(err, raft.ErrNotLeader):
			return nil, fmt.Errorf("replog: apply: %w", err)
		case errors.Is(err, raft.ErrLeadershipTransferInProgress), errors.Is(err, raft.ErrEnqueueTimeout):
			// Refused before it was written: as good as a follower's no.
			return nil, fmt.Errorf("replog: apply: %w (%v)", ErrNotLeader, err)
		case errors.Is(err, raft.ErrRaftShutdown):
			return nil, fmt.Errorf("replog: apply: %w", state.ErrClosed)
		default:
			return nil, fmt.Errorf("replog: apply: %w (%v)", ErrOutcomeUnknown, err)
		}
	}
	l.stats.commit(time.Since(start))
	res := f.Response()
	if err, ok := res.(error); ok {
		return nil, err
	}
	return res, nil
}

// Apply is ApplyWithBlobs without blobs.
func (l *Log) Apply(ctx context.Context, record []byte) (any, error) {
	return l.ApplyWithBlobs(ctx, record, nil)
}

// Blob returns a copy of a blob this replica stores, or state.ErrNoBlob.
func (l *Log) Blob(key string) ([]byte, error) { return l.blobs.get(key) }

// DeleteBlobs deletes blobs from this replica's store (records that
// release blobs delete them on every replica as they apply).
func (l *Log) DeleteBlobs(keys []string) error { return l.blobs.delete(keys) }

// BlobKeys lists this replica's blobs.
func (l *Log) BlobKeys() ([]string, error) { return l.blobs.keys() }

// Snapshot takes a snapshot now and truncates the log it covers.
func (l *Log) Snapshot() error {
	err := l.raft.Snapshot().Error()
	if errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("replog: snapshot: %w", err)
	}
	return nil
}

// Barrier returns once every entry committed before it is applied here:
// a new leader calls it before acting on its state.
func (l *Log) Barrier(timeout time.Duration) error {
	if err := l.raft.Barrier(timeout).Error(); err != nil {
		return fmt.Errorf("replog: barrier: %w", err)
	}
	return nil
}

// LastIndex returns the index of the last entry applied here.
func (l *Log) LastIndex() uint64 { return l.raft.AppliedIndex() }

// Path names the replica's folder, for diagnostics.
func (l *Log) Path() string { return l.cfg.Dir }

// IsLeader reports whether this replica leads now.
func (l *Log) IsLeader() bool { return l.raft.State() == raft.Leader }

// Leader returns the leading member, if one is known.
func (l *Log) Leader() (Member, bool) {
	addr, id := l.raft.LeaderWithID()
	if id == "" {
		return Member{}, false
	}
	return Member{ID: string(id), Addr: string(addr)}, true
}

// Rebind hands the replicated state to a new state machine (a
// reconfigured controller), which then receives every later entry.
func (l *Log) Rebind(target state.FSM) error { return l.fsm.rebind(target) }

// TransferLeadership asks id (any member when empty) to take over.
func (l *Log) TransferLeadership(id string) error {
	var f raft.Future
	if id == "" {
		f = l.raft.LeadershipTransfer()
	} else {
		m, ok := l.member(id)
		if !ok {
			return fmt.Errorf("replog: %q is not a controller of this cluster", id)
		}
		f = l.raft.LeadershipTransferToServer(raft.ServerID(m.ID), raft.ServerAddress(m.Addr))
	}
	if err := f.Error(); err != nil {
		return fmt.Errorf("replog: transfer leadership: %w", err)
	}
	return nil
}

// Members returns the cluster's current configuration.
func (l *Log) Members() ([]Member, error) {
	f := l.raft.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, fmt.Errorf("replog: configuration: %w", err)
	}
	var out []Member
	for _, s := range f.Configuration().Servers {
		out = append(out, Member{ID: string(s.ID), Addr: string(s.Address)})
	}
	return out, nil
}

// SetMembers makes the cluster's voters members (leader only): those
// missing are added, those no longer listed removed, one at a time as
// raft changes configurations. It returns what it changed.
func (l *Log) SetMembers(members []Member) (added, removed []string, err error) {
	current, err := l.Members()
	if err != nil {
		return nil, nil, err
	}
	have := map[string]Member{}
	for _, m := range current {
		have[m.ID] = m
	}
	want := map[string]bool{}
	for _, m := range members {
		want[m.ID] = true
		if h, ok := have[m.ID]; ok && h.Addr == m.Addr {
			continue
		}
		if err := l.raft.AddVoter(raft.ServerID(m.ID), raft.ServerAddress(m.Addr), 0, 0).Error(); err != nil {
			return added, removed, fmt.Errorf("replog: add %s: %w", m.ID, err)
		}
		added = append(added, m.ID)
	}
	for _, m := range current {
		if want[m.ID] {
			continue
		}
		if err := l.raft.RemoveServer(raft.ServerID(m.ID), 0, 0).Error(); err != nil {
			return added, removed, fmt.Errorf("replog: remove %s: %w", m.ID, err)
		}
		removed = append(removed, m.ID)
	}
	return added, removed, nil
}

func (l *Log) member(id string) (Member, bool) {
	ms, err := l.Members()
	if err != nil {
		return Member{}, false
	}
	for _, m := range ms {
		if m.ID == id {
			return m, true
		}
	}
	return Member{}, false
}

// Close leaves the cluster's work to the others: a leader first hands
// its place to the most up-to-date follower (a planned stop costs no
// election timeout), then raft stops and the stores close. The replica's
// membership is unchanged.
func (l *Log) Close() error {
	l.closeOnce.Do(func() {
		if l.raft.State() == raft.Leader && l.Stats().Voters > 1 {
			if err := l.raft.LeadershipTransfer().Error(); err != nil {
				l.cfg.Logger.Warn("hand leadership over before stopping", "err", err)
			}
		}
		if err := l.raft.Shutdown().Error(); err != nil {
			l.closeErr = fmt.Errorf("replog: shut down raft: %w", err)
		}
		l.raft.DeregisterObserver(l.observer)
		close(l.observed)
		l.trans.Close()
		close(l.notify)
		<-l.done
		if err := l.closeStores(); err != nil && l.closeErr == nil {
			l.closeErr = err
		}
	})
	return l.closeErr
}

func (l *Log) closeStores() error {
	var errs []error
	if l.store != nil {
		errs = append(errs, l.store.Close())
	}
	if l.blobs != nil {
		errs = append(errs, l.blobs.close())
	}
	return errors.Join(errs...)
}

// hclogAdapter sends raft's log lines to the daemon's logger, as
// warnings and errors only: raft's informational lines (every election
// step) would drown the controller's own.
func hclogAdapter(logger *slog.Logger) hclog.Logger {
	return hclog.New(&hclog.LoggerOptions{
		Name:   "raft",
		Level:  hclog.Warn,
		Output: slogWriter{logger},
	})
}

type slogWriter struct{ logger *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.logger.Warn(string(trimNewline(p)), "component", "raft")
	return len(p), nil
}

func trimNewline(p []byte) []byte {
	for len(p) > 0 && (p[len(p)-1] == '\n' || p[len(p)-1] == '\r') {
		p = p[:len(p)-1]
	}
	return p
}
