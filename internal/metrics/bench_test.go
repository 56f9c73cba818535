package metrics_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/metrics"
	"github.com/droverhq/drover/internal/state"
)

// BenchmarkScrape scrapes each set of a controller holding 1,000 and
// 100,000 jobs from 200 users: the cost must not grow with the jobs, as
// the counts are kept as the state changes (ctlstate.JobStats) and a
// scrape walks only nodes, partitions, users and accounts.
func BenchmarkScrape(b *testing.B) {
	for _, n := range []int{1_000, 100_000} {
		b.Run("jobs="+strconv.Itoa(n), func(b *testing.B) {
			c := ctltest.New(b, withMetrics, func(cfg *controller.Config) {
				cfg.StoreOptions = state.Options{NoSync: true}
				cfg.MaxArraySize = 0
			})
			c.RegisterAll()
			fill(b, c, n)
			h := metrics.NewEndpoints(func() metrics.Live { return c.Ctl }, metrics.NewController()).Wrap(http.NotFoundHandler())
			for _, path := range []string{metrics.PathJobs, metrics.PathNodes, metrics.PathPartitions, metrics.PathScheduler, metrics.PathUsersAccts} {
				b.Run(path[len("/metrics/"):], func(b *testing.B) {
					req := httptest.NewRequest(http.MethodGet, path, nil)
					// The first scrape counts every job once.
					h.ServeHTTP(httptest.NewRecorder(), req)
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						w := httptest.NewRecorder()
						h.ServeHTTP(w, req)
						if w.Code != http.StatusOK {
							b.Fatalf("%s: %d", path, w.Code)
						}
					}
				})
			}
		})
	}
}

// fill submits n jobs from 200 users over the three open partitions,
// four submitters at a time so that group commit batches them.
func fill(b *testing.B, c *ctltest.Cluster, n int) {
	b.Helper()
	parts := []string{"gpu", "debug", "short"}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				u := i % 200
				who := controller.Identity{UID: uint32(5000 + u), GID: 5000, User: fmt.Sprintf("user%03d", u), Group: "users"}
				r := ctltest.Request(func(r *job.Request) { r.Partition, r.CPUsPerTask = parts[i%3], uint32(1+i%8) })
				if _, err := c.Ctl.Submit(ctx, who, controller.Submission{Req: r}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}
