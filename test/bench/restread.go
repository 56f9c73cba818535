package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// measureRESTRead is issue 6's read figures: GET ping/ requests per second
// from many clients at once, and GET jobs/ over 10,000 held jobs (and
// 100,000 on Drover, whose MaxJobCount allows it): latency and size.
func measureRESTRead(ctx context.Context, sys system, sz sizes, rec *recorder) error {
	in, err := sys.Fresh(ctx, freshOptions{Settle: true})
	if err != nil {
		return err
	}
	defer in.Close()
	hc, base := in.REST()
	if hc == nil {
		rec.log("%s: no REST API to read", sys.Name())
		return nil
	}
	const clients, window = 32, 3 * time.Second
	var rates []float64
	for range max(sz.Runs, 3) {
		n, err := hammer(ctx, hc, base+"/ping/", clients, window)
		if err != nil {
			return err
		}
		rates = append(rates, float64(n)/window.Seconds())
	}
	rec.add(figure{Key: "rest-ping", Title: fmt.Sprintf("GET ping/ requests/s, %d clients, unix socket", clients), Unit: "req/s", Higher: true,
		Command: "GET /slurm/<version>/ping/"}, sys.Name(), rates, "")

	have := 0
	for _, n := range []int{10_000, 100_000} {
		if n > 10_000 && sys.Name() != "Drover" {
			break
		}
		if err := fill(ctx, in, sz, have, n); err != nil {
			return err
		}
		have = n
		waitQuiet(in.ControllerPID(), 30*time.Second)
		var times []float64
		size := 0
		// The first listings after the queue filled warm up the server's
		// buffers (and on Drover its encoders' pools): a dashboard polling
		// the list sees what comes after, which is what is timed.
		const warmup = 3
		for i := -warmup; i < max(sz.Runs, 5); i++ {
			begin := time.Now()
			b, err := get(ctx, hc, base+"/jobs/")
			if err != nil {
				return err
			}
			if i >= 0 {
				times = append(times, float64(time.Since(begin).Microseconds())/1000)
			}
			size = len(b)
		}
		rec.add(figure{Key: fmt.Sprintf("rest-jobs-%d", n), Title: fmt.Sprintf("GET jobs/ over %d held jobs, unix socket", n), Unit: "ms",
			Command: "GET /slurm/<version>/jobs/"}, sys.Name(), times, fmt.Sprintf("%.1f MiB", float64(size)/(1<<20)))
	}
	return nil
}

// hammer sends GET url from n clients for d and counts the answers.
func hammer(ctx context.Context, hc *http.Client, url string, n int, d time.Duration) (int64, error) {
	var count atomic.Int64
	var firstErr error
	var once sync.Once
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				if _, err := get(ctx, hc, url); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				count.Add(1)
			}
		}()
	}
	wg.Wait()
	return count.Load(), firstErr
}

func get(ctx context.Context, hc *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d: %.200s", url, resp.StatusCode, b)
	}
	return b, nil
}
