package state

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// nopFSM keeps benchmarks measuring the log, not the state machine.
type nopFSM struct{}

func (nopFSM) Apply(index uint64, _ []byte) any { return index }
func (nopFSM) Snapshot(w io.Writer) error       { _, err := io.WriteString(w, "{}"); return err }
func (nopFSM) Restore(io.Reader) error          { return nil }

// benchApply runs b.N applies of a 256-byte record (about one job
// submission) from proposers goroutines and reports records/s and the
// average group-commit size.
func benchApply(b *testing.B, proposers int, opts Options) {
	l, err := Open(filepath.Join(b.TempDir(), "state.db"), nopFSM{}, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	record := make([]byte, 256)
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range proposers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if _, err := l.Apply(context.Background(), record); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
	b.ReportMetric(l.Stats().AvgBatchSize, "records/batch")
}

// BenchmarkApply8Concurrent is the controller's common case: several API
// handlers proposing at once, every record fsynced.
func BenchmarkApply8Concurrent(b *testing.B) {
	benchApply(b, 8, Options{})
}

// BenchmarkApplyNoSync is the same load without fsync: the difference is
// what durability costs on this disk.
func BenchmarkApplyNoSync(b *testing.B) {
	benchApply(b, 8, Options{NoSync: true})
}

// BenchmarkApplySerial is one proposer at a time: no grouping is possible,
// so it measures one fsync per record.
func BenchmarkApplySerial(b *testing.B) {
	benchApply(b, 1, Options{})
}

// BenchmarkApplyProposers shows how group commit scales with concurrency.
func BenchmarkApplyProposers(b *testing.B) {
	for _, n := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("proposers=%d", n), func(b *testing.B) {
			benchApply(b, n, Options{})
		})
	}
}
