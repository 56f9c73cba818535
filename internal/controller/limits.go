package controller

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/acctpolicy"
	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
)

// jobLimitsLocked is what a job is held to: the groups it counts in
// (its association and every one above it, its QOS, its user and
// account under the QOS) with their limits, and its per-job limits, each
// association limit the nearest one up the tree sets. A limit the
// job's QOS sets overrides the associations' of the same kind (for TRES,
// of the same TRES), as Slurm's hierarchy has it. nil when limits are
// not enforced.
func (c *Controller) jobLimitsLocked(j *job.Job) *acctpolicy.Job {
	if !c.cfg.Enforce.Limits {
		return nil
	}
	m := c.st.Acct
	out := &acctpolicy.Job{}
	qosList := c.jobQOSLocked(&j.Req)
	// ql is what the QOS set together: the association limits of the
	// same kind give way to it.
	var ql assoc.Limits
	for _, q := range qosList {
		ql = ql.Over(q.Limits)
	}
	unlessQOS := func(assocLimit, qosLimit *uint32) *uint32 {
		if qosLimit != nil {
			return nil
		}
		return assocLimit
	}
	if a, ok := m.Resolve(j.Req.UserName, j.Req.Account, j.Req.Partition); ok {
		chain := m.Ancestry(a)
		for _, level := range chain {
			l := level.Limits
			out.Counters = append(out.Counters, acctpolicy.Counter{Key: assocKey(level),
				Scope: acctpolicy.ScopeAssoc, Kind: acctpolicy.Grp, Jobs: unlessQOS(l.GrpJobs, ql.GrpJobs),
				TRES: without(l.GrpTRES, ql.GrpTRES), Mins: without(l.GrpTRESMins, ql.GrpTRESMins),
				RunMins: without(l.GrpTRESRunMins, ql.GrpTRESRunMins), Wall: unlessQOS(l.GrpWall, ql.GrpWall)})
		}
		var maxJobs, maxWall *uint32
		perJob, perNode, minsPerJob := assoc.TRES{}, assoc.TRES{}, assoc.TRES{}
		for _, level := range chain {
			maxJobs = firstSet(maxJobs, level.Limits.MaxJobs)
			maxWall = firstSet(maxWall, level.Limits.MaxWall)
			inherit(perJob, level.Limits.MaxTRESPerJob)
			inherit(perNode, level.Limits.MaxTRESPerNode)
			inherit(minsPerJob, level.Limits.MaxTRESMinsPerJob)
		}
		maxJobs, maxWall = unlessQOS(maxJobs, ql.MaxJobs), unlessQOS(maxWall, ql.MaxWall)
		perJob, perNode, minsPerJob = without(perJob, ql.MaxTRESPerJob), without(perNode, ql.MaxTRESPerNode),
			without(minsPerJob, ql.MaxTRESMinsPerJob)
		if len(minsPerJob) > 0 {
			out.MaxTRESMinsPerJob = append(out.MaxTRESMinsPerJob, acctpolicy.ScopedTRES{Scope: acctpolicy.ScopeAssoc, Limit: minsPerJob})
		}
		out.Counters = append(out.Counters, acctpolicy.Counter{Key: "assocmax:" + assocKey(a),
			Scope: acctpolicy.ScopeAssoc, Kind: acctpolicy.Max, Jobs: maxJobs})
		if maxWall != nil {
			out.MaxWall = append(out.MaxWall, acctpolicy.ScopedCount{Scope: acctpolicy.ScopeAssoc, Limit: *maxWall})
		}
		if len(perJob) > 0 {
			out.MaxTRESPerJob = append(out.MaxTRESPerJob, acctpolicy.ScopedTRES{Scope: acctpolicy.ScopeAssoc, Limit: perJob})
		}
		if len(perNode) > 0 {
			out.MaxTRESPerNode = append(out.MaxTRESPerNode, acctpolicy.ScopedTRES{Scope: acctpolicy.ScopeAssoc, Limit: perNode})
		}
	}
	// Each QOS counts the job in its own groups; a limit the first sets
	// is not the second's.
	var above assoc.Limits
	for _, q := range qosList {
		l := q.Limits.Under(above)
		above = above.Over(q.Limits)
		key := "qos:" + q.Name
		out.Counters = append(out.Counters,
			acctpolicy.Counter{Key: key, Scope: acctpolicy.ScopeQOS, Kind: acctpolicy.Grp, Jobs: l.GrpJobs, TRES: l.GrpTRES,
				Mins: l.GrpTRESMins, RunMins: l.GrpTRESRunMins, Wall: l.GrpWall},
			acctpolicy.Counter{Key: key + "/user:" + j.Req.UserName, Scope: acctpolicy.ScopeQOS, Kind: acctpolicy.PerUser, Jobs: l.MaxJobs, TRES: l.MaxTRESPerUser},
			acctpolicy.Counter{Key: key + "/account:" + j.Req.Account, Scope: acctpolicy.ScopeQOS, Kind: acctpolicy.PerAccount, Jobs: l.MaxJobsPerAccount,
				TRES: l.MaxTRESPerAccount})
		if l.MaxWall != nil {
			out.MaxWall = append(out.MaxWall, acctpolicy.ScopedCount{Scope: acctpolicy.ScopeQOS, Limit: *l.MaxWall})
		}
		if len(l.MaxTRESPerJob) > 0 {
			out.MaxTRESPerJob = append(out.MaxTRESPerJob, acctpolicy.ScopedTRES{Scope: acctpolicy.ScopeQOS, Limit: l.MaxTRESPerJob})
		}
		if len(l.MaxTRESMinsPerJob) > 0 {
			out.MaxTRESMinsPerJob = append(out.MaxTRESMinsPerJob, acctpolicy.ScopedTRES{Scope: acctpolicy.ScopeQOS, Limit: l.MaxTRESMinsPerJob})
		}
		if len(l.MinTRESPerJob) > 0 {
			out.MinTRESPerJob = append(out.MinTRESPerJob, acctpolicy.ScopedTRES{Scope: acctpolicy.ScopeQOS, Limit: l.MinTRESPerJob})
		}
		if len(l.MaxTRESPerNode) > 0 {
			out.MaxTRESPerNode = append(out.MaxTRESPerNode, acctpolicy.ScopedTRES{Scope: acctpolicy.ScopeQOS, Limit: l.MaxTRESPerNode})
		}
	}
	return out
}

// jobQOSLocked is the QOS whose limits hold a job, in the order of
// acctpolicy.QOSOrder, under its partition's QOS.
func (c *Controller) jobQOSLocked(r *job.Request) []assoc.QOS {
	partQOS := ""
	if p := c.parts[r.Partition]; p != nil {
		partQOS = p.QOS
	}
	return acctpolicy.QOSOrder(c.st.Acct, r, partQOS)
}

// without is t less the TRES o limits.
func without(t, o assoc.TRES) assoc.TRES {
	if len(o) == 0 || len(t) == 0 {
		return t
	}
	out := assoc.TRES{}
	for n, v := range t {
		if _, ok := o[n]; !ok {
			out[n] = v
		}
	}
	return out
}

func firstSet(have, next *uint32) *uint32 {
	if have != nil {
		return have
	}
	return next
}

// inherit adds to dst the TRES of src it does not have yet: a child's
// limit on a TRES overrides its parent's on that TRES only.
func inherit(dst, src assoc.TRES) {
	for n, v := range src {
		if _, ok := dst[n]; !ok {
			dst[n] = v
		}
	}
}

// policyLocked is the limits of the pending jobs and what running jobs
// hold, for a scheduling pass; nil when no limit is set.
func (c *Controller) policyLocked(pending []*job.Job) *acctpolicy.Policy {
	if !c.cfg.Enforce.Limits || !c.st.Acct.HasLimits() {
		return nil
	}
	p := &acctpolicy.Policy{Jobs: make(map[job.ID]*acctpolicy.Job, len(pending)), Safe: c.cfg.Enforce.Safe}
	limits := c.limitsMemo()
	for _, j := range pending {
		p.Jobs[j.ID] = limits(j)
	}
	now := c.now()
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if j.Alloc != nil && (j.State == job.Running || j.Completing) {
			if jl := limits(j); jl != nil {
				p.Add(jl, j.AllocTRES(), remainingMins(j, now))
			}
		}
	}
	c.usedMinsLocked(p)
	return p
}

// limitsKey is what a job's limits depend on.
type limitsKey struct{ user, account, partition, qos string }

// limitsMemo is jobLimitsLocked for the jobs of one pass: jobs of the
// same user, account, partition and QOS share one answer (a site has
// thousands of those against tens of thousands of jobs).
func (c *Controller) limitsMemo() func(*job.Job) *acctpolicy.Job {
	memo := map[limitsKey]*acctpolicy.Job{}
	return func(j *job.Job) *acctpolicy.Job {
		k := limitsKey{j.Req.UserName, j.Req.Account, j.Req.Partition, j.Req.QOS}
		jl, ok := memo[k]
		if !ok {
			jl = c.jobLimitsLocked(j)
			memo[k] = jl
		}
		return jl
	}
}

// remainingMins is what is left of a running job's time limit, in
// minutes (GrpTRESRunMins counts it).
func remainingMins(j *job.Job, now time.Time) uint64 {
	if j.Req.TimeLimit == job.Infinite || j.EndTime.IsZero() {
		return acctpolicy.Unlimited
	}
	left := j.EndTime.Sub(now)
	if left <= 0 {
		return 0
	}
	return uint64((left + time.Minute - 1) / time.Minute)
}

// usedMinsLocked gives each association and QOS that has a GrpTRESMins
// or GrpWall limit what its jobs have used: the usage (decayed by
// PriorityDecayHalfLife, as Slurm's usage_raw and grp_used_wall) of the
// association and every association below it, or of the QOS, as CPU- and
// billing-minutes and wall minutes.
func (c *Controller) usedMinsLocked(p *acctpolicy.Policy) {
	m := c.st.Acct
	limited := map[uint32]bool{}
	for _, a := range m.Associations() {
		if len(a.Limits.GrpTRESMins) > 0 || a.Limits.GrpWall != nil {
			limited[a.ID] = true
		}
	}
	if len(limited) > 0 {
		billed, cpus, wall := map[uint32]float64{}, map[uint32]float64{}, map[uint32]float64{}
		// Each usage key adds to the limited associations it is under.
		add := func(sums map[uint32]float64, key string, v float64) {
			for _, id := range c.limitedAbove(key, limited) {
				sums[id] += v
			}
		}
		for key, v := range c.st.Usage {
			add(billed, key, v)
		}
		for key, v := range c.st.LimitUsage {
			if k, ok := strings.CutPrefix(key, "wall:"); ok {
				add(wall, k, v)
			} else if k, ok := strings.CutPrefix(key, "cpu:"); ok {
				add(cpus, k, v)
			}
		}
		for _, a := range m.Associations() {
			if limited[a.ID] {
				p.SetUsed(assocKey(a), "cpu", uint64(cpus[a.ID]/60))
				p.SetUsed(assocKey(a), "billing", uint64(billed[a.ID]/60))
				p.SetWall(assocKey(a), uint64(wall[a.ID]/60))
			}
		}
	}
	for _, q := range m.QOSList() {
		if len(q.Limits.GrpTRESMins) == 0 && q.Limits.GrpWall == nil {
			continue
		}
		key := "qos:" + q.Name
		p.SetUsed(key, "cpu", uint64(c.st.LimitUsage["qoscpu:"+q.Name]/60))
		p.SetUsed(key, "billing", uint64(c.st.LimitUsage["qos:"+q.Name]/60))
		p.SetWall(key, uint64(c.st.LimitUsage["qoswall:"+q.Name]/60))
	}
}

// limitedAbove is the associations in limited that the usage key
// ("ACCOUNT/USER") is of or below.
func (c *Controller) limitedAbove(key string, limited map[uint32]bool) []uint32 {
	m := c.st.Acct
	account, user, _ := strings.Cut(key, "/")
	u, ok := m.Resolve(user, account, "")
	if !ok {
		return nil
	}
	var out []uint32
	for _, level := range m.Ancestry(u) {
		if limited[level.ID] {
			out = append(out, level.ID)
		}
	}
	return out
}

// assocKey names an association's group of jobs.
func assocKey(a assoc.Association) string { return "assoc:" + strconv.FormatUint(uint64(a.ID), 10) }

// partQOSLocked is each partition's QOS, for those that have one.
func (c *Controller) partQOSLocked() map[string]string {
	var out map[string]string
	for name, p := range c.parts {
		if p.QOS != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[name] = p.QOS
		}
	}
	return out
}

// maxWallLocked is the MaxWall a job without a time limit gets: its QOS's,
// else the nearest association's up the tree (0: none, or limits not
// enforced).
func (c *Controller) maxWallLocked(r *job.Request) uint32 {
	if !c.cfg.Enforce.Limits {
		return 0
	}
	m := c.st.Acct
	for _, q := range c.jobQOSLocked(r) {
		if q.Limits.MaxWall != nil {
			return *q.Limits.MaxWall
		}
	}
	if a, ok := m.Resolve(r.UserName, r.Account, r.Partition); ok {
		for _, level := range m.Ancestry(a) {
			if level.Limits.MaxWall != nil {
				return *level.Limits.MaxWall
			}
		}
	}
	return 0
}

// limitTimeoutsLocked is the running jobs that reached a limit on what
// they may use (their groups' GrpTRESMins or GrpWall, their own
// MaxTRESMinsPerJob), with the limit: slurmctld ends them as timed out.
func (c *Controller) limitTimeoutsLocked(now time.Time) map[job.ID]string {
	if !c.cfg.Enforce.Limits || !c.hasUsageLimitsLocked() {
		return nil
	}
	p := &acctpolicy.Policy{Jobs: map[job.ID]*acctpolicy.Job{}}
	c.usedMinsLocked(p)
	var out map[job.ID]string
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if j.State != job.Running || j.Alloc == nil || j.StartTime.IsZero() {
			continue
		}
		jl := c.jobLimitsLocked(j)
		if jl == nil {
			continue
		}
		p.Jobs[id] = jl
		ran := uint64(max(now.Sub(j.StartTime), 0) / time.Minute)
		if what := p.TimedOut(j, j.AllocTRES(), ran); what != "" {
			if out == nil {
				out = map[job.ID]string{}
			}
			out[id] = what
		}
	}
	return out
}

// hasUsageLimitsLocked says some association or QOS limits what its jobs
// may use over time (GrpTRESMins, GrpWall, MaxTRESMinsPerJob).
func (c *Controller) hasUsageLimitsLocked() bool {
	m := c.st.Acct
	for _, a := range m.Associations() {
		if len(a.Limits.GrpTRESMins) > 0 || a.Limits.GrpWall != nil || len(a.Limits.MaxTRESMinsPerJob) > 0 {
			return true
		}
	}
	for _, q := range m.QOSList() {
		if len(q.Limits.GrpTRESMins) > 0 || q.Limits.GrpWall != nil || len(q.Limits.MaxTRESMinsPerJob) > 0 {
			return true
		}
	}
	return false
}

// denyOnLimitLocked refuses a job whose QOS has DenyOnLimit and that
// breaks a limit of the QOS or its association as a job alone, with the
// limit's reason, as slurmctld refuses it with ESLURM_ACCOUNTING_POLICY.
func (c *Controller) denyOnLimitLocked(r *job.Request) error {
	if !slices.ContainsFunc(c.jobQOSLocked(r), func(q assoc.QOS) bool { return q.HasFlag(assoc.FlagDenyOnLimit) }) {
		return nil
	}
	j := &job.Job{Req: *r}
	if reason := acctpolicy.Denied(j, c.jobLimitsLocked(j)); reason != "" {
		return slurmerr.New(slurmerr.AccountingPolicy, "%s", reason)
	}
	return nil
}
