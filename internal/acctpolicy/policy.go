// Package acctpolicy holds jobs to their associations' and QOS's limits
// (AccountingStorageEnforce=limits), as Slurm's acct_policy does: whether
// a job may be submitted at all (the submit-count limits), and whether a
// pending job may start now (running-job counts, wall time, TRES), with
// the reason it waits (AssocGrpCpuLimit, QOSMaxJobsPerUserLimit...). It is
// pure: the controller resolves each job's limits from the association
// model and counts what running jobs hold; the scheduler asks and tells
// it of the jobs it starts.
package acctpolicy

import (
	"slices"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
)

// Scope names whose limit it is, for the reasons: "Assoc" or "QOS".
type Scope string

// Scopes.
const (
	ScopeAssoc Scope = "Assoc"
	ScopeQOS   Scope = "QOS"
)

// Counter is a limit on what a group of jobs holds together: the jobs of
// an association and its children, of a QOS, of a user or an account
// under a QOS. Key names the group; the limit applies to the group's
// running jobs (Jobs, TRES).
type Counter struct {
	Key   string
	Scope Scope
	// Kind says which limits these are, for the reasons' names.
	Kind Kind
	Jobs *uint32
	TRES assoc.TRES
	// Mins and RunMins are the group's TRES-minute limits: what its
	// jobs have used (GrpTRESMins), what its running jobs hold until
	// their time limits (GrpTRESRunMins).
	Mins, RunMins assoc.TRES
	// Wall is the group's GrpWall: the minutes its jobs may have run.
	Wall *uint32
}

// Kind is the kind of a group limit.
type Kind int

// Kinds: an association's or QOS's Grp limits; an association's Max
// limits (its own jobs); a QOS's per-user and per-account limits.
const (
	Grp Kind = iota
	Max
	PerUser
	PerAccount
)

// Job is what a job is held to.
type Job struct {
	// Counters are the groups the job counts in while it runs, with
	// their limits (nil limits: counted only).
	Counters []Counter
	// Per-job limits: the time limit (minutes) and TRES at most, the
	// TRES at least, and the TRES on each node at most, each with its
	// scope.
	MaxWall        []ScopedCount
	MaxTRESPerJob  []ScopedTRES
	MinTRESPerJob  []ScopedTRES
	MaxTRESPerNode []ScopedTRES
	// MaxTRESMinsPerJob caps the TRES times the time limit.
	MaxTRESMinsPerJob []ScopedTRES
}

// ScopedCount is a count limit and whose it is.
type ScopedCount struct {
	Scope Scope
	Limit uint32
}

// ScopedTRES is a TRES limit and whose it is.
type ScopedTRES struct {
	Scope Scope
	Limit assoc.TRES
}

// Use is what a group's running jobs hold.
type Use struct {
	Jobs uint32
	TRES map[string]uint64
	// RunMins is the TRES-minutes running jobs hold until their time
	// limits; Mins what the group's jobs have used (from the
	// controller's usage: cpu and billing).
	RunMins map[string]uint64
	Mins    map[string]uint64
	// WallMins is the minutes the group's jobs have run (decayed).
	WallMins uint64
}

// Policy is the limits of the pending jobs and what running jobs hold,
// for one scheduling pass.
type Policy struct {
	Jobs map[job.ID]*Job
	Use  map[string]*Use
	// Safe is AccountingStorageEnforce=safe: a job starts under a
	// GrpTRESMins limit only if it can run to its time limit within it.
	Safe bool
}

// Add counts a running job's TRES in its groups; mins is what is left
// of its time limit.
func (p *Policy) Add(jl *Job, t job.TRES, mins uint64) {
	for _, c := range jl.Counters {
		u := p.use(c.Key)
		u.Jobs++
		for _, name := range tresNames {
			u.TRES[name] += t.Count(name)
			u.RunMins[name] += t.Count(name) * mins
		}
	}
}

// SetUsed records what a group's jobs have used, in TRES-minutes.
func (p *Policy) SetUsed(key, name string, mins uint64) {
	p.use(key).Mins[name] = mins
}

// SetWall records the minutes a group's jobs have run.
func (p *Policy) SetWall(key string, mins uint64) {
	p.use(key).WallMins = mins
}

func (p *Policy) use(key string) *Use {
	if p.Use == nil {
		p.Use = map[string]*Use{}
	}
	u := p.Use[key]
	if u == nil {
		u = &Use{TRES: map[string]uint64{}, RunMins: map[string]uint64{}, Mins: map[string]uint64{}}
		p.Use[key] = u
	}
	return u
}

// Unlimited stands for the minutes of a job without a time limit.
const Unlimited = uint64(1) << 40

// limitMins is a job's time limit in minutes.
func limitMins(j *job.Job) uint64 {
	if j.Req.TimeLimit == job.Infinite {
		return Unlimited
	}
	return uint64(j.Req.TimeLimit)
}

// tresNames are the TRES a job's size is counted in.
var tresNames = []string{"cpu", "mem", "node", "gres/gpu", "billing"}

// Runnable is the reason a pending job may not start now for a limit
// that does not depend on where it would run (the running-job counts,
// its time limit, its size against per-job limits), "" if none: what
// Slurm's acct_policy_job_runnable_pre_select checks.
func (p *Policy) Runnable(j *job.Job) job.Reason {
	if p == nil {
		return ""
	}
	jl := p.Jobs[j.ID]
	if jl == nil {
		return ""
	}
	// QOS limits first, as Slurm checks them.
	for _, scope := range []Scope{ScopeQOS, ScopeAssoc} {
		for _, c := range jl.Counters {
			if c.Scope != scope || c.Jobs == nil {
				continue
			}
			if u := p.Use[c.Key]; *c.Jobs == 0 || (u != nil && u.Jobs >= *c.Jobs) {
				return jobsReason(c)
			}
		}
		for _, w := range jl.MaxWall {
			if w.Scope == scope && (j.Req.TimeLimit == job.Infinite || j.Req.TimeLimit > w.Limit) {
				return job.Reason(string(scope) + "MaxWallDurationPerJobLimit")
			}
		}
		for _, c := range jl.Counters {
			if c.Scope != scope || c.Wall == nil {
				continue
			}
			if u := p.Use[c.Key]; *c.Wall == 0 || (u != nil && u.WallMins >= uint64(*c.Wall)) {
				return job.Reason(string(scope) + "GrpWallLimit")
			}
		}
		if r := p.minutesOver(jl, scope, func(string) uint64 { return 0 }); r != "" {
			return r
		}
	}
	req := j.ReqTRES()
	if r := perJobReason(jl, j, req); r != "" {
		return r
	}
	for _, l := range jl.MinTRESPerJob {
		for name, min := range l.Limit {
			if req.Count(name) < min && counted(name) {
				return minReason(name)
			}
		}
	}
	return ""
}

// Denied is the reason a job could never run alone under its limits, ""
// if none: what a QOS with DenyOnLimit refuses at submission instead of
// holding the job (slurmctld's acct_policy_validate with strict
// checking). Each group limit is taken as a limit on the job alone; the
// job-count limits are not checked.
func Denied(j *job.Job, jl *Job) job.Reason {
	if jl == nil {
		return ""
	}
	req := j.ReqTRES()
	mins := limitMins(j)
	perNode := req
	if nodes := uint64(max(j.Req.MinNodes, 1)); nodes > 1 {
		perNode = job.TRES{CPUs: req.CPUs / uint32(nodes), MemMB: req.MemMB / nodes, Nodes: 1, GPUs: req.GPUs / nodes, Billing: req.Billing / nodes}
	}
	for _, scope := range []Scope{ScopeQOS, ScopeAssoc} {
		for _, w := range jl.MaxWall {
			if w.Scope == scope && mins > uint64(w.Limit) {
				return job.Reason(string(scope) + "MaxWallDurationPerJobLimit")
			}
		}
		for _, c := range jl.Counters {
			if c.Scope != scope {
				continue
			}
			if name, over := exceeds(req, c.TRES); over {
				switch c.Kind {
				case PerUser:
					return tresReason(scope, "Max", name, "PerUser")
				case PerAccount:
					return tresReason(scope, "Max", name, "PerAccount")
				}
				return tresReason(scope, "Grp", name, "")
			}
			for _, name := range slices.Sorted(mapsKeys(c.RunMins)) {
				if counted(name) && req.Count(name)*mins > c.RunMins[name] {
					return minutesReason(scope, name, "Run")
				}
			}
			for _, name := range slices.Sorted(mapsKeys(c.Mins)) {
				if counted(name) && req.Count(name)*mins > c.Mins[name] {
					return minutesReason(scope, name, "")
				}
			}
			if c.Wall != nil && mins > uint64(*c.Wall) {
				return job.Reason(string(scope) + "GrpWallLimit")
			}
		}
		for _, l := range jl.MaxTRESPerJob {
			if name, over := exceeds(req, l.Limit); over && l.Scope == scope {
				return tresReason(scope, "Max", name, "PerJob")
			}
		}
		for _, l := range jl.MaxTRESPerNode {
			if name, over := exceeds(perNode, l.Limit); over && l.Scope == scope {
				return tresReason(scope, "Max", name, "PerNode")
			}
		}
		for _, l := range jl.MaxTRESMinsPerJob {
			if l.Scope != scope {
				continue
			}
			for _, name := range slices.Sorted(mapsKeys(l.Limit)) {
				if counted(name) && req.Count(name)*mins > l.Limit[name] {
					return minutesReason(scope, name, "PerJob")
				}
			}
		}
		for _, l := range jl.MinTRESPerJob {
			if l.Scope != scope {
				continue
			}
			for _, name := range slices.Sorted(mapsKeys(l.Limit)) {
				if counted(name) && req.Count(name) < l.Limit[name] {
					return minReason(name)
				}
			}
		}
	}
	return ""
}

// Fits is the reason a job placed on alloc may not start for a limit on
// what running jobs hold (GrpTRES, MaxTRESPerUser) or on each node's
// share (MaxTRESPerNode), "" if none: Slurm's
// acct_policy_job_runnable_post_select.
func (p *Policy) Fits(j *job.Job, alloc *job.Allocation) job.Reason {
	if p == nil {
		return ""
	}
	jl := p.Jobs[j.ID]
	if jl == nil {
		return ""
	}
	t := allocTRES(alloc)
	// The per-job limits again, on what the job holds (its memory, nodes
	// and billing are known only now).
	if r := perJobReason(jl, j, t); r != "" {
		return r
	}
	for _, scope := range []Scope{ScopeQOS, ScopeAssoc} {
		for _, c := range jl.Counters {
			if c.Scope != scope || len(c.TRES) == 0 {
				continue
			}
			var used map[string]uint64
			if u := p.Use[c.Key]; u != nil {
				used = u.TRES
			}
			for _, name := range slices.Sorted(mapsKeys(c.TRES)) {
				if !counted(name) {
					continue
				}
				if used[name]+t.Count(name) > c.TRES[name] {
					switch c.Kind {
					case PerUser:
						return tresReason(scope, "Max", name, "PerUser")
					case PerAccount:
						return tresReason(scope, "Max", name, "PerAccount")
					}
					return tresReason(scope, "Grp", name, "")
				}
			}
		}
		for _, c := range jl.Counters {
			if c.Scope != scope || len(c.RunMins) == 0 {
				continue
			}
			var held map[string]uint64
			if u := p.Use[c.Key]; u != nil {
				held = u.RunMins
			}
			for _, name := range slices.Sorted(mapsKeys(c.RunMins)) {
				if counted(name) && held[name]+t.Count(name)*limitMins(j) > c.RunMins[name] {
					return minutesReason(scope, name, "Run")
				}
			}
		}
		if p.Safe {
			if r := p.unsafe(jl, scope, t, limitMins(j)); r != "" {
				return r
			}
		}
		for _, l := range jl.MaxTRESPerNode {
			if l.Scope != scope {
				continue
			}
			for _, na := range alloc.Nodes {
				n := job.TRES{CPUs: na.CPUs, MemMB: na.MemMB, Nodes: 1, GPUs: uint64(len(na.GPUs))}
				if name, over := exceeds(n, l.Limit); over {
					return tresReason(scope, "Max", name, "PerNode")
				}
			}
		}
	}
	return ""
}

// perJobReason is the reason a job of size t breaks its MaxTRESPerJob or
// MaxTRESMinsPerJob limits ("" when it does not).
func perJobReason(jl *Job, j *job.Job, t job.TRES) job.Reason {
	for _, l := range jl.MaxTRESPerJob {
		if name, over := exceeds(t, l.Limit); over {
			return tresReason(l.Scope, "Max", name, "PerJob")
		}
	}
	for _, l := range jl.MaxTRESMinsPerJob {
		for _, name := range slices.Sorted(mapsKeys(l.Limit)) {
			if counted(name) && t.Count(name)*limitMins(j) > l.Limit[name] {
				return minutesReason(l.Scope, name, "PerJob")
			}
		}
	}
	return ""
}

// unsafe is the reason a job of size t running mins minutes would take
// its group past a GrpTRESMins limit.
func (p *Policy) unsafe(jl *Job, scope Scope, t job.TRES, mins uint64) job.Reason {
	return p.minutesOver(jl, scope, func(name string) uint64 { return t.Count(name) * mins })
}

// minutesOver is the reason a group of jl in scope has used its
// GrpTRESMins, or with extra TRES-minutes more would go past it. Usage is
// kept for CPUs and billing only.
func (p *Policy) minutesOver(jl *Job, scope Scope, extra func(name string) uint64) job.Reason {
	for _, c := range jl.Counters {
		if c.Scope != scope || len(c.Mins) == 0 {
			continue
		}
		var used map[string]uint64
		if u := p.Use[c.Key]; u != nil {
			used = u.Mins
		}
		for _, name := range slices.Sorted(mapsKeys(c.Mins)) {
			if name != "cpu" && name != "billing" {
				continue
			}
			e := extra(name)
			if (e == 0 && used[name] >= c.Mins[name]) || (e > 0 && used[name]+e > c.Mins[name]) {
				return minutesReason(scope, name, "")
			}
		}
	}
	return ""
}

// TimedOut says which limit a running job that holds t and has run
// ranMins minutes has reached, "" if none: its groups' TRES-minutes
// (GrpTRESMins, from the usage that includes running jobs) and wall
// minutes (GrpWall), its own TRES-minutes (MaxTRESMinsPerJob). Slurm's
// acct_policy_job_time_out ends such a job as timed out.
func (p *Policy) TimedOut(j *job.Job, t job.TRES, ranMins uint64) string {
	if p == nil {
		return ""
	}
	jl := p.Jobs[j.ID]
	if jl == nil {
		return ""
	}
	for _, scope := range []Scope{ScopeQOS, ScopeAssoc} {
		for _, c := range jl.Counters {
			if c.Scope != scope {
				continue
			}
			u := p.Use[c.Key]
			if u == nil {
				u = &Use{}
			}
			for _, name := range slices.Sorted(mapsKeys(c.Mins)) {
				if (name == "cpu" || name == "billing") && u.Mins[name] >= c.Mins[name] {
					return string(scope) + " group max tres(" + name + ") minutes"
				}
			}
			if c.Wall != nil && u.WallMins >= uint64(*c.Wall) {
				return string(scope) + " group wall limit"
			}
		}
		for _, l := range jl.MaxTRESMinsPerJob {
			if l.Scope != scope {
				continue
			}
			for _, name := range slices.Sorted(mapsKeys(l.Limit)) {
				if counted(name) && t.Count(name)*ranMins >= l.Limit[name] && l.Limit[name] > 0 {
					return string(scope) + " max tres(" + name + ") minutes per job"
				}
			}
		}
	}
	return ""
}

// Started counts a job the pass starts, so that the jobs after it see
// what it holds.
func (p *Policy) Started(j *job.Job, alloc *job.Allocation) {
	if p == nil {
		return
	}
	if jl := p.Jobs[j.ID]; jl != nil {
		p.Add(jl, allocTRES(alloc), limitMins(j))
	}
}

func allocTRES(a *job.Allocation) job.TRES {
	t := job.TRES{CPUs: a.TotalCPUs(), Nodes: uint32(len(a.Nodes)), GPUs: uint64(a.TotalGPUs()), Billing: a.Billing}
	for _, na := range a.Nodes {
		t.MemMB += na.MemMB
	}
	return t
}

// exceeds names the first TRES (by name) of t over its limit.
func exceeds(t job.TRES, limit assoc.TRES) (string, bool) {
	for _, name := range slices.Sorted(mapsKeys(limit)) {
		if counted(name) && t.Count(name) > limit[name] {
			return name, true
		}
	}
	return "", false
}

// counted says a TRES is one a job's size is counted in here (a typed
// GPU, gres/gpu:a100, is not yet).
func counted(name string) bool { return slices.Contains(tresNames, name) }

func mapsKeys(t assoc.TRES) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range t {
			if !yield(k) {
				return
			}
		}
	}
}

func jobsReason(c Counter) job.Reason {
	switch c.Kind {
	case PerUser:
		return job.Reason(string(c.Scope) + "MaxJobsPerUserLimit")
	case PerAccount:
		return "MaxJobsPerAccount"
	case Max:
		return job.Reason(string(c.Scope) + "MaxJobsLimit")
	}
	return job.Reason(string(c.Scope) + "GrpJobsLimit")
}

// tresReason is Slurm's reason for a TRES limit: kind Grp or Max, per
// "" (a group), PerJob, PerNode or PerUser.
func tresReason(scope Scope, kind, name, per string) job.Reason {
	s := string(scope)
	if kind == "Grp" {
		switch name {
		case "cpu":
			return job.Reason(s + "GrpCpuLimit")
		case "mem":
			return job.Reason(s + "GrpMemLimit")
		case "node":
			return job.Reason(s + "GrpNodeLimit")
		case "billing":
			return job.Reason(s + "GrpBilling")
		}
		return job.Reason(s + "GrpGRES")
	}
	switch per {
	case "PerJob":
		switch name {
		case "cpu":
			return job.Reason(s + "MaxCpuPerJobLimit")
		case "mem":
			if scope == ScopeQOS {
				return "QOSMaxMemoryPerJob"
			}
			return "AssocMaxMemPerJob"
		case "node":
			return job.Reason(s + "MaxNodePerJobLimit")
		case "billing":
			return job.Reason(s + "MaxBillingPerJob")
		}
		return job.Reason(s + "MaxGRESPerJob")
	case "PerNode":
		switch name {
		case "cpu":
			return job.Reason(s + "MaxCpuPerNode")
		case "mem":
			if scope == ScopeQOS {
				return "QOSMaxMemoryPerNode"
			}
			return "AssocMaxMemPerNode"
		case "billing":
			return job.Reason(s + "MaxBillingPerNode")
		}
		return job.Reason(s + "MaxGRESPerNode")
	}
	if per == "PerAccount" {
		// Slurm names the per-account reasons without the QOS prefix.
		switch name {
		case "cpu":
			return "MaxCpuPerAccount"
		case "mem":
			return "MaxMemoryPerAccount"
		case "node":
			return "MaxNodePerAccount"
		case "billing":
			return "MaxBillingPerAccount"
		}
		return "MaxGRESPerAccount"
	}
	// PerUser (QOS).
	switch name {
	case "cpu":
		return "QOSMaxCpuPerUserLimit"
	case "mem":
		return "QOSMaxMemoryPerUser"
	case "node":
		return "QOSMaxNodePerUserLimit"
	case "billing":
		return "QOSMaxBillingPerUser"
	}
	return "QOSMaxGRESPerUser"
}

func minReason(name string) job.Reason {
	switch name {
	case "cpu":
		return "QOSMinCpuNotSatisfied"
	case "mem":
		return "QOSMinMemory"
	case "node":
		return "QOSMinNode"
	case "billing":
		return "QOSMinBilling"
	}
	return "QOSMinGRES"
}

// minutesReason is Slurm's reason for a TRES-minute limit: kind "" the
// group's usage (GrpTRESMins), "Run" what its running jobs hold
// (GrpTRESRunMins), "PerJob" one job's (MaxTRESMinsPerJob).
func minutesReason(scope Scope, name, kind string) job.Reason {
	s := string(scope)
	tres := map[string]string{"cpu": "CPU", "mem": "Mem", "node": "Node", "billing": "Billing"}[name]
	if tres == "" {
		tres = "GRES"
	}
	if scope == ScopeQOS && name == "mem" {
		tres = "Memory"
	}
	switch kind {
	case "Run":
		if name == "cpu" {
			return job.Reason(s + "GrpCPURunMinutesLimit")
		}
		return job.Reason(s + "Grp" + tres + "RunMinutes")
	case "PerJob":
		if name == "cpu" {
			return job.Reason(s + "MaxCpuMinutesPerJobLimit")
		}
		return job.Reason(s + "Max" + tres + "MinutesPerJob")
	}
	if name == "cpu" {
		return job.Reason(s + "GrpCPUMinutesLimit")
	}
	return job.Reason(s + "Grp" + tres + "Minutes")
}
