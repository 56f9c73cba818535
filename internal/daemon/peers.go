package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/metrics"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/replog"
)

// peerTimeout bounds one controller's ping of another: a controller
// that is down shows DOWN in about this time, as slurm_ping's short
// message timeout lets scontrol ping go on to the next.
const peerTimeout = 2 * time.Second

// takeoverTimeout bounds how long a takeover waits for the controller
// asked to lead.
const takeoverTimeout = 20 * time.Second

// answeredLocally reports whether req is a ping of the controllers,
// which the controller reached answers itself (follower or not, and
// while none leads): Drover's ControllersPath and slurmrestd's ping,
// which pings every SlurmctldHost the same way.
func answeredLocally(req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	p := strings.TrimSuffix(req.URL.Path, "/")
	if p == droverapi.ControllersPath {
		return true
	}
	v, ok := strings.CutPrefix(p, "/slurm/v0.0.")
	return ok && strings.HasSuffix(v, "/ping") && !strings.Contains(strings.TrimSuffix(v, "/ping"), "/")
}

// serveReplica answers another controller's ping (ReplicaPath) with
// this replica's state, once its token shows it comes from a
// controller.
func (r *replication) serveReplica(w http.ResponseWriter, req *http.Request, verify func(*http.Request) (*msgauth.Claims, error)) {
	if req.Method != http.MethodGet {
		http.Error(w, "GET only", http.StatusMethodNotAllowed)
		return
	}
	if err := fromController(req, verify); err != nil {
		http.Error(w, "replica state refused: "+err.Error(), http.StatusUnauthorized)
		return
	}
	l := r.log.Load()
	if l == nil {
		standby(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(replicaReply(l.Stats(), time.Now()))
}

// replicaReply is st on the wire, the last contact as an age (clocks of
// two hosts need not agree).
func replicaReply(st replog.Stats, now time.Time) droverapi.Replica {
	out := droverapi.Replica{
		State: st.State, Leader: st.Leader, Term: st.Term, LastIndex: st.LastIndex,
		CommitIndex: st.CommitIndex, AppliedIndex: st.AppliedIndex,
		LastContactSeconds: -1, LeaderTerms: st.LeaderTerms, LeaderChanges: st.LeaderChanges, Voters: st.Voters,
	}
	if !st.LastContact.IsZero() {
		out.LastContactSeconds = now.Sub(st.LastContact).Seconds()
	}
	return out
}

// statsFrom is replicaReply read back, the age made a time again.
func statsFrom(rp droverapi.Replica, now time.Time) *replog.Stats {
	st := &replog.Stats{
		State: rp.State, Leader: rp.Leader, Term: rp.Term, LastIndex: rp.LastIndex,
		CommitIndex: rp.CommitIndex, AppliedIndex: rp.AppliedIndex,
		LeaderTerms: rp.LeaderTerms, LeaderChanges: rp.LeaderChanges, Voters: rp.Voters,
	}
	if rp.LastContactSeconds >= 0 {
		st.LastContact = now.Add(-time.Duration(rp.LastContactSeconds * float64(time.Second)))
	}
	return st
}

// members are the SlurmctldHost lines as last read.
func (r *replication) members() []replog.Member {
	if h := r.hosts.Load(); h != nil {
		return *h
	}
	return r.cfg.Members
}

// Names implements controller.Peers.
func (r *replication) Names() []string {
	ms := r.members()
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// Controllers implements controller.Peers: this replica's state read
// here, the others' asked of them all at once.
func (r *replication) Controllers(ctx context.Context) []controller.ControllerStatus {
	ms := r.members()
	out := make([]controller.ControllerStatus, len(ms))
	var wg sync.WaitGroup
	for i, m := range ms {
		out[i] = controller.ControllerStatus{Name: m.ID, Addr: m.Addr, Index: i, Self: m.ID == r.cfg.ID}
		wg.Add(1)
		go func(st *controller.ControllerStatus) {
			defer wg.Done()
			r.ping(ctx, st)
		}(&out[i])
	}
	wg.Wait()
	return out
}

// ping fills in st: the replica's state, its latency, or why it did not
// answer.
func (r *replication) ping(ctx context.Context, st *controller.ControllerStatus) {
	begin := time.Now()
	defer func() { st.Latency = time.Since(begin) }()
	if st.Self {
		l := r.log.Load()
		if l == nil {
			st.Err = "starting"
			return
		}
		s := l.Stats()
		st.Replica, st.Responding, st.Leader = &s, true, s.State == "Leader"
		return
	}
	rp, err := r.askReplica(ctx, st.Addr)
	if err != nil {
		st.Err = err.Error()
		return
	}
	st.Replica = statsFrom(rp, time.Now())
	st.Responding, st.Leader = true, rp.State == "Leader"
}

// askReplica asks the controller at addr for its replica's state.
func (r *replication) askReplica(ctx context.Context, addr string) (droverapi.Replica, error) {
	var rp droverapi.Replica
	ctx, cancel := context.WithTimeout(ctx, peerTimeout)
	defer cancel()
	body, err := r.ask(ctx, r.peers, http.MethodGet, addr, droverapi.ReplicaPath)
	if err != nil {
		return rp, err
	}
	if err := json.Unmarshal(body, &rp); err != nil {
		return rp, fmt.Errorf("replica state: %w", err)
	}
	return rp, nil
}

// TakeOver implements controller.Peers: raft hands leadership to the
// controller at index, and the answer waits until this replica sees it
// lead.
func (r *replication) TakeOver(ctx context.Context, index int) error {
	l := r.log.Load()
	if l == nil {
		return errors.New("the replica is not open")
	}
	ms := r.members()
	if index < 0 || index >= len(ms) {
		return fmt.Errorf("no controller at index %d", index)
	}
	id := ms[index].ID
	if m, ok := l.Leader(); ok && m.ID == id {
		// As slurmctld: "already in controller mode - skipping".
		return nil
	}
	if err := l.TransferLeadership(id); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, takeoverTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if m, ok := l.Leader(); ok && m.ID == id {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not take over: %w", id, ctx.Err())
		case <-tick.C:
		}
	}
}

// metrics reads the replica for the drover_raft_ series.
func (r *replication) metrics() (metrics.Replica, bool) {
	l := r.log.Load()
	if l == nil {
		return metrics.Replica{}, false
	}
	st := l.Stats()
	return metrics.Replica{State: st.State, Term: st.Term, CommitIndex: st.CommitIndex, AppliedIndex: st.AppliedIndex,
		LastContact: st.LastContact, LeaderChanges: st.LeaderChanges}, true
}
