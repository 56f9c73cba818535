package acctdb

import (
	"context"
	"database/sql"
	"fmt"
	"github.com/google/go-cmp/cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/testutil"
)

// pg is the PostgreSQL server of this package's tests (nil: none here).
var (
	pg    *testutil.Postgres
	pgErr error
	dbSeq atomic.Int32
)

func TestMain(m *testing.M) {
	pg, pgErr = testutil.StartPostgres()
	code := m.Run()
	if pg != nil {
		pg.Stop()
	}
	os.Exit(code)
}

// stores opens an empty store of each kind this machine has.
func stores(t *testing.T) map[Kind]*Store {
	t.Helper()
	ctx := context.Background()
	out := map[Kind]*Store{}
	s, err := Open(ctx, Config{Kind: SQLite, Path: filepath.Join(t.TempDir(), "acct.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	out[SQLite] = s
	if pg == nil {
		t.Logf("PostgreSQL not tested: %v", pgErr)
		return out
	}
	url, err := pg.Database(fmt.Sprintf("t%d", dbSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Open(ctx, Config{Kind: Postgres, DSN: url})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	out[Postgres] = p
	return out
}

var t0 = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

func sample(cluster string, id, run uint32, user uint32, state string, submit time.Duration, end time.Duration) Job {
	j := Job{Cluster: cluster, JobID: id, Run: run, ArrayTaskID: NoTask, Name: fmt.Sprintf("job%d", id), User: fmt.Sprintf("u%d", user), UID: user,
		Account: "acct", QOS: "normal", Partition: "gpu", State: state, Submit: t0.Add(submit), KilledBy: -1, TimeLimit: 60}
	if end != 0 {
		j.Start, j.End = t0.Add(submit+time.Second), t0.Add(end)
		j.Nodes, j.NodeCount, j.AllocCPUs = "n1", 1, 2
	}
	return j
}

func TestPutAndQuery(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			jobs := []Job{
				sample("a", 1, 0, 1000, "COMPLETED", 0, time.Minute),
				sample("a", 2, 0, 1001, "FAILED", time.Minute, 2*time.Minute),
				sample("a", 3, 0, 1000, "NODE_FAIL", 2*time.Minute, 3*time.Minute),
				sample("a", 3, 1, 1000, "RUNNING", 2*time.Minute, 0),
				sample("b", 1, 0, 1000, "PENDING", 0, 0),
			}
			jobs[1].Group, jobs[1].GID = "g1001", 101
			jobs[2].ExitCode = 3
			arr := sample("a", 5, 0, 1000, "COMPLETED", time.Hour, time.Hour+time.Minute)
			arr.ArrayJobID, arr.ArrayTaskID = 4, 1
			jobs = append(jobs, arr)
			steps := []Step{{Cluster: "a", JobID: 1, StepID: StepBatch, Name: "batch", State: "COMPLETED", Start: t0, End: t0.Add(time.Minute),
				Usage: Usage{UserCPU: time.Second, MaxRSS: 1 << 20}}, {Cluster: "a", JobID: 1, StepID: 0, Name: "hostname", State: "COMPLETED"}}
			usage := []NodeUsage{
				{Cluster: "a", JobID: 1, StepID: 0, Node: "n1", Tasks: 2, Usage: Usage{UserCPU: time.Second, MaxRSS: 100, MaxRSSTask: 1, AveRSS: 80, MaxDiskRead: 5}},
				{Cluster: "a", JobID: 1, StepID: 0, Node: "n2", Tasks: 1, Usage: Usage{UserCPU: 2 * time.Second, SystemCPU: time.Second, MaxRSS: 300, MaxRSSTask: 2, AveRSS: 300, MaxDiskWrite: 7}},
			}
			if err := s.Put(ctx, Batch{Jobs: jobs, Steps: steps, Usage: usage}); err != nil {
				t.Fatal(err)
			}
			// Writing again replaces: the same records, one job changed.
			jobs[3].State, jobs[3].End = "COMPLETED", t0.Add(time.Hour)
			if err := s.Put(ctx, Batch{Jobs: jobs, Steps: steps, Usage: usage}); err != nil {
				t.Fatal(err)
			}
			ids := func(js []Job) []string {
				var out []string
				for _, j := range js {
					out = append(out, fmt.Sprintf("%s/%d.%d", j.Cluster, j.JobID, j.Run))
				}
				return out
			}
			for name, tc := range map[string]struct {
				f    Filter
				want []string
			}{
				"all":             {Filter{}, []string{"a/1.0", "a/2.0", "a/3.0", "a/3.1", "a/5.0", "b/1.0"}},
				"one cluster":     {Filter{Clusters: []string{"b"}}, []string{"b/1.0"}},
				"a job, all runs": {Filter{Clusters: []string{"a"}, JobIDs: []uint32{3}}, []string{"a/3.0", "a/3.1"}},
				"an array by id":  {Filter{Clusters: []string{"a"}, JobIDs: []uint32{4}}, []string{"a/5.0"}},
				"a user":          {Filter{Clusters: []string{"a"}, UIDs: []uint32{1001}}, []string{"a/2.0"}},
				"a user by name":  {Filter{Clusters: []string{"a"}, Users: []string{"u1001"}}, []string{"a/2.0"}},
				"a user by uid":   {Filter{Clusters: []string{"a"}, Users: []string{"1001", "nobody"}}, []string{"a/2.0"}},
				"states":          {Filter{States: []string{"NODE_FAIL", "FAILED"}}, []string{"a/2.0", "a/3.0"}},
				"ended before -S": {Filter{Clusters: []string{"a"}, Start: t0.Add(150 * time.Second)}, []string{"a/3.0", "a/3.1", "a/5.0"}},
				"submitted by -E": {Filter{Clusters: []string{"a"}, End: t0.Add(30 * time.Second)}, []string{"a/1.0"}},
				"limit":           {Filter{Limit: 2}, []string{"a/1.0", "a/2.0"}},
				"newest runs":     {Filter{Clusters: []string{"a"}}, []string{"a/1.0", "a/2.0", "a/3.1", "a/5.0"}},
				"a node":          {Filter{Nodes: []string{"n1"}, Clusters: []string{"a"}}, []string{"a/1.0", "a/2.0", "a/3.0", "a/5.0"}},
				"a group":         {Filter{Groups: []string{"g1001"}}, []string{"a/2.0"}},
				"a gid":           {Filter{Groups: []string{"101"}}, []string{"a/2.0"}},
				"an exit code":    {Filter{ExitCodes: []int32{3}}, []string{"a/3.0"}},
			} {
				if name != "newest runs" {
					tc.f.Duplicates = true
				}
				got, err := s.Jobs(ctx, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ids(got), tc.want) {
					t.Errorf("%s: %v, want %v", name, ids(got), tc.want)
				}
			}
			got, _ := s.Jobs(ctx, Filter{Clusters: []string{"a"}, JobIDs: []uint32{3}, Duplicates: true})
			if got[1].State != "COMPLETED" || !got[1].End.Equal(t0.Add(time.Hour)) || got[1].KilledBy != -1 {
				t.Errorf("replaced record: %+v", got[1])
			}
			st, err := s.Steps(ctx, got[:1])
			if err != nil {
				t.Fatal(err)
			}
			if len(st) != 0 {
				t.Errorf("steps of 3: %+v", st)
			}
			one, _ := s.Jobs(ctx, Filter{Clusters: []string{"a"}, JobIDs: []uint32{1}})
			st, err = s.Steps(ctx, one)
			if err != nil {
				t.Fatal(err)
			}
			if len(st) != 2 || st[0].StepID != 0 || st[1].StepID != StepBatch || st[1].Usage.UserCPU != time.Second || st[1].Usage.MaxRSS != 1<<20 {
				t.Fatalf("steps of 1: %+v", st)
			}
			// Step 0's usage is its two nodes' together.
			want := Usage{UserCPU: 3 * time.Second, SystemCPU: time.Second, MaxRSS: 300, MaxRSSNode: "n2", MaxRSSTask: 2,
				AveRSS: (80*2 + 300) / 3, MaxDiskRead: 5, MaxDiskWrite: 7}
			if st[0].Usage != want {
				t.Errorf("step 0's usage %+v, want %+v", st[0].Usage, want)
			}
		})
	}
}

// TestMigrations: a store opens again at its version, and a database of
// a newer schema is refused.
func TestMigrations(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "acct.db")
	s, err := Open(ctx, Config{Kind: SQLite, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, Batch{Jobs: []Job{sample("a", 1, 0, 1, "COMPLETED", 0, time.Second)}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the store's file: %v %v", st.Mode(), err)
	}
	s, err = Open(ctx, Config{Kind: SQLite, Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Jobs(ctx, Filter{}); len(got) != 1 {
		t.Errorf("after reopening: %+v", got)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`INSERT INTO acct_schema (version) VALUES (?)`, SchemaVersion+1)
	db.Close()
	if _, err := Open(ctx, Config{Kind: SQLite, Path: path}); err == nil || !strings.Contains(err.Error(), "newer than this build") {
		t.Errorf("a newer schema: %v", err)
	}
}

// BenchmarkPut is the accounting agent's write: a batch of finished
// jobs, each with its batch step, in one transaction. Records/s is what
// the store keeps up with.
func BenchmarkPut(b *testing.B) {
	for _, kind := range []Kind{SQLite, Postgres} {
		b.Run(string(kind), func(b *testing.B) {
			ctx := context.Background()
			var s *Store
			var err error
			switch kind {
			case SQLite:
				s, err = Open(ctx, Config{Kind: SQLite, Path: filepath.Join(b.TempDir(), "acct.db")})
			case Postgres:
				if pg == nil {
					b.Skipf("no PostgreSQL: %v", pgErr)
				}
				url, derr := pg.Database(fmt.Sprintf("b%d", dbSeq.Add(1)))
				if derr != nil {
					b.Fatal(derr)
				}
				s, err = Open(ctx, Config{Kind: Postgres, DSN: url})
			}
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			const batch = 1000
			next := uint32(1)
			b.ResetTimer()
			for range b.N {
				var bt Batch
				for range batch {
					j := sample("a", next, 0, 1000, "COMPLETED", 0, time.Second)
					bt.Jobs = append(bt.Jobs, j)
					bt.Steps = append(bt.Steps, Step{Cluster: "a", JobID: next, StepID: StepBatch, Name: "batch", State: "COMPLETED", Start: j.Start, End: j.End})
					next++
				}
				if err := s.Put(ctx, bt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "jobs/s")
		})
	}
}

// TestUsage: sreport's figures from job records and events, per cluster,
// clipped to the period.
func TestUsage(t *testing.T) {
	for kind, s := range stores(t) {
		t.Run(string(kind), func(t *testing.T) {
			ctx := context.Background()
			h := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Hour))) }
			j := func(id uint32, acct, user string, cpus uint32, elig, start, end float64) Job {
				r := Job{Cluster: "u", JobID: id, ArrayTaskID: NoTask, Account: acct, User: user, UID: 1000 + id, AllocCPUs: cpus, ReqCPUs: cpus,
					Submit: h(elig), Eligible: h(elig), State: "COMPLETED", KilledBy: -1}
				if start >= 0 {
					r.Start = h(start)
				}
				if end >= 0 {
					r.End = h(end)
				}
				return r
			}
			b := Batch{
				Jobs: []Job{
					j(1, "phys", "ann", 4, 0, 1, 3),    // 1 h in the period (2..3)
					j(2, "phys", "bob", 2, 2, 2.5, 10), // 1.5 h in it, waited 0.5 h
					j(3, "chem", "ann", 8, 3, 3, 3.5),  // 0.5 h
					j(4, "chem", "cat", 1, 5, 6, 7),    // after the period
					j(5, "chem", "cat", 16, 3, -1, -1), // still waiting: 1 h eligible
				},
				Events: []Event{
					{Cluster: "u", Node: "", Start: h(0), State: ClusterEvent, CPUs: 32},
					{Cluster: "u", Node: "n3", Start: h(2), End: h(3), State: "DOWN", CPUs: 8},
					{Cluster: "other", Node: "", Start: h(0), State: ClusterEvent, CPUs: 4},
				},
			}
			if err := s.Put(ctx, b); err != nil {
				t.Fatal(err)
			}
			got, err := s.Usage(ctx, UsageQuery{Start: h(2), End: h(4), Now: h(4)})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Cluster != "other" || got[1].Cluster != "u" {
				t.Fatalf("clusters: %+v", got)
			}
			u := got[1]
			want := ClusterUsage{Cluster: "u", Reported: 32 * 7200, Allocated: (4*1 + 2*1.5 + 8*0.5) * 3600, Down: 8 * 3600,
				Planned: (2*0.5 + 16*1) * 3600,
				Assocs:  []AssocUsage{{"chem", "ann", 1003, 8 * 1800}, {"phys", "ann", 1001, 4 * 3600}, {"phys", "bob", 1002, 2 * 5400}},
				Sizes:   []SizeUsage{{"chem", 8, 1, 8 * 1800}, {"phys", 2, 1, 2 * 5400}, {"phys", 4, 1, 4 * 3600}}}
			if d := cmp.Diff(want, u); d != "" {
				t.Fatalf("usage (-want +got):\n%s", d)
			}
			if idle := u.Idle(); idle != 32*7200-want.Allocated-want.Down-want.Planned {
				t.Errorf("idle %v", idle)
			}
			cpus, _, ok, err := s.ClusterSize(ctx, "u")
			if err != nil || !ok || cpus != 32 {
				t.Errorf("ClusterSize = %d, %v, %v", cpus, ok, err)
			}
		})
	}
}

// TestQueriesUseIndexes: sacct's usual questions are answered from an
// index on more than the cluster, never by reading every record of it
// (a million records take a second to read).
func TestQueriesUseIndexes(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Config{Kind: SQLite, Path: filepath.Join(t.TempDir(), "acct.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for name, f := range map[string]Filter{
		"a job":                {Clusters: []string{"a"}, JobIDs: []uint32{5}},
		"a user's day":         {Clusters: []string{"a"}, Users: []string{"ann"}, Start: t0},
		"a user by uid":        {Clusters: []string{"a"}, Users: []string{"1001"}, Start: t0, End: t0.Add(time.Hour)},
		"a uid":                {Clusters: []string{"a"}, UIDs: []uint32{1001}},
		"everyone's last hour": {Clusters: []string{"a"}, Start: t0},
	} {
		q, args := jobsQuery(f)
		rows, err := s.db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN jobs") || strings.HasSuffix(step, "(cluster=?)") {
				t.Errorf("%s: reads the whole cluster: %q", name, plan)
				break
			}
		}
	}
}
