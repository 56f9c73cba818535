package state

import (
	"sync"
	"sync/atomic"
)

// Stats is a point-in-time view of a Log's counters, for the diag endpoint.
// Counters start at zero when the file is opened.
type Stats struct {
	// Records is how many records were committed and applied since Open.
	Records uint64
	// Batches is how many transactions (fsyncs) committed those records.
	Batches uint64
	// Snapshots is how many snapshots were written since Open.
	Snapshots uint64
	// LastBatchSize is the number of records in the latest transaction.
	LastBatchSize int
	// AvgBatchSize is Records/Batches: how well group commit is amortising
	// fsyncs (1 means every record paid for its own).
	AvgBatchSize float64
	// LastIndex is the index of the last applied record.
	LastIndex uint64
	// SnapshotIndex is the index the latest snapshot covers (0 for none).
	SnapshotIndex uint64
	// Replayed is how many log records Open replayed after the snapshot.
	Replayed uint64
	// SnapshotError is the latest snapshot failure, empty once one succeeds.
	SnapshotError string
	// Failed is the commit error that stopped the log, empty while healthy.
	Failed string
}

// statsCounters are updated by the writer and read by Stats from any
// goroutine.
type statsCounters struct {
	records       atomic.Uint64
	batches       atomic.Uint64
	snapshots     atomic.Uint64
	lastBatch     atomic.Int64
	snapshotIndex atomic.Uint64
	replayed      atomic.Uint64

	mu          sync.Mutex
	snapshotErr string
}

func (s *statsCounters) recordBatch(n int) {
	s.records.Add(uint64(n))
	s.batches.Add(1)
	s.lastBatch.Store(int64(n))
}

func (s *statsCounters) recordSnapshot(index uint64) {
	s.snapshots.Add(1)
	s.snapshotIndex.Store(index)
	s.mu.Lock()
	s.snapshotErr = ""
	s.mu.Unlock()
}

func (s *statsCounters) setSnapshotError(err error) {
	s.mu.Lock()
	s.snapshotErr = err.Error()
	s.mu.Unlock()
}

// Stats returns the log's counters. It is safe to call at any time, including
// after Close.
func (l *Log) Stats() Stats {
	st := Stats{
		Records:       l.stats.records.Load(),
		Batches:       l.stats.batches.Load(),
		Snapshots:     l.stats.snapshots.Load(),
		LastBatchSize: int(l.stats.lastBatch.Load()),
		LastIndex:     l.LastIndex(),
		SnapshotIndex: l.stats.snapshotIndex.Load(),
		Replayed:      l.stats.replayed.Load(),
	}
	if st.Batches > 0 {
		st.AvgBatchSize = float64(st.Records) / float64(st.Batches)
	}
	l.stats.mu.Lock()
	st.SnapshotError = l.stats.snapshotErr
	l.stats.mu.Unlock()
	if err := l.failure(); err != nil {
		st.Failed = err.Error()
	}
	return st
}
