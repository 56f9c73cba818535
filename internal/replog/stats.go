package replog

import (
	"strconv"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Stats is a replica's view of the replicated log, for sdiag and the
// metrics.
type Stats struct {
	// State is raft's: Leader, Follower, Candidate or Shutdown.
	State string
	// Leader is the leading member's ID ("" while none is known).
	Leader string
	Term   uint64
	// LastIndex is the last entry in this replica's log; CommitIndex
	// the last known committed; AppliedIndex the last applied here.
	LastIndex    uint64
	CommitIndex  uint64
	AppliedIndex uint64
	// SnapshotIndex is what the latest snapshot covers.
	SnapshotIndex uint64
	// LastContact is when a follower last heard from the leader (zero
	// on the leader itself, or before any contact).
	LastContact time.Time
	// Elections won by this replica since it started.
	LeaderTerms uint64
	// LeaderChanges counts the times this replica learnt of a new
	// leader (itself included) since it started.
	LeaderChanges uint64
	// Commits is how many proposals this replica committed as leader,
	// and CommitMicros the time they took in all.
	Commits      uint64
	CommitMicros uint64
	// Voters is the number of voting members.
	Voters int
}

type statsCounters struct {
	terms         atomic.Uint64
	leaderChanges atomic.Uint64
	commits       atomic.Uint64
	micros        atomic.Uint64
}

func (s *statsCounters) commit(took time.Duration) {
	s.commits.Add(1)
	s.micros.Add(uint64(took.Microseconds()))
}

// Stats reads the replica's state now.
func (l *Log) Stats() Stats {
	rs := l.raft.Stats()
	num := func(k string) uint64 { n, _ := strconv.ParseUint(rs[k], 10, 64); return n }
	_, leader := l.raft.LeaderWithID()
	st := Stats{
		State:         l.raft.State().String(),
		Leader:        string(leader),
		Term:          l.raft.CurrentTerm(),
		LastIndex:     l.raft.LastIndex(),
		CommitIndex:   l.raft.CommitIndex(),
		AppliedIndex:  l.raft.AppliedIndex(),
		SnapshotIndex: num("last_snapshot_index"),
		LeaderTerms:   l.stats.terms.Load(),
		LeaderChanges: l.stats.leaderChanges.Load(),
		Commits:       l.stats.commits.Load(),
		CommitMicros:  l.stats.micros.Load(),
	}
	if l.raft.State() != raft.Leader {
		st.LastContact = l.raft.LastContact()
	}
	if f := l.raft.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			if s.Suffrage == raft.Voter {
				st.Voters++
			}
		}
	}
	return st
}
