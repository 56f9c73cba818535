package controller

import (
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
	var ql assoc.Limits
	if q, ok := m.QOS(j.Req.QOS); ok && j.Req.QOS != "" {
		ql = q.Limits
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
	if q, ok := m.QOS(j.Req.QOS); ok && j.Req.QOS != "" {
		l := q.Limits
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
	for _, j := range pending {
		p.Jobs[j.ID] = c.jobLimitsLocked(j)
	}
	now := c.now()
	for _, id := range c.st.order {
		j := c.st.Jobs[id]
		if j.Alloc != nil && (j.State == job.Running || j.Completing) {
			if jl := c.jobLimitsLocked(j); jl != nil {
				p.Add(jl, j.AllocTRES(), remainingMins(j, now))
			}
		}
	}
	c.usedMinsLocked(p)
	return p
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
	for _, a := range m.Associations() {
		if len(a.Limits.GrpTRESMins) == 0 && a.Limits.GrpWall == nil {
			continue
		}
		var billed, cpus, wall float64
		for key, v := range c.st.Usage {
			if c.assocUnder(key, a) {
				billed += v
			}
		}
		for key, v := range c.st.LimitUsage {
			if k, ok := strings.CutPrefix(key, "wall:"); ok && c.assocUnder(k, a) {
				wall += v
			}
			if k, ok := strings.CutPrefix(key, "cpu:"); ok && c.assocUnder(k, a) {
				cpus += v
			}
		}
		p.SetUsed(assocKey(a), "cpu", uint64(cpus/60))
		p.SetUsed(assocKey(a), "billing", uint64(billed/60))
		p.SetWall(assocKey(a), uint64(wall/60))
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

// assocUnder says the usage key ("ACCOUNT/USER") is of association a or
// one below it.
func (c *Controller) assocUnder(key string, a assoc.Association) bool {
	m := c.st.Acct
	account, user, _ := strings.Cut(key, "/")
	u, ok := m.Resolve(user, account, "")
	if !ok {
		return false
	}
	for _, level := range m.Ancestry(u) {
		if level.ID == a.ID {
			return true
		}
	}
	return false
}

// submitLimitErr refuses a job that its association or QOS may not take
// more of (GrpSubmitJobs, MaxSubmitJobs, MaxSubmitJobsPerUser,
// MaxSubmitJobsPerAccount: pending and running jobs together), as
// slurmctld refuses it with ESLURM_ACCOUNTING_POLICY. An array counts
// each of its tasks. It runs as the submission is applied, so that
// concurrent submissions are counted one after the other; the command
// says whether limits were enforced when it was made, so that replaying
// the log decides the same.
func (s *fsm) submitLimitErr(r *job.Request) error {
	m := s.Acct
	if m == nil || !m.HasLimits() {
		return nil
	}
	type limit struct {
		key string
		max uint32
	}
	var limits []limit
	var ql assoc.Limits
	if q, ok := m.QOS(r.QOS); ok && r.QOS != "" {
		ql = q.Limits
	}
	if a, ok := m.Resolve(r.UserName, r.Account, r.Partition); ok {
		var maxSubmit *uint32
		for _, level := range m.Ancestry(a) {
			if level.Limits.GrpSubmitJobs != nil && ql.GrpSubmitJobs == nil {
				limits = append(limits, limit{assocKey(level), *level.Limits.GrpSubmitJobs})
			}
			maxSubmit = firstSet(maxSubmit, level.Limits.MaxSubmitJobs)
		}
		if maxSubmit != nil && ql.MaxSubmitJobs == nil {
			limits = append(limits, limit{"assocmax:" + assocKey(a), *maxSubmit})
		}
	}
	if q, ok := m.QOS(r.QOS); ok && r.QOS != "" {
		key := "qos:" + q.Name
		for k, v := range map[string]*uint32{key: q.Limits.GrpSubmitJobs, key + "/user:" + r.UserName: q.Limits.MaxSubmitJobs,
			key + "/account:" + r.Account: q.Limits.MaxSubmitJobsPerAccount} {
			if v != nil {
				limits = append(limits, limit{k, *v})
			}
		}
	}
	if len(limits) == 0 {
		return nil
	}
	count := map[string]uint32{}
	for _, l := range limits {
		count[l.key] = 0
	}
	for _, id := range s.order {
		x := s.Jobs[id]
		if x.State.Terminal() {
			continue
		}
		n := uint32(1)
		if x.IsArrayMeta() {
			n = uint32(len(x.PendingTasks))
		}
		for _, k := range submitKeys(m, &x.Req) {
			if _, ok := count[k]; ok {
				count[k] += n
			}
		}
	}
	tasks := uint32(max(len(r.Array.Tasks), 1))
	for _, l := range limits {
		if count[l.key]+tasks > l.max {
			return slurmerr.New(slurmerr.AccountingPolicy, "")
		}
	}
	return nil
}

// assocKey names an association's group of jobs.
func assocKey(a assoc.Association) string { return "assoc:" + strconv.FormatUint(uint64(a.ID), 10) }

// submitKeys are the groups a job counts in for the submit limits.
func submitKeys(m *assoc.Model, r *job.Request) []string {
	var out []string
	if a, ok := m.Resolve(r.UserName, r.Account, r.Partition); ok {
		for _, level := range m.Ancestry(a) {
			out = append(out, assocKey(level))
		}
		out = append(out, "assocmax:"+assocKey(a))
	}
	if r.QOS != "" {
		out = append(out, "qos:"+r.QOS, "qos:"+r.QOS+"/user:"+r.UserName, "qos:"+r.QOS+"/account:"+r.Account)
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
	if q, ok := m.QOS(r.QOS); ok && r.QOS != "" && q.Limits.MaxWall != nil {
		return *q.Limits.MaxWall
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
	for _, id := range c.st.order {
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
