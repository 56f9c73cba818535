package sched

import (
	"slices"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/partition"
)

// preemptFor chooses running jobs to preempt so that a job that does not
// fit can start, as preempt/partition_prio does: only jobs of partitions of
// a lower PriorityTier whose PreemptMode is not OFF, lowest tier first and
// the most recently started first within a tier; or as preempt/qos does:
// only jobs whose QOS the job's QOS may preempt, lowest QOS priority
// first, then the most recently started; and no more of them than
// the job needs. Jobs already ending count as gone; if they alone make
// room, nothing more is preempted and the job waits for them.
func (p *pass) preemptFor(s *Snapshot, j *job.Job, part *partition.Partition, sh *shape, cands []*NodeState, required map[string]bool) {
	// What the job's nodes would have left without a set of jobs.
	inCands := make(map[string]int, len(cands))
	for i, ns := range cands {
		inCands[ns.Node.Name] = i
	}
	without := func(gone []Running) []*NodeState {
		out := make([]*NodeState, len(cands))
		for i, ns := range cands {
			c := *ns
			c.Used.GPUs = slices.Clone(ns.Used.GPUs)
			out[i] = &c
		}
		for _, r := range gone {
			for _, na := range r.Alloc.Nodes {
				i, ok := inCands[na.Node]
				if !ok {
					continue
				}
				u := &out[i].Used
				u.CPUs -= min(u.CPUs, na.CPUs)
				u.MemMB -= min(u.MemMB, na.MemMB)
				u.Jobs = max(u.Jobs-1, 0)
				for _, g := range na.GPUs {
					if g < len(u.GPUs) {
						u.GPUs[g] = false
					}
				}
			}
		}
		return out
	}
	touches := func(r Running) bool {
		for _, na := range r.Alloc.Nodes {
			if _, ok := inCands[na.Node]; ok {
				return true
			}
		}
		return false
	}
	var ending, eligible []Running
	for _, r := range s.Running {
		if r.Alloc == nil || !touches(r) {
			continue
		}
		if r.Ending || p.preempted[r.ID] {
			ending = append(ending, r)
			continue
		}
		if s.PreemptQOS {
			if !slices.Contains(s.QOS[j.Req.QOS].Preempt, r.QOS) || r.QOS == "" {
				continue
			}
		} else {
			vp := s.Partitions[r.Partition]
			if vp == nil || vp.PriorityTier >= part.PriorityTier || vp.PreemptMode == partition.PreemptOff || vp.PreemptMode == "" {
				continue
			}
		}
		eligible = append(eligible, r)
	}
	if _, ok := sh.place(without(ending), required); ok {
		return
	}
	slices.SortStableFunc(eligible, func(a, b Running) int {
		if s.PreemptQOS {
			if qa, qb := s.QOS[a.QOS].Priority, s.QOS[b.QOS].Priority; qa != qb {
				return cmpAsc(qa, qb)
			}
			return b.Start.Compare(a.Start)
		}
		ta, tb := s.Partitions[a.Partition].PriorityTier, s.Partitions[b.Partition].PriorityTier
		if ta != tb {
			return cmpAsc(ta, tb)
		}
		return b.Start.Compare(a.Start)
	})
	var victims []Running
	fits := func(vs []Running) bool {
		_, ok := sh.place(without(append(slices.Clone(ending), vs...)), required)
		return ok
	}
	for _, r := range eligible {
		victims = append(victims, r)
		if fits(victims) {
			break
		}
	}
	if len(victims) == 0 || !fits(victims) {
		return
	}
	// Spare any victim the others make unnecessary.
	for i := len(victims) - 1; i >= 0; i-- {
		rest := slices.Delete(slices.Clone(victims), i, i+1)
		if len(rest) > 0 && fits(rest) {
			victims = rest
		}
	}
	if p.preempted == nil {
		p.preempted = map[job.ID]bool{}
	}
	for _, v := range victims {
		p.preempted[v.ID] = true
		p.plan.Preempt = append(p.plan.Preempt, Preemption{Victim: v.ID, For: j.ID})
	}
}
