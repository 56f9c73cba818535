package sched

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/job"
)

// usage writes the nodes' usage down for comparison (GPU flags as the
// indices in use: their slices' lengths may differ).
func usage(s *Snapshot) string {
	var b strings.Builder
	for _, ns := range s.Nodes {
		fmt.Fprintf(&b, "%s:%d/%d/%d/[", ns.Node.Name, ns.Used.CPUs, ns.Used.MemMB, ns.Used.Jobs)
		for g, on := range ns.Used.GPUs {
			if on {
				fmt.Fprintf(&b, "%d ", g)
			}
		}
		b.WriteString("] ")
	}
	return b.String()
}

// cycles schedules s for a few cycles as a controller would: starts
// become running jobs (taken in the nodes' usage by the caller unless
// the passes take them themselves), one running job ends each cycle,
// the clock moves on. It returns each cycle's starts and usage.
func cycles(t *testing.T, s *Snapshot, startsOnly bool) []string {
	t.Helper()
	var out []string
	b := backfillSched()
	b.Params.MaxJobTest = 1000
	s.StartsOnly = startsOnly
	for cycle := range 6 {
		before := usage(s)
		plan := b.Schedule(s)
		if !s.InPlace && usage(s) != before {
			t.Fatalf("a pass over a copy changed the snapshot's usage:\n%s\n%s", before, usage(s))
		}
		for _, st := range plan.Starts {
			a := st.Alloc
			if s.InPlace {
				s.Running = append(s.Running, Running{ID: st.JobID, Alloc: &a, End: s.Now.Add(time.Hour)})
			} else {
				running(s, st.JobID, 60, a)
			}
			s.Pending = slices.DeleteFunc(s.Pending, func(j *job.Job) bool { return j.ID == st.JobID })
		}
		if len(s.Running) > 0 {
			i := cycle % len(s.Running)
			for _, na := range s.Running[i].Alloc.Nodes {
				for k := range s.Nodes {
					if u := &s.Nodes[k].Used; s.Nodes[k].Node.Name == na.Node {
						u.CPUs -= na.CPUs
						u.MemMB -= na.MemMB
						u.Jobs--
						for _, g := range na.GPUs {
							u.GPUs[g] = false
						}
					}
				}
			}
			s.Running = slices.Delete(s.Running, i, i+1)
		}
		s.Now = s.Now.Add(time.Minute)
		out = append(out, fmt.Sprint(plan.Starts), usage(s))
	}
	return out
}

// A pass over the caller's own nodes (InPlace) starts what a pass over a
// copy starts, cycle after cycle, and leaves in the nodes' usage what the
// caller's taking of the same starts leaves; a pass over a copy changes
// nothing of the snapshot.
func TestPropertyInPlaceSameAsCopy(t *testing.T) {
	for seed := uint64(0); seed < 300; seed++ {
		mk := func() *Snapshot {
			s := randomWorkload(rand.New(rand.NewPCG(seed, 11)))
			for _, j := range s.Pending {
				if j.ID%5 == 0 {
					// Some jobs exclude a node: their candidates are
					// made for them alone.
					j.Req.Exclude = []string{s.Nodes[0].Node.Name}
				}
			}
			return s
		}
		startsOnly := seed%2 == 1
		want := cycles(t, mk(), startsOnly)
		s := mk()
		s.InPlace = true
		got := cycles(t, s, startsOnly)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("seed %d, cycle %d: over a copy\n%s\nin place\n%s", seed, i/2, want[i], got[i])
			}
		}
	}
}
