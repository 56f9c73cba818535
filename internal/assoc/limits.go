package assoc

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Limits are an association's or a QOS's limits, sacctmgr's Grp*, Max*
// and Min* options, enforced under AccountingStorageEnforce=limits. A nil
// count, and a TRES absent from a list, is no limit.
//
// On an association, Grp* count the jobs of the association and of every
// association below it, and the Max* of the nearest association up the
// tree that sets one apply (Slurm's inheritance). On a QOS, Grp* count
// the QOS's jobs, MaxJobs and MaxSubmitJobs are per user
// (MaxJobsPerUser, MaxSubmitJobsPerUser) and the PerAccount ones per
// account.
type Limits struct {
	GrpJobs                 *uint32 `json:"grp_jobs,omitempty"`
	GrpSubmitJobs           *uint32 `json:"grp_submit_jobs,omitempty"`
	MaxJobs                 *uint32 `json:"max_jobs,omitempty"`
	MaxSubmitJobs           *uint32 `json:"max_submit_jobs,omitempty"`
	MaxJobsPerAccount       *uint32 `json:"max_jobs_per_account,omitempty"`
	MaxSubmitJobsPerAccount *uint32 `json:"max_submit_jobs_per_account,omitempty"`
	// MaxWall is each job's time limit at most, in minutes; GrpWall the
	// wall time (minutes, decayed as usage is) the group's jobs may have
	// run together.
	MaxWall *uint32 `json:"max_wall,omitempty"`
	GrpWall *uint32 `json:"grp_wall,omitempty"`
	// TRES limits: what running jobs hold together (GrpTRES), one job
	// (MaxTRESPerJob, MinTRESPerJob), one node of a job (MaxTRESPerNode),
	// one user's running jobs (MaxTRESPerUser, QOS only).
	GrpTRES        TRES `json:"grp_tres,omitempty"`
	MaxTRESPerJob  TRES `json:"max_tres_per_job,omitempty"`
	MaxTRESPerNode TRES `json:"max_tres_per_node,omitempty"`
	MaxTRESPerUser TRES `json:"max_tres_per_user,omitempty"`
	// MaxTRESPerAccount is one account's running jobs' (QOS only).
	MaxTRESPerAccount TRES `json:"max_tres_per_account,omitempty"`
	MinTRESPerJob     TRES `json:"min_tres_per_job,omitempty"`
	// TRES-minute limits: what jobs may have used (GrpTRESMins, against
	// the decayed usage), what running jobs hold until their time limits
	// (GrpTRESRunMins), what one job may use in its time limit
	// (MaxTRESMinsPerJob).
	GrpTRESMins       TRES `json:"grp_tres_mins,omitempty"`
	GrpTRESRunMins    TRES `json:"grp_tres_run_mins,omitempty"`
	MaxTRESMinsPerJob TRES `json:"max_tres_mins_per_job,omitempty"`
}

// IsZero says no limit is set.
func (l Limits) IsZero() bool {
	return l.GrpJobs == nil && l.GrpSubmitJobs == nil && l.MaxJobs == nil && l.MaxSubmitJobs == nil &&
		l.MaxJobsPerAccount == nil && l.MaxSubmitJobsPerAccount == nil && l.MaxWall == nil && l.GrpWall == nil &&
		len(l.GrpTRES) == 0 && len(l.MaxTRESPerJob) == 0 && len(l.MaxTRESPerNode) == 0 &&
		len(l.MaxTRESPerUser) == 0 && len(l.MinTRESPerJob) == 0 && len(l.MaxTRESPerAccount) == 0 &&
		len(l.GrpTRESMins) == 0 && len(l.GrpTRESRunMins) == 0 && len(l.MaxTRESMinsPerJob) == 0
}

// Clone copies the limits.
func (l Limits) Clone() Limits {
	c := l
	for _, p := range []*TRES{&c.GrpTRES, &c.MaxTRESPerJob, &c.MaxTRESPerNode, &c.MaxTRESPerUser, &c.MinTRESPerJob, &c.MaxTRESPerAccount,
		&c.GrpTRESMins, &c.GrpTRESRunMins, &c.MaxTRESMinsPerJob} {
		*p = maps.Clone(*p)
	}
	return c
}

// fields lists the limits' members, counts and TRES lists, for the
// functions that take them one by one.
func (l *Limits) fields() ([]**uint32, []*TRES) {
	return []**uint32{&l.GrpJobs, &l.GrpSubmitJobs, &l.MaxJobs, &l.MaxSubmitJobs, &l.MaxJobsPerAccount,
			&l.MaxSubmitJobsPerAccount, &l.MaxWall, &l.GrpWall},
		[]*TRES{&l.GrpTRES, &l.MaxTRESPerJob, &l.MaxTRESPerNode, &l.MaxTRESPerUser, &l.MaxTRESPerAccount,
			&l.MinTRESPerJob, &l.GrpTRESMins, &l.GrpTRESRunMins, &l.MaxTRESMinsPerJob}
}

// Under is l less what hi sets (a count, or a TRES of a list): the limits
// of a QOS that another QOS overrides, as a partition's QOS overrides the
// job's (or, with OverPartQOS, the job's the partition's).
func (l Limits) Under(hi Limits) Limits {
	out := l.Clone()
	counts, lists := out.fields()
	hiCounts, hiLists := hi.fields()
	for i, c := range counts {
		if *hiCounts[i] != nil {
			*c = nil
		}
	}
	for i, t := range lists {
		for name := range *hiLists[i] {
			delete(*t, name)
		}
		if len(*t) == 0 {
			*t = nil
		}
	}
	return out
}

// Over is l with what it leaves unset taken from lo.
func (l Limits) Over(lo Limits) Limits {
	out := l.Clone()
	counts, lists := out.fields()
	rest := lo.Under(l)
	loCounts, loLists := rest.fields()
	for i, c := range counts {
		if *c == nil {
			*c = *loCounts[i]
		}
	}
	for i, t := range lists {
		for name, v := range *loLists[i] {
			if *t == nil {
				*t = TRES{}
			}
			(*t)[name] = v
		}
	}
	return out
}

// Count makes a count limit.
func Count(n uint32) *uint32 { return &n }

// TRES are trackable resources and a count of each, by Slurm's names:
// "cpu", "mem" (MB), "node", "billing", "gres/gpu", "gres/gpu:a100".
type TRES map[string]uint64

// ParseTRES reads sacctmgr's TRES list ("cpu=4,mem=10G,gres/gpu=2"):
// memory takes K, M (the default), G, T or P; a count of -1 removes that
// TRES's limit, which the result marks with the value Unset.
func ParseTRES(s string) (TRES, error) {
	out := TRES{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, v, ok := strings.Cut(item, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok || name == "" {
			return nil, fmt.Errorf("Invalid TRES %q", item)
		}
		if !knownTRES(name) {
			return nil, fmt.Errorf("Invalid TRES %q", name)
		}
		v = strings.TrimSpace(v)
		if v == "-1" {
			out[name] = Unset
			continue
		}
		mult := uint64(1)
		if name == "mem" && v != "" {
			switch strings.ToUpper(v[len(v)-1:]) {
			case "K":
				mult, v = 0, v[:len(v)-1] // rounded up to a megabyte below
			case "M":
				v = v[:len(v)-1]
			case "G":
				mult, v = 1<<10, v[:len(v)-1]
			case "T":
				mult, v = 1<<20, v[:len(v)-1]
			case "P":
				mult, v = 1<<30, v[:len(v)-1]
			}
		}
		n, err := strconv.ParseUint(v, 10, 63)
		if err != nil {
			return nil, fmt.Errorf("Invalid TRES count %q", item)
		}
		if mult == 0 {
			n, mult = (n+1023)/1024, 1
		}
		out[name] = n * mult
	}
	return out, nil
}

// Unset marks a TRES whose limit a change removes.
const Unset = ^uint64(0)

func knownTRES(name string) bool {
	switch name {
	case "cpu", "mem", "node", "billing", "energy":
		return true
	}
	return strings.HasPrefix(name, "gres/") && len(name) > len("gres/")
}

// String writes the list as sacctmgr shows it, sorted by name, memory in
// the largest unit it divides exactly ("cpu=4,gres/gpu=2,mem=10G").
func (t TRES) String() string {
	names := slices.Sorted(maps.Keys(t))
	parts := make([]string, 0, len(names))
	for _, n := range names {
		v := t[n]
		s := strconv.FormatUint(v, 10)
		if n == "mem" {
			s = memString(v)
		}
		parts = append(parts, n+"="+s)
	}
	return strings.Join(parts, ",")
}

func memString(mb uint64) string {
	units := "MGTP"
	i := 0
	for mb >= 1024 && mb%1024 == 0 && i < len(units)-1 {
		mb /= 1024
		i++
	}
	return strconv.FormatUint(mb, 10) + units[i:i+1]
}

// Merge applies a change to a list: Unset removes a TRES.
func (t TRES) Merge(change TRES) TRES {
	out := maps.Clone(t)
	if out == nil {
		out = TRES{}
	}
	for n, v := range change {
		if v == Unset {
			delete(out, n)
			continue
		}
		out[n] = v
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Ancestry is an association and the account associations above it, up
// to root: the chain its limits come from.
func (m *Model) Ancestry(a Association) []Association {
	out := []Association{a}
	for range 64 {
		p, ok := m.parent(a)
		if !ok {
			break
		}
		out = append(out, p)
		a = p
	}
	return out
}

// HasLimits says some association or QOS sets a limit.
func (m *Model) HasLimits() bool {
	for _, a := range m.assocs {
		if !a.Limits.IsZero() {
			return true
		}
	}
	for _, q := range m.qos {
		if !q.Limits.IsZero() {
			return true
		}
	}
	return false
}
