package sched

import (
	"fmt"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/partition"
)

// Two partitions over the same two nodes: scav (PriorityTier 1, REQUEUE)
// runs evaluation jobs, prod (PriorityTier 10) training jobs.
func preemptSnapshot(running ...Running) *Snapshot {
	nodes := testNodes(2, 8, 8)
	s := snapshot(nodes)
	s.Partitions = map[string]*partition.Partition{
		"scav": {Name: "scav", Nodes: []string{"n1", "n2"}, MaxTime: partition.Infinite, PriorityTier: 1, PreemptMode: partition.PreemptRequeue},
		"prod": {Name: "prod", Nodes: []string{"n1", "n2"}, MaxTime: partition.Infinite, PriorityTier: 10, PreemptMode: partition.PreemptOff},
	}
	for _, r := range running {
		for i := range s.Nodes {
			for _, na := range r.Alloc.Nodes {
				if s.Nodes[i].Node.Name == na.Node {
					u := &s.Nodes[i].Used
					u.CPUs += na.CPUs
					u.Jobs++
					for len(u.GPUs) < 8 {
						u.GPUs = append(u.GPUs, false)
					}
					for _, g := range na.GPUs {
						u.GPUs[g] = true
					}
				}
			}
		}
		s.Running = append(s.Running, r)
	}
	s.Preempt = true
	return s
}

func onNode(id job.ID, part, name string, start int) Running {
	a := wholeNodes(name)
	return Running{ID: id, Alloc: &a, Partition: part, Start: time.Unix(int64(start), 0), End: time.Unix(1e9, 0)}
}

func prodJob(id job.ID, nodes uint32) *job.Job {
	j := pending(id, job.Request{MinNodes: nodes, Exclusive: true})
	j.Req.Partition = "prod"
	return j
}

func TestPreemptByPartitionTier(t *testing.T) {
	tests := []struct {
		name    string
		running []Running
		want    []Preemption
	}{
		{"one node: the youngest eval yields", []Running{onNode(1, "scav", "n1", 100), onNode(2, "scav", "n2", 200)}, []Preemption{{Victim: 2, For: 10}}},
		{"a free node: nobody yields", []Running{onNode(1, "scav", "n1", 100)}, nil},
		{"prod jobs are not preemptable", []Running{onNode(1, "prod", "n1", 100), onNode(2, "prod", "n2", 200)}, nil},
		{"a job already ending is waited for", []Running{onNode(1, "scav", "n1", 100), func() Running { r := onNode(2, "scav", "n2", 200); r.Ending = true; return r }()}, nil},
		{"only the eval on a node it can use", []Running{onNode(1, "prod", "n1", 300), onNode(2, "scav", "n2", 100)}, []Preemption{{Victim: 2, For: 10}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := preemptSnapshot(tc.running...)
			s.Pending = []*job.Job{prodJob(10, 1)}
			plan := (&FIFO{}).Schedule(s)
			if fmt.Sprint(plan.Preempt) != fmt.Sprint(tc.want) {
				t.Errorf("preempt %v, want %v", plan.Preempt, tc.want)
			}
			if len(tc.running) == 1 && len(plan.Starts) != 1 {
				t.Errorf("job did not start on the free node")
			}
		})
	}
	// A 2-node job takes both evals; without preemption nothing yields.
	s := preemptSnapshot(onNode(1, "scav", "n1", 100), onNode(2, "scav", "n2", 200))
	s.Pending = []*job.Job{prodJob(10, 2)}
	if plan := (&FIFO{}).Schedule(s); len(plan.Preempt) != 2 {
		t.Errorf("2-node job: preempt %v", plan.Preempt)
	}
	s.Preempt = false
	if plan := (&FIFO{}).Schedule(s); len(plan.Preempt) != 0 {
		t.Errorf("PreemptType=preempt/none preempted %v", plan.Preempt)
	}
	// An eval job never preempts a training job.
	s = preemptSnapshot(onNode(1, "prod", "n1", 100), onNode(2, "prod", "n2", 200))
	eval := pending(11, job.Request{MinNodes: 1, Exclusive: true})
	eval.Req.Partition = "scav"
	s.Pending = []*job.Job{eval}
	if plan := (&FIFO{}).Schedule(s); len(plan.Preempt) != 0 {
		t.Errorf("eval preempted %v", plan.Preempt)
	}
}

// preempt/qos: the partition tiers no longer matter; the job's QOS says
// whom it may preempt, and the lowest QOS priority goes first.
func TestPreemptByQOS(t *testing.T) {
	withQOS := func(r Running, qos string) Running { r.QOS = qos; return r }
	tests := []struct {
		name    string
		qos     string
		running []Running
		want    []Preemption
	}{
		{"low QOS yields, whatever its partition", "high", []Running{withQOS(onNode(1, "prod", "n1", 100), "low"), withQOS(onNode(2, "prod", "n2", 200), "normal")}, []Preemption{{Victim: 1, For: 10}}},
		{"the lowest QOS priority first, not the youngest", "high", []Running{withQOS(onNode(1, "scav", "n1", 100), "low"), withQOS(onNode(2, "scav", "n2", 200), "scavenger")}, []Preemption{{Victim: 2, For: 10}}},
		{"a QOS not in the Preempt list stays", "high", []Running{withQOS(onNode(1, "scav", "n1", 100), "normal"), withQOS(onNode(2, "scav", "n2", 200), "high")}, nil},
		{"a QOS that preempts nothing", "normal", []Running{withQOS(onNode(1, "scav", "n1", 100), "low"), withQOS(onNode(2, "scav", "n2", 200), "low")}, nil},
		{"a job without QOS is never a victim", "high", []Running{onNode(1, "scav", "n1", 100), onNode(2, "scav", "n2", 200)}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := preemptSnapshot(tc.running...)
			s.Preempt, s.PreemptQOS = false, true
			s.QOS = map[string]QOS{
				"high":      {Priority: 100, Preempt: []string{"low", "scavenger"}},
				"normal":    {Priority: 10},
				"low":       {Priority: 5},
				"scavenger": {Priority: 1},
			}
			j := prodJob(10, 1)
			j.Req.QOS = tc.qos
			s.Pending = []*job.Job{j}
			plan := (&FIFO{}).Schedule(s)
			if fmt.Sprint(plan.Preempt) != fmt.Sprint(tc.want) {
				t.Errorf("preempt %v, want %v", plan.Preempt, tc.want)
			}
		})
	}
}
