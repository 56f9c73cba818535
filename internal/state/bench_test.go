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

// blockFSM's snapshot is size bytes written 1 KiB at a time, about how the
// controller writes one job after another.
type blockFSM struct {
	nopFSM
	size int
}

func (f blockFSM) Snapshot(w io.Writer) error {
	block := make([]byte, 1024)
	for n := 0; n < f.size; n += len(block) {
		if _, err := w.Write(block); err != nil {
			return err
		}
	}
	return nil
}

func (blockFSM) Restore(r io.Reader) error {
	_, err := io.Copy(io.Discard, r)
	return err
}

// BenchmarkSnapshot writes a 128 MiB snapshot (100,000 held jobs' worth)
// and commits it: the memory it takes must not grow with the state.
func BenchmarkSnapshot(b *testing.B) {
	const size = 128 << 20
	l, err := Open(filepath.Join(b.TempDir(), "state.db"), blockFSM{size: size}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		// A record in between, or Snapshot has nothing new to cover.
		if _, err := l.Apply(context.Background(), []byte("x")); err != nil {
			b.Fatal(err)
		}
		if err := l.Snapshot(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOpenSnapshot is recovery from a 128 MiB snapshot: checking its
// checksum, then streaming it to Restore.
func BenchmarkOpenSnapshot(b *testing.B) {
	const size = 128 << 20
	path := filepath.Join(b.TempDir(), "state.db")
	l, err := Open(path, blockFSM{size: size}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := l.Apply(context.Background(), []byte("x")); err != nil {
		b.Fatal(err)
	}
	if err := l.Snapshot(); err != nil {
		b.Fatal(err)
	}
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		l, err := Open(path, blockFSM{}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
}
