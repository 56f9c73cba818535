package main

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/sched"
	"github.com/droverhq/drover/internal/sim"
	"github.com/droverhq/drover/internal/trace"
)

// schedWorkload is a busy GPU cluster: every node of 8 GPUs and 64 CPUs
// runs jobs that end at random times over the next two days, and a queue
// of pending jobs mixes one-GPU evaluations, whole-node and multi-node
// training runs, as the scheduler of an AI cluster sees it.
func schedWorkload(nodes, pending int, seed uint64) *sched.Snapshot {
	r := rand.New(rand.NewPCG(seed, 7))
	now := time.Unix(1_800_000_000, 0)
	part := &partition.Partition{Name: "gpu", MaxTime: partition.Infinite, State: partition.Up}
	s := &sched.Snapshot{Now: now, Partitions: map[string]*partition.Partition{"gpu": part},
		ArrayRunning: map[job.ID]uint32{}, Blocked: map[job.ID]job.Reason{}}
	id := job.ID(1)
	for i := range nodes {
		n := &node.Node{Name: "gpu" + strconv.Itoa(i+1), CPUs: 64, RealMemory: 512_000, Registered: true, Responding: true}
		for g := range 8 {
			n.GPUs = append(n.GPUs, node.GPU{Index: g, Type: "h100"})
		}
		part.Nodes = append(part.Nodes, n.Name)
		ns := sched.NodeState{Node: n, Used: node.Alloc{GPUs: make([]bool, 8)}}
		// One whole-node job, or two to eight GPU jobs sharing the node.
		shares := 1
		if r.IntN(2) == 0 {
			shares = 2 + r.IntN(7)
		}
		per := 8 / shares
		for k := range shares {
			na := job.NodeAlloc{Node: n.Name, CPUs: uint32(8 * per), MemMB: uint64(64_000 * per), Tasks: 1}
			for g := k * per; g < (k+1)*per; g++ {
				na.GPUs = append(na.GPUs, g)
				ns.Used.GPUs[g] = true
			}
			ns.Used.CPUs += na.CPUs
			ns.Used.MemMB += na.MemMB
			ns.Used.Jobs++
			end := now.Add(time.Duration(1+r.IntN(48*60)) * time.Minute)
			s.Running = append(s.Running, sched.Running{ID: id, Alloc: &job.Allocation{Nodes: []job.NodeAlloc{na}}, End: end})
			id++
		}
		s.Nodes = append(s.Nodes, ns)
	}
	for i := range pending {
		req := job.Request{Partition: "gpu", UserID: uint32(1000 + r.IntN(50)), MemPerCPU: 8000}
		switch k := r.IntN(10); {
		case k < 5: // evaluation: 1-2 GPUs, minutes to an hour
			req.GPUsPerNode = uint32(1 + r.IntN(2))
			req.CPUsPerTask = 8 * req.GPUsPerNode
			req.TimeLimit = uint32(10 + r.IntN(50))
		case k < 8: // one node
			req.GPUsPerNode = 8
			req.CPUsPerTask = 64
			req.TimeLimit = uint32(60 + r.IntN(24*60))
		default: // multi-node training
			req.MinNodes = uint32(2 + r.IntN(31))
			req.Exclusive = true
			req.GPUsPerNode = 8
			req.TimeLimit = uint32(24*60 + r.IntN(7*24*60))
		}
		s.Pending = append(s.Pending, &job.Job{ID: id, Req: req, State: job.Pending, ArrayTaskID: job.NoTask,
			Priority: uint32(1 + r.IntN(1000)), SubmitTime: now.Add(-time.Duration(pending-i) * time.Second)})
		id++
	}
	s.Backfill = true
	return s
}

// schedPass times one scheduling cycle (main and backfill pass) over the
// workload, returning the wall time and what it planned.
func schedPass(s *sched.Snapshot, maxJobTest int) (time.Duration, *sched.Plan) {
	p := sched.DefaultBackfillParams()
	p.MaxJobTest = maxJobTest
	b := &sched.Backfill{Params: p}
	begin := time.Now()
	plan := b.Schedule(s)
	return time.Since(begin), plan
}

// measureSched is the scheduling-pass figure: one pass with every pending
// job tested, and one with slurmctld's default bf_max_job_test (500).
func measureSched(sz sizes, rec *recorder) error {
	for _, test := range []int{sz.SchedPending, 500} {
		f := figure{Key: fmt.Sprintf("sched-pass-%d", test), Unit: "ms",
			Title:   fmt.Sprintf("scheduling pass (main + backfill), %d pending jobs on %d nodes, bf_max_job_test=%d", sz.SchedPending, sz.SchedNodes, test),
			Command: "sched.Backfill.Schedule in process"}
		var samples []float64
		note := ""
		for run := range sz.Runs {
			s := schedWorkload(sz.SchedNodes, sz.SchedPending, uint64(run))
			wall, plan := schedPass(s, test)
			samples = append(samples, float64(wall.Microseconds())/1000)
			note = fmt.Sprintf("last run: %d started, %d planned", len(plan.Starts), len(plan.Planned))
		}
		rec.add(f, "Drover", samples, note)
	}
	return nil
}

// measureSim is the simulator figure: jobs replayed per second of wall
// time on a whole trace, per policy; then the first 10,000 jobs of the
// same trace on a machine of about 5,000 nodes of 16 CPUs (drover sim
// --cpus 16 --scale), the size of today's large machines.
func measureSim(path string, runs int, rec *recorder) error {
	t, err := trace.Open(path)
	if err != nil {
		return fmt.Errorf("simulator trace: %w", err)
	}
	big, err := trace.Open(path)
	if err != nil {
		return fmt.Errorf("simulator trace: %w", err)
	}
	big.Jobs = big.Jobs[:min(len(big.Jobs), 10_000)]
	const bigCPUs = 16
	scale := max(5000*bigCPUs/max(big.MaxProcs, 1), 1)
	if err := big.Scale(scale); err != nil {
		return err
	}
	// The same arrivals on fewer nodes than they were scaled for: a
	// queue that stays (waits of about an hour), as on a busy machine,
	// where backfill has work on every pass.
	loaded, err := trace.Open(path)
	if err != nil {
		return fmt.Errorf("simulator trace: %w", err)
	}
	loaded.Jobs = loaded.Jobs[:min(len(loaded.Jobs), 20_000)]
	if err := loaded.Scale(scale); err != nil {
		return err
	}
	const loadedNodes = 2200
	for _, r := range []struct {
		key, flags string
		t          *trace.Trace
		cpus       int
		nodes      int
	}{
		{"sim-", "", t, 1, 0},
		{"sim-5k-nodes-", fmt.Sprintf(" --jobs 10000 --cpus %d --scale %d", bigCPUs, scale), big, bigCPUs, 0},
		{"sim-loaded-", fmt.Sprintf(" --jobs 20000 --cpus %d --scale %d --nodes %d", bigCPUs, scale, loadedNodes), loaded, bigCPUs, loadedNodes},
	} {
		c := sim.Cluster{Nodes: r.t.MaxProcs / r.cpus, CPUs: r.cpus}
		if r.nodes > 0 {
			c.Nodes = r.nodes
		}
		for _, p := range []sim.Policy{sim.FIFO, sim.Backfill} {
			f := figure{Key: r.key + string(p), Unit: "jobs/s", Higher: true,
				Title:   fmt.Sprintf("drover sim, %s, %s jobs of %s on %d nodes of %d CPUs", p, strconv.Itoa(len(r.t.Jobs)), r.t.Name, c.Nodes, c.CPUs),
				Command: "drover sim " + path + r.flags + " --policy " + string(p)}
			var samples []float64
			for range runs {
				res, err := sim.Run(r.t, sim.Config{Cluster: c, Policy: p})
				if err != nil {
					return err
				}
				samples = append(samples, float64(len(res.Outcomes))/res.Wall.Seconds())
			}
			rec.add(f, "Drover", samples, "")
		}
	}
	return nil
}
