package sacctmgr

import (
	"strconv"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/timefmt"
)

// The limits sacctmgr sets and shows on associations and QOS
// (sacctmgr_set_assoc_rec's and sacctmgr_set_qos_rec's Grp*, Max* and
// Min* options). The accrue, per-user and per-account run-minute and
// priority-threshold limits are not kept yet: setting one is refused.

// limitKind is what an option sets.
type limitKind struct {
	count func(l *assoc.Limits) **uint32
	tres  func(l *assoc.Limits) *assoc.TRES
	// one is the TRES an old single-TRES option sets (GrpCPUs: cpu).
	one  string
	wall bool
	// usage says the limit is on usage, which is kept for cpu and
	// billing only.
	usage bool
}

var (
	grpJobs     = limitKind{count: func(l *assoc.Limits) **uint32 { return &l.GrpJobs }}
	grpSubmit   = limitKind{count: func(l *assoc.Limits) **uint32 { return &l.GrpSubmitJobs }}
	maxJobs     = limitKind{count: func(l *assoc.Limits) **uint32 { return &l.MaxJobs }}
	maxSubmit   = limitKind{count: func(l *assoc.Limits) **uint32 { return &l.MaxSubmitJobs }}
	maxJobsPA   = limitKind{count: func(l *assoc.Limits) **uint32 { return &l.MaxJobsPerAccount }}
	maxSubmitPA = limitKind{count: func(l *assoc.Limits) **uint32 { return &l.MaxSubmitJobsPerAccount }}
	maxWall     = limitKind{count: func(l *assoc.Limits) **uint32 { return &l.MaxWall }, wall: true}
	grpWall     = limitKind{count: func(l *assoc.Limits) **uint32 { return &l.GrpWall }, wall: true}
	grpTRES     = limitKind{tres: func(l *assoc.Limits) *assoc.TRES { return &l.GrpTRES }}
	maxTRESPJ   = limitKind{tres: func(l *assoc.Limits) *assoc.TRES { return &l.MaxTRESPerJob }}
	maxTRESPN   = limitKind{tres: func(l *assoc.Limits) *assoc.TRES { return &l.MaxTRESPerNode }}
	maxTRESPU   = limitKind{tres: func(l *assoc.Limits) *assoc.TRES { return &l.MaxTRESPerUser }}
	maxTRESPA   = limitKind{tres: func(l *assoc.Limits) *assoc.TRES { return &l.MaxTRESPerAccount }}
	minTRES     = limitKind{tres: func(l *assoc.Limits) *assoc.TRES { return &l.MinTRESPerJob }}
	grpMins     = limitKind{tres: func(l *assoc.Limits) *assoc.TRES { return &l.GrpTRESMins }, usage: true}
	grpRunMins  = limitKind{tres: func(l *assoc.Limits) *assoc.TRES { return &l.GrpTRESRunMins }}
	maxMinsPJ   = limitKind{tres: func(l *assoc.Limits) *assoc.TRES { return &l.MaxTRESMinsPerJob }}
)

func single(k limitKind, tres string) limitKind { k.one = tres; return k }

// assocLimitOptions are the association options that set a limit.
var assocLimitOptions = map[string]limitKind{
	"GrpCpus": single(grpTRES, "cpu"), "GrpJobs": grpJobs, "GrpMemory": single(grpTRES, "mem"),
	"GrpNodes": single(grpTRES, "node"), "GrpSubmitJobs": grpSubmit, "GrpTRES": grpTRES,
	"MaxCpusPerJob": single(maxTRESPJ, "cpu"), "MaxJobs": maxJobs, "MaxNodesPerJob": single(maxTRESPJ, "node"),
	"MaxSubmitJobs": maxSubmit, "MaxTRES": maxTRESPJ, "MaxTRESPJ": maxTRESPJ, "MaxTRESPerJob": maxTRESPJ,
	"MaxTRESPerNode": maxTRESPN, "MaxTRESPN": maxTRESPN, "MaxWallDurationPerJob": maxWall,
	"GrpCPUMins": single(grpMins, "cpu"), "GrpCPURunMins": single(grpRunMins, "cpu"), "GrpTRESMins": grpMins,
	"GrpTRESRunMins": grpRunMins, "MaxCPUMinsPerJob": single(maxMinsPJ, "cpu"), "MaxTRESMinsPerJob": maxMinsPJ,
	"MaxTRESMinsPJ": maxMinsPJ, "GrpWall": grpWall,
}

// qosLimitOptions are the QOS options that set a limit.
var qosLimitOptions = map[string]limitKind{
	"GrpCPUs": single(grpTRES, "cpu"), "GrpJobs": grpJobs, "GrpMemory": single(grpTRES, "mem"),
	"GrpNodes": single(grpTRES, "node"), "GrpSubmitJobs": grpSubmit, "GrpTRES": grpTRES,
	"MaxCPUsPerJob": single(maxTRESPJ, "cpu"), "MaxCPUsPerUser": single(maxTRESPU, "cpu"), "MaxCPUsPU": single(maxTRESPU, "cpu"),
	"MaxJobsPerAccount": maxJobsPA, "MaxJobsPA": maxJobsPA, "MaxJobsPerUser": maxJobs, "MaxJobsPU": maxJobs,
	"MaxNodesPerJob": single(maxTRESPJ, "node"), "MaxNodesPerUser": single(maxTRESPU, "node"), "MaxNodesPU": single(maxTRESPU, "node"),
	"MaxSubmitJobsPerAccount": maxSubmitPA, "MaxSubmitJobsPA": maxSubmitPA, "MaxSubmitJobsPerUser": maxSubmit,
	"MaxSubmitJobsPU": maxSubmit, "MaxTRES": maxTRESPJ, "MaxTRESPJ": maxTRESPJ, "MaxTRESPerJob": maxTRESPJ,
	"MaxTRESPerNode": maxTRESPN, "MaxTRESPN": maxTRESPN, "MaxTRESPerUser": maxTRESPU, "MaxTRESPU": maxTRESPU,
	"MaxWallDurationPerJob": maxWall, "MinCPUsPerJob": single(minTRES, "cpu"), "MinTRESPerJob": minTRES,
	"GrpCPUMins": single(grpMins, "cpu"), "GrpTRESMins": grpMins, "GrpWall": grpWall,
	"MaxTRESPerAccount": maxTRESPA, "MaxTRESPA": maxTRESPA,
	"GrpCPURunMins": single(grpRunMins, "cpu"), "GrpTRESRunMins": grpRunMins,
	"MaxCPUMinsPerJob": single(maxMinsPJ, "cpu"), "MaxTRESMinsPerJob": maxMinsPJ, "MaxTRESMinsPJ": maxMinsPJ,
}

// limitChange is the limits an option line sets: counts (nil inside:
// cleared) and TRES changes (assoc.Unset removes one).
type limitChange struct {
	sets []func(l *assoc.Limits)
}

func (ch *limitChange) any() bool { return len(ch.sets) > 0 }

// apply gives l what the change sets.
func (ch *limitChange) apply(l *assoc.Limits) {
	for _, f := range ch.sets {
		f(l)
	}
}

// setLimit reads an option's value for a limit kind into ch, as
// sacctmgr's get_uint, get_uint64 and TRES parsers do: -1 clears.
func (c *cmd) setLimit(ch *limitChange, k limitKind, o option) bool {
	v := stripQuotes(o.value, true)
	switch {
	case k.count != nil:
		if v == "-1" {
			ch.sets = append(ch.sets, func(l *assoc.Limits) { *k.count(l) = nil })
			return true
		}
		var n uint64
		var err error
		if k.wall {
			var lim timefmt.Limit
			lim, err = timefmt.ParseLimit(v)
			if err == nil && lim.Infinite {
				ch.sets = append(ch.sets, func(l *assoc.Limits) { *k.count(l) = nil })
				return true
			}
			n = uint64(lim.Minutes)
		} else {
			n, err = strconv.ParseUint(v, 10, 32)
		}
		if err != nil {
			c.fail()
			c.errf(" Bad %s value '%s'\n", o.word, v)
			return false
		}
		ch.sets = append(ch.sets, func(l *assoc.Limits) { *k.count(l) = assoc.Count(uint32(n)) })
		return true
	case k.one != "":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < -1 {
			c.fail()
			c.errf(" Bad %s value '%s'\n", o.word, v)
			return false
		}
		change := assoc.TRES{k.one: uint64(n)}
		if n == -1 {
			change[k.one] = assoc.Unset
		}
		ch.sets = append(ch.sets, func(l *assoc.Limits) { *k.tres(l) = k.tres(l).Merge(change) })
		return true
	}
	change, err := assoc.ParseTRES(v)
	if err != nil {
		c.fail()
		c.errf(" %v\n", err)
		return false
	}
	if k.usage {
		for name := range change {
			if name != "cpu" && name != "billing" {
				c.fail()
				c.slurmError("%s: only cpu and billing usage is kept by Drover's accounting", o.word)
				return false
			}
		}
	}
	ch.sets = append(ch.sets, func(l *assoc.Limits) { *k.tres(l) = k.tres(l).Merge(change) })
	return true
}

// limitOption finds the limit an option names in table, matching
// sacctmgr's abbreviations (the options' own shortest prefixes).
func limitOption(table map[string]limitKind, options []struct {
	name string
	min  int
	kind string
}, o option) (limitKind, bool) {
	for _, opt := range options {
		if o.is(opt.name, opt.min) {
			k, ok := table[opt.name]
			return k, ok
		}
	}
	return limitKind{}, false
}

// limitCell is a limit column's value (sacctmgr's print of the record's
// limit), by the column's title.
func limitCell(l assoc.Limits, f field) cell {
	count := func(p *uint32) cell {
		if p == nil {
			return unset()
		}
		return num(uint64(*p))
	}
	tres := func(t assoc.TRES) cell { return cell{s: t.String()} }
	one := func(t assoc.TRES, name string) cell {
		if v, ok := t[name]; ok {
			return num(v)
		}
		return unset()
	}
	switch f.name {
	case "GrpJobs":
		return count(l.GrpJobs)
	case "GrpSubmit":
		return count(l.GrpSubmitJobs)
	case "MaxJobs", "MaxJobsPU":
		return count(l.MaxJobs)
	case "MaxSubmit", "MaxSubmitPU":
		return count(l.MaxSubmitJobs)
	case "MaxJobsPA":
		return count(l.MaxJobsPerAccount)
	case "MaxSubmitPA":
		return count(l.MaxSubmitJobsPerAccount)
	case "MaxWall":
		return count(l.MaxWall)
	case "GrpWall":
		return count(l.GrpWall)
	case "GrpTRES":
		return tres(l.GrpTRES)
	case "MaxTRES":
		return tres(l.MaxTRESPerJob)
	case "MaxTRESPerNode":
		return tres(l.MaxTRESPerNode)
	case "MaxTRESPU":
		return tres(l.MaxTRESPerUser)
	case "MaxTRESPA":
		return tres(l.MaxTRESPerAccount)
	case "MinTRES":
		return tres(l.MinTRESPerJob)
	case "GrpCPUs":
		return one(l.GrpTRES, "cpu")
	case "GrpMem":
		return one(l.GrpTRES, "mem")
	case "GrpNodes":
		return one(l.GrpTRES, "node")
	case "MaxCPUs":
		return one(l.MaxTRESPerJob, "cpu")
	case "MaxNodes":
		return one(l.MaxTRESPerJob, "node")
	case "MaxCPUsPU":
		return one(l.MaxTRESPerUser, "cpu")
	case "MaxNodesPU":
		return one(l.MaxTRESPerUser, "node")
	case "MinCPUs":
		return one(l.MinTRESPerJob, "cpu")
	case "GrpTRESMins":
		return tres(l.GrpTRESMins)
	case "GrpTRESRunMins":
		return tres(l.GrpTRESRunMins)
	case "MaxTRESMins":
		return tres(l.MaxTRESMinsPerJob)
	case "GrpCPUMins":
		return one(l.GrpTRESMins, "cpu")
	case "GrpCPURunMins":
		return one(l.GrpTRESRunMins, "cpu")
	case "MaxCPUMins":
		return one(l.MaxTRESMinsPerJob, "cpu")
	}
	if f.kind == pTRES {
		return cell{}
	}
	return unset()
}
