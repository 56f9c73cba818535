package controller

import (
	"context"
	"sort"
	"sync/atomic"
	"time"

	"github.com/droverhq/drover/internal/slurmerr"
)

// diagBase is what sdiag -r left: the counters as they were at the
// reset, which /diag subtracts from the running ones. The counters
// themselves are never zeroed, because /metrics/scheduler reports them
// as Prometheus counters, which must never go down. It lives in memory
// only: a restart or reconfigure (a new controller) forgets it, as
// slurmctld's statistics restart with slurmctld.
type diagBase struct {
	stats SchedulerStats
	rpcs  map[string]RPCCount
	users map[uint32]RPCCount
}

// ResetStats is sdiag -r (slurmctld's REQUEST_STATS_INFO with
// STAT_COMMAND_RESET): from now on /diag counts from zero and its "Data
// since" is now. Only root, SlurmUser, operators and administrators may
// ask, as slurmctld's validate_operator has it; anyone else is refused
// with ESLURM_ACCESS_DENIED and the attempt logged, as slurmctld logs it.
func (c *Controller) ResetStats(who Identity) error {
	if !c.privileged(who) {
		c.logger.Error("security violation: REQUEST_STATS_INFO reset from", "uid", who.UID, "user", who.User)
		return slurmerr.New(slurmerr.AccessDenied, "%s", slurmerr.AccessDenied.Message())
	}
	c.diagMu.Lock()
	defer c.diagMu.Unlock()
	base := &diagBase{stats: c.SchedulerStats(), rpcs: c.stats.rpcCounts(), users: c.stats.userCounts()}
	// The maxima cannot be taken back by subtraction; slurmctld's
	// reset_stats zeroes them, so the ones /diag reports restart here.
	c.stats.diagMaxCycleMicros.Store(0)
	c.stats.diagBackfillMaxMicros.Store(0)
	c.diagBase.Store(base)
	c.logger.Info("scheduling statistics reset", "uid", who.UID, "user", who.User)
	return nil
}

// DiagStats are the counters /diag (sdiag) reports: SchedulerStats less
// what they were at the last sdiag -r, with Start the time of that reset.
// /metrics/scheduler reads SchedulerStats, which a reset leaves alone.
func (c *Controller) DiagStats() SchedulerStats {
	s := c.SchedulerStats()
	s.MaxCycleMicros = uint64(c.stats.diagMaxCycleMicros.Load())
	s.BackfillMaxMicros = uint64(c.stats.diagBackfillMaxMicros.Load())
	if b := c.diagBase.Load(); b != nil {
		s = s.Since(b.stats)
	}
	return s
}

// Since is s counted from base, a reading taken at a reset: the counters
// less base's, Start base's time, and the last backfill pass's time and
// length forgotten if none ran since (slurmctld's reset_stats zeroes
// bf_cycle_last). What is not a counter (the last main cycle's length,
// the pending and running jobs, the maxima, the requests being served)
// is s's own.
func (s SchedulerStats) Since(base SchedulerStats) SchedulerStats {
	sub := func(a, b uint64) uint64 {
		// A reading taken just before a reset that lands between it
		// and the baseline's load is below the new baseline; report
		// zero then rather than a wrapped number.
		if a < b {
			return 0
		}
		return a - b
	}
	s.Start = base.Time
	s.Cycles = sub(s.Cycles, base.Cycles)
	s.TotalCycleMicros = sub(s.TotalCycleMicros, base.TotalCycleMicros)
	s.CycleDepth = sub(s.CycleDepth, base.CycleDepth)
	for i := range s.ScheduleExits {
		s.ScheduleExits[i] = sub(s.ScheduleExits[i], base.ScheduleExits[i])
	}
	s.BackfillCycles = sub(s.BackfillCycles, base.BackfillCycles)
	s.BackfillTotalMicros = sub(s.BackfillTotalMicros, base.BackfillTotalMicros)
	s.Backfilled = sub(s.Backfilled, base.Backfilled)
	if s.BackfillCycles == 0 {
		s.BackfillLastMicros, s.LastBackfill = 0, time.Time{}
	}
	s.Submitted = sub(s.Submitted, base.Submitted)
	s.Started = sub(s.Started, base.Started)
	s.Completed = sub(s.Completed, base.Completed)
	s.Cancelled = sub(s.Cancelled, base.Cancelled)
	s.Failed = sub(s.Failed, base.Failed)
	return s
}

// RPCCount is how often one kind of request was served, or one user's
// requests, and the time spent serving them.
type RPCCount struct {
	// Kind is the request's Slurm name (REQUEST_SUBMIT_BATCH_JOB), or
	// the user's name.
	Kind string
	// UID is the user's, in RPCs by user.
	UID         uint32
	Count       uint64
	TotalMicros uint64
}

// since is r less base, zero if below it.
func (r RPCCount) since(base RPCCount) (RPCCount, bool) {
	if r.Count <= base.Count {
		return RPCCount{}, false
	}
	r.Count -= base.Count
	r.TotalMicros -= min(base.TotalMicros, r.TotalMicros)
	return r, true
}

// DiagRPCs are the requests counted for /diag, by kind in name order:
// since the last sdiag -r, which clears the table as slurmctld's
// _clear_rpc_stats does (a kind not asked for since is left out).
func (c *Controller) DiagRPCs() []RPCCount {
	var base map[string]RPCCount
	if b := c.diagBase.Load(); b != nil {
		base = b.rpcs
	}
	var out []RPCCount
	for kind, r := range c.stats.rpcCounts() {
		if r, ok := r.since(base[kind]); ok {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// DiagUsers are the requests counted for /diag by the user who sent
// them, in UID order, since the last sdiag -r. Only requests whose
// sender the front authenticated are here (not the node daemons', which
// prove themselves as nodes, not users).
func (c *Controller) DiagUsers() []RPCCount {
	var base map[uint32]RPCCount
	if b := c.diagBase.Load(); b != nil {
		base = b.users
	}
	var out []RPCCount
	for uid, r := range c.stats.userCounts() {
		if r, ok := r.since(base[uid]); ok {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

// RPCTotals are the requests served since the controller started, by
// kind in name order, with the time spent serving them: what a reset
// leaves alone (slurmdbd's statistics, which sdiag -r does not touch).
func (s *Stats) RPCTotals() []RPCCount {
	var out []RPCCount
	for _, r := range s.rpcCounts() {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

func (s *Stats) rpcCounts() map[string]RPCCount {
	out := map[string]RPCCount{}
	s.RPCs.Range(func(k, v any) bool {
		r := RPCCount{Kind: k.(string), Count: v.(*atomic.Uint64).Load()}
		if t, ok := s.rpcMicros.Load(k); ok {
			r.TotalMicros = t.(*atomic.Uint64).Load()
		}
		out[r.Kind] = r
		return true
	})
	return out
}

func (s *Stats) userCounts() map[uint32]RPCCount {
	out := map[uint32]RPCCount{}
	s.users.Range(func(k, v any) bool {
		u := v.(*userRPCs)
		out[k.(uint32)] = RPCCount{Kind: u.name, UID: k.(uint32), Count: u.count.Load(), TotalMicros: u.micros.Load()}
		return true
	})
	return out
}

// userRPCs are one user's requests and the time spent serving them.
type userRPCs struct {
	name          string
	count, micros atomic.Uint64
}

// RPCNote follows one request through the front that serves it: the
// handler names its kind (CountRPCCtx), and the front records it with
// its time and sender once answered (Served).
type RPCNote struct{ kind string }

type rpcNoteKey struct{}

// WithRPCNote is ctx carrying a new note for the request it serves.
func WithRPCNote(ctx context.Context) (context.Context, *RPCNote) {
	n := &RPCNote{}
	return context.WithValue(ctx, rpcNoteKey{}, n), n
}

// Served records the request n followed, if its handler named its kind:
// one more of that kind and took more time, and, when who is known (ok),
// one more of who's, as slurmctld's record_rpc_stats does.
func (s *Stats) Served(n *RPCNote, who Identity, known bool, took time.Duration) {
	if n == nil || n.kind == "" {
		return
	}
	us := uint64(max(took.Microseconds(), 0))
	s.CountRPC(n.kind)
	t, _ := s.rpcMicros.LoadOrStore(n.kind, new(atomic.Uint64))
	t.(*atomic.Uint64).Add(us)
	if !known {
		return
	}
	v, _ := s.users.LoadOrStore(who.UID, &userRPCs{name: who.User})
	u := v.(*userRPCs)
	u.count.Add(1)
	u.micros.Add(us)
}

// Serving counts one request being served until the function it returns
// is called: sdiag's "Server thread count", slurmctld's count of the
// threads serving RPCs, which the front (internal/restapi) keeps as the
// requests it has in hand.
func (s *Stats) Serving() (done func()) {
	s.serving.Add(1)
	return func() { s.serving.Add(-1) }
}

// storeMax raises m to v if v is higher, against concurrent raisers.
func storeMax(m *atomic.Int64, v int64) {
	for {
		old := m.Load()
		if v <= old || m.CompareAndSwap(old, v) {
			return
		}
	}
}
