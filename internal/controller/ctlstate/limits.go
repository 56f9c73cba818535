package ctlstate

import (
	"cmp"
	"strconv"

	"github.com/droverhq/drover/internal/acctpolicy"
	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
)

// SubmitLimitErr refuses a job that its association or QOS may not take
// more of (GrpSubmitJobs, MaxSubmitJobs, MaxSubmitJobsPerUser,
// MaxSubmitJobsPerAccount: pending and running jobs together), as
// slurmctld refuses it with ESLURM_ACCOUNTING_POLICY. An array counts
// each of its tasks. It runs as the submission is applied, so that
// concurrent submissions are counted one after the other; the command
// says whether limits were enforced when it was made, so that replaying
// the log decides the same.
func (s *State) SubmitLimitErr(r *job.Request, partQOS map[string]string) error {
	m := s.Acct
	if m == nil || !m.HasLimits() {
		return nil
	}
	type limit struct {
		key    string
		max    uint32
		reason string
	}
	var limits []limit
	add := func(key string, n *uint32, reason string) {
		if n != nil {
			limits = append(limits, limit{key, *n, reason})
		}
	}
	// The QOS's first, in the order slurmctld checks them, for the
	// reason it names; then the association's a QOS limit does not
	// override.
	var ql assoc.Limits
	for _, q := range acctpolicy.QOSOrder(m, r, partQOS[r.Partition]) {
		l := q.Limits.Under(ql)
		ql = ql.Over(q.Limits)
		key := "qos:" + q.Name
		add(key, l.GrpSubmitJobs, "QOSGrpSubmitJobsLimit")
		add(key+"/user:"+r.UserName, l.MaxSubmitJobs, "QOSMaxSubmitJobPerUserLimit")
		add(key+"/account:"+r.Account, l.MaxSubmitJobsPerAccount, "MaxSubmitJobsPerAccount")
	}
	if a, ok := m.Resolve(r.UserName, r.Account, r.Partition); ok {
		var maxSubmit *uint32
		for _, level := range m.Ancestry(a) {
			if ql.GrpSubmitJobs == nil {
				add(assocKey(level), level.Limits.GrpSubmitJobs, "AssocGrpSubmitJobsLimit")
			}
			maxSubmit = cmp.Or(maxSubmit, level.Limits.MaxSubmitJobs)
		}
		if ql.MaxSubmitJobs == nil {
			add("assocmax:"+assocKey(a), maxSubmit, "AssocMaxSubmitJobLimit")
		}
	}
	if len(limits) == 0 {
		return nil
	}
	count := map[string]uint32{}
	for _, l := range limits {
		count[l.key] = 0
	}
	s.limitCounts(count, partQOS)
	tasks := uint32(max(len(r.Array.Tasks), 1))
	for _, l := range limits {
		if count[l.key]+tasks > l.max {
			return slurmerr.New(slurmerr.AccountingPolicy, "%s", l.reason)
		}
	}
	return nil
}

// submitKeys are the groups a job counts in for the submit limits; its
// partition has QOS partQOS.
func submitKeys(m *assoc.Model, r *job.Request, partQOS string) []string {
	var out []string
	if a, ok := m.Resolve(r.UserName, r.Account, r.Partition); ok {
		for _, level := range m.Ancestry(a) {
			out = append(out, assocKey(level))
		}
		out = append(out, "assocmax:"+assocKey(a))
	}
	qos := []string{r.QOS}
	if partQOS != r.QOS {
		qos = append(qos, partQOS)
	}
	for _, q := range qos {
		if q != "" {
			out = append(out, "qos:"+q, "qos:"+q+"/user:"+r.UserName, "qos:"+q+"/account:"+r.Account)
		}
	}
	return out
}

// assocKey names an association's group of jobs.
func assocKey(a assoc.Association) string { return "assoc:" + strconv.FormatUint(uint64(a.ID), 10) }
