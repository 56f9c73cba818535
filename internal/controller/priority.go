package controller

import (
	"context"
	"slices"
	"time"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/priority"
)

// priorityCluster is what multifactor's size and partition factors are
// relative to: the configured nodes, CPUs and partitions.
func priorityCluster(cfg *Config) priority.Cluster {
	var cl priority.Cluster
	for _, n := range cfg.Nodes {
		if !n.Future {
			cl.Nodes++
			cl.CPUs += int(n.CPUs)
		}
	}
	for _, p := range cfg.Partitions {
		cl.MaxPartitionFactor = max(cl.MaxPartitionFactor, p.PriorityJobFactor)
	}
	return cl
}

// priorityLocked is the priority a job shows and is scheduled by: under
// priority/multifactor the weighted factors at now (at its start for a job
// that started, frozen as slurmctld stops recomputing it), unless an
// operator fixed it; otherwise the priority it was given.
func (c *Controller) priorityLocked(j *job.Job, now time.Time) uint32 {
	pc := c.cfg.Priority
	if pc == nil || j.PrioritySet || j.Hold != job.NotHeld {
		return j.Priority
	}
	at := now
	if j.State != job.Pending {
		switch {
		case !j.StartTime.IsZero():
			at = j.StartTime
		case !j.EndTime.IsZero():
			at = j.EndTime
		}
	}
	var factor uint32
	if p := c.parts[j.Req.Partition]; p != nil {
		factor = p.PriorityJobFactor
	}
	f := pc.FactorsOf(j, factor, c.prioCluster, at)
	m := c.st.Acct
	f.FairShare = c.fairShare[jobAssocKey(m, j)]
	if pc.WeightQOS > 0 && j.Req.QOS != "" {
		if q, ok := m.QOS(j.Req.QOS); ok {
			if top := m.MaxQOSPriority(); top > 0 {
				f.QOS = float64(q.Priority) / float64(top)
			}
		}
	}
	if pc.WeightAssoc > 0 {
		if a, ok := m.Resolve(j.Req.UserName, j.Req.Account, j.Req.Partition); ok {
			if top := m.MaxAssocPriority(); top > 0 {
				f.Assoc = float64(m.Effective(a).Priority) / float64(top)
			}
		}
	}
	if len(pc.WeightTRES) > 0 {
		f.TRES = pc.TRESFactors(j.ReqTRES(), c.partTRESLocked(j.Req.Partition))
	}
	return pc.Priority(f)
}

// updateUsage brings fair-share usage up to now, every PriorityCalcPeriod:
// the usage decays by the half-life and grows by the CPU-seconds each job
// ran since the last update (jobs that ended meanwhile included, as long
// as MinJobAge keeps them), or starts again from nothing when
// PriorityUsageResetPeriod says so. The result is a command, so usage
// survives a restart.
func (c *Controller) updateUsage(ctx context.Context) bool {
	pc := c.cfg.Priority
	if pc == nil {
		return false
	}
	now := c.now()
	c.mu.RLock()
	last := c.st.UsageTime
	if !last.IsZero() && now.Sub(last) < pc.CalcPeriod {
		c.mu.RUnlock()
		return false
	}
	usage, lim := priority.Usage{}, priority.Usage{}
	for u, v := range c.st.Usage {
		usage[u] = v
	}
	for u, v := range c.st.LimitUsage {
		lim[u] = v
	}
	// A QOS with NoDecay keeps its usage whole through decay and resets.
	kept := priority.Usage{}
	for _, q := range c.st.Acct.QOSList() {
		if q.HasFlag(assoc.FlagNoDecay) {
			for _, k := range []string{"qos:", "qoscpu:", "qoswall:"} {
				if v, ok := lim[k+q.Name]; ok {
					kept[k+q.Name] = v
				}
			}
		}
	}
	reset := priority.ResetDue(pc.ResetPeriod, last, now) || (pc.ResetPeriod == "NOW" && !c.usageReset)
	if reset {
		usage, lim = priority.Usage{}, priority.Usage{}
	} else {
		usage.Decay(now.Sub(last), pc.DecayHalfLife)
		lim.Decay(now.Sub(last), pc.DecayHalfLife)
	}
	for k, v := range kept {
		lim[k] = v
	}
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if j.Alloc == nil || j.StartTime.IsZero() {
			continue
		}
		from, to := j.StartTime, now
		if !last.IsZero() && from.Before(last) {
			from = last
		}
		if j.State != job.Running && !j.EndTime.IsZero() && j.EndTime.Before(to) {
			to = j.EndTime
		}
		if to.After(from) {
			secs := to.Sub(from).Seconds()
			billed := float64(j.AllocTRES().Count("billing")) * secs * c.usageFactorLocked(j)
			key := jobAssocKey(c.st.Acct, j)
			usage[key] += billed
			cpus := float64(j.Alloc.TotalCPUs()) * secs * c.usageFactorLocked(j)
			lim["wall:"+key] += secs
			lim["cpu:"+key] += cpus
			// The job's QOS and its partition's both count it.
			for _, q := range c.jobQOSLocked(&j.Req) {
				lim["qos:"+q.Name] += billed
				lim["qoscpu:"+q.Name] += cpus
				lim["qoswall:"+q.Name] += secs
			}
		}
	}
	c.mu.RUnlock()
	if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpUsage, Time: now, Usage: &ctlstate.UsageCmd{Usage: usage, Limits: lim}}); err != nil {
		c.logger.Error("update fair-share usage", "err", err)
		return false
	}
	c.mu.Lock()
	c.usageReset = true
	c.fairShareLocked()
	c.mu.Unlock()
	return true
}

// usageFactorLocked is the QOS UsageFactor a job's usage is multiplied
// by (1 without a QOS).
func (c *Controller) usageFactorLocked(j *job.Job) float64 {
	if q, ok := c.st.Acct.QOS(j.Req.QOS); ok && j.Req.QOS != "" {
		return q.UsageFactor
	}
	return 1
}

// fairShareLocked recomputes the fair-share tree from the usage: the
// associations of the accounting model, and users that have usage or jobs
// outside them.
func (c *Controller) fairShareLocked() {
	pc := c.cfg.Priority
	if pc == nil || pc.WeightFairshare == 0 {
		c.fairShare, c.shareRows = nil, nil
		return
	}
	c.shareRows = priority.TreeShares(c.shareAssocsLocked(), c.st.Usage, pc.FairTree)
	c.fairShare = make(map[string]float64, len(c.shareRows))
	for _, r := range c.shareRows {
		if r.User != "" {
			c.fairShare[priority.AssocKey(r.Account, r.User)] = r.FairShare
		}
	}
}

// ShareRows returns the fair-share tree as sshare shows it, and the
// associations' usage (keyed priority.AssocKey).
func (c *Controller) ShareRows() ([]priority.ShareRow, priority.Usage) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	rows := c.shareRows
	if rows == nil {
		fairTree := c.cfg.Priority != nil && c.cfg.Priority.FairTree
		rows = priority.TreeShares(c.shareAssocsLocked(), c.st.Usage, fairTree)
	}
	usage := make(priority.Usage, len(c.st.Usage))
	for k, v := range c.st.Usage {
		usage[k] = v
	}
	return slices.Clone(rows), usage
}

// RunTRES returns the TRES the cluster tracks and, for each user
// association (keyed priority.AssocKey), the
// TRES-seconds their running jobs have left until their time limits end
// (what sshare shows as TRESRunMins); a job without a time limit counts
// none.
func (c *Controller) RunTRES() ([]string, map[string][]uint64) {
	now := c.now()
	c.mu.RLock()
	defer c.mu.RUnlock()
	names := c.cfg.TRES
	out := map[string][]uint64{}
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if j.State != job.Running || j.Alloc == nil || j.Req.TimeLimit == job.Infinite {
			continue
		}
		left := j.StartTime.Add(time.Duration(j.Req.TimeLimit) * time.Minute).Sub(now)
		if left <= 0 {
			continue
		}
		secs := uint64((left + time.Second - 1) / time.Second)
		t := j.AllocTRES()
		key := jobAssocKey(c.st.Acct, j)
		row := out[key]
		if row == nil {
			row = make([]uint64, len(names))
			out[key] = row
		}
		for i, name := range names {
			row[i] += t.Count(name) * secs
		}
	}
	return names, out
}
