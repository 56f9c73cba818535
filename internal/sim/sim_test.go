package sim

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/sched"
	"github.com/droverhq/drover/internal/trace"
)

func smallTrace(t *testing.T) *trace.Trace {
	t.Helper()
	tr, err := trace.Open("../trace/testdata/small.swf")
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// On four one-processor nodes: job 1 (2 procs, 100 s) runs at once, job 2
// (4 procs) waits for it; job 3 (1 proc, 30 s, limit 1 min) fits beside
// job 1 before job 2's reservation. FIFO keeps it behind job 2; backfill
// starts it once bf_interval (30 s) after the first pass, at 30 s. Job 6
// (8 procs) is larger than the machine.
func TestFIFOAndBackfillOnASmallTrace(t *testing.T) {
	tr := smallTrace(t)
	c := Cluster{Nodes: 4, CPUs: 1}
	tests := []struct {
		policy Policy
		want   []Outcome
	}{
		{FIFO, []Outcome{{0, 0, 100, 2}, {1, 100, 200, 4}, {2, 200, 230, 1}}},
		{Backfill, []Outcome{{0, 0, 100, 2}, {1, 100, 200, 4}, {2, 30, 60, 1}}},
	}
	for _, tc := range tests {
		res, err := Run(tr, Config{Cluster: c, Policy: tc.policy})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, res.Outcomes); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.policy, diff)
		}
		if res.Skipped != 1 {
			t.Errorf("%s: skipped %d, want job 6", tc.policy, res.Skipped)
		}
	}
	// With bf_interval=1 the backfill pass at job 3's submission starts it.
	res, err := Run(tr, Config{Cluster: c, Policy: Backfill, Backfill: sched.BackfillParams{MaxJobTest: 10, Window: time.Hour, Resolution: time.Second, Interval: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Outcomes[2]; got.Start != 2 {
		t.Errorf("bf_interval=1: job 3 started at %d, want 2", got.Start)
	}
}

func TestSummarise(t *testing.T) {
	m := Summarise([]Outcome{{0, 0, 100, 2}, {1, 100, 200, 4}, {2, 200, 230, 1}}, 4)
	want := Metrics{Jobs: 3, MeanWait: (0 + 99 + 198) / 3.0, P95Wait: 198, Makespan: 230,
		Utilization:         (200 + 400 + 30) / (4 * 230.0),
		MeanBoundedSlowdown: (1 + 199/100.0 + 228/30.0) / 3}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	site := SiteOutcomes(smallTrace(t), Cluster{Nodes: 4, CPUs: 1})
	if diff := cmp.Diff([]Outcome{{0, 0, 100, 2}, {1, 100, 200, 4}, {2, 30, 60, 1}}, site); diff != "" {
		t.Errorf("site schedule (-want +got):\n%s", diff)
	}
}

// GPU jobs of up to a node's GPUs share nodes; larger ones take whole
// nodes; one larger than the machine is left out.
func TestGPUTrace(t *testing.T) {
	tr, err := trace.Read(strings.NewReader("job_id,submission_time,duration,num_gpu\n"+
		"a,0,100,4\nb,0,100,4\nc,0,100,16\nd,10,50,8\ne,10,10,64\n"), "gpu")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(tr, Config{Cluster: Cluster{Nodes: 2, CPUs: 64, GPUs: 8}, Policy: Backfill})
	if err != nil {
		t.Fatal(err)
	}
	// a and b share node 1 at once; c needs both nodes, after them (their
	// limits end at 120 s); d takes the idle node 2 in the gap, at the
	// first backfill pass after its submission (bf_interval), as its
	// limit (1 min) ends before c's reservation.
	want := []Outcome{{0, 0, 100, 4}, {0, 0, 100, 4}, {0, 100, 200, 16}, {10, 30, 80, 8}}
	if diff := cmp.Diff(want, res.Outcomes); diff != "" || res.Skipped != 1 {
		t.Errorf("(-want +got):\n%s\nskipped %d", diff, res.Skipped)
	}
}

// Over random traces, no schedule ever holds more of the machine than it
// has, every job starts after its submission and runs its time, and the
// two policies run the same jobs.
func TestPropertySchedulesFitTheMachine(t *testing.T) {
	for seed := uint64(0); seed < 60; seed++ {
		r := rand.New(rand.NewPCG(seed, 9))
		c := Cluster{Nodes: 1 + r.IntN(8), CPUs: 1 + r.IntN(4)}
		tr := &trace.Trace{Kind: trace.CPU}
		at := int64(0)
		for i := range 40 + r.IntN(80) {
			at += int64(r.IntN(120))
			run := int64(r.IntN(3000))
			tr.Jobs = append(tr.Jobs, trace.Job{ID: strings.Repeat("j", 1) + string(rune('0'+i%10)), Submit: at, Run: run,
				Estimate: run + int64(r.IntN(2000)), Procs: 1 + r.IntN(c.Nodes*c.CPUs+2), Wait: -1})
		}
		var runs [][]Outcome
		for _, p := range []Policy{FIFO, Backfill} {
			res, err := Run(tr, Config{Cluster: c, Policy: p})
			if err != nil {
				t.Fatalf("seed %d %s: %v", seed, p, err)
			}
			checkCapacity(t, seed, p, res.Outcomes, c.Nodes*c.CPUs)
			runs = append(runs, res.Outcomes)
		}
		if len(runs[0]) != len(runs[1]) {
			t.Fatalf("seed %d: fifo ran %d jobs, backfill %d", seed, len(runs[0]), len(runs[1]))
		}
	}
}

func checkCapacity(t *testing.T, seed uint64, p Policy, out []Outcome, capacity int) {
	t.Helper()
	type ev struct {
		at    int64
		delta int
	}
	var evs []ev
	for i, o := range out {
		if o.Start < o.Submit || o.End < o.Start {
			t.Fatalf("seed %d %s: job %d submit %d start %d end %d", seed, p, i, o.Submit, o.Start, o.End)
		}
		evs = append(evs, ev{o.Start, o.Size}, ev{o.End, -o.Size})
	}
	// Ends before starts at the same second: a node freed at t is free at t.
	slices.SortFunc(evs, func(a, b ev) int {
		if a.at != b.at {
			return int(a.at - b.at)
		}
		return a.delta - b.delta
	})
	used := 0
	for _, e := range evs {
		used += e.delta
		if used > capacity {
			t.Fatalf("seed %d %s: %d of %d processors in use at %d", seed, p, used, capacity, e.at)
		}
	}
}

func TestReport(t *testing.T) {
	var b bytes.Buffer
	cols := []Column{
		{Name: "fifo", Metrics: Metrics{Jobs: 77222, Utilization: 0.5, MeanWait: 7200, P95Wait: 3 * 86400, MeanBoundedSlowdown: 2.5, Makespan: 100}, Run: &Result{Outcomes: make([]Outcome, 1000), Cycles: 1234, Wall: 2 * time.Second}},
		{Name: "site log", Metrics: Metrics{Jobs: 3, MeanWait: 59}},
	}
	if err := Report(&b, []string{"trace x"}, cols); err != nil {
		t.Fatal(err)
	}
	want := `trace x
                           fifo  site log
                   jobs  77,222         3
            utilization  50.0 %     0.0 %
              mean wait   2.0 h      59 s
               p95 wait   3.0 d       0 s
  mean bounded slowdown    2.50      0.00
               makespan   100 s       0 s
      scheduling cycles   1,234         -
           simulated in      2s         -
        jobs per second     500         -
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestChart(t *testing.T) {
	var b bytes.Buffer
	writeChart(&b, "Waits <x>", []Series{{Name: "fifo", Waits: []float64{0, 5, 50, 5000}}, {Name: "backfill", Waits: []float64{0, 0, 1}}})
	svg := b.String()
	for _, want := range []string{`<svg xmlns="http://www.w3.org/2000/svg"`, `Waits &lt;x&gt;`, `>1,000 s<`, `>10,000 s<`, `>fifo<`, `>backfill<`, `</svg>`} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if n := strings.Count(svg, "<polyline"); n != 2 {
		t.Errorf("%d lines, want 2", n)
	}
	if err := Chart(t.TempDir()+"/c.png", "t", nil); err == nil {
		t.Errorf("a .png name was accepted")
	}
}

// Progress is told as the replay goes and once at its end, with every
// job ended then.
func TestProgress(t *testing.T) {
	tr := smallTrace(t)
	var seen []Progress
	res, err := Run(tr, Config{Cluster: Cluster{Nodes: 4, CPUs: 1}, Policy: Backfill,
		Progress: func(p Progress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) == 0 {
		t.Fatal("no progress")
	}
	last, end := seen[len(seen)-1], int64(0)
	for _, o := range res.Outcomes {
		end = max(end, o.End)
	}
	if !last.Done || last.Ended != len(res.Outcomes) || last.Total != len(res.Outcomes) || last.Now != end {
		t.Errorf("last progress %+v, want done with %d of %d ended at %d", last, len(res.Outcomes), len(res.Outcomes), end)
	}
	for _, p := range seen[:len(seen)-1] {
		if p.Done {
			t.Errorf("progress %+v done before the end", p)
		}
	}
}
