// Package limitwire writes and reads an association's and a QOS's limits
// in slurmrestd v0.0.44's members (as the schema's descriptions name
// them: max.jobs.per.count is GrpJobs, max.jobs.active MaxJobs...), for
// the bridge that serves them and the sacctmgr that sends them. An unset
// count is infinite; a TRES list names the TRES with a limit.
package limitwire

import (
	"slices"
	"strings"

	"github.com/droverhq/drover/internal/assoc"
	api "github.com/droverhq/drover/openapi/v0044"
)

// limitWire is a count limit: a number, or infinite when unset.
func limitWire(p *uint32) api.OptV0044Uint32NoValStruct {
	if p == nil {
		return api.NewOptV0044Uint32NoValStruct(u32Inf())
	}
	return api.NewOptV0044Uint32NoValStruct(u32(*p))
}

// limitRead reads a posted count limit over the old one: absent keeps
// it, infinite or unset clears it.
func limitRead(o api.OptV0044Uint32NoValStruct, old *uint32) *uint32 {
	switch n, how := readU32(o); how {
	case number:
		return assoc.Count(n)
	case clear:
		return nil
	}
	return old
}

// tresIDs are the TRES ids slurmdbd gives the base TRES.
var tresIDs = map[string]int32{"cpu": 1, "mem": 2, "energy": 3, "node": 4, "billing": 5, "fs/disk": 6, "vmem": 7, "pages": 8}

// tresWire writes a TRES limit list.
func tresWire(t assoc.TRES) api.V0044TresList {
	out := api.V0044TresList{}
	for _, item := range strings.Split(t.String(), ",") {
		name, _, ok := strings.Cut(item, "=")
		if !ok {
			continue
		}
		typ, sub, _ := strings.Cut(name, "/")
		w := api.V0044Tres{Type: typ, Name: api.NewOptString(sub), Count: api.NewOptInt64(int64(t[name]))}
		if id, ok := tresIDs[name]; ok {
			w.ID = api.NewOptInt32(id)
		} else if name == "gres/gpu" {
			w.ID = api.NewOptInt32(1001) // slurmdbd's first dynamic TRES
		}
		out = append(out, w)
	}
	return out
}

// tresRead reads a posted TRES limit list over the old one: absent keeps
// it, present replaces it (a TRES with a negative count, or none, has no
// limit).
func tresRead(list api.V0044TresList, old assoc.TRES) assoc.TRES {
	if list == nil {
		return old
	}
	out := assoc.TRES{}
	for _, w := range list {
		name := strings.ToLower(w.Type)
		if n := w.Name.Or(""); n != "" {
			name += "/" + strings.ToLower(n)
		}
		if c := w.Count.Or(-1); c >= 0 {
			out[name] = uint64(c)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// AssocToWire puts an association's limits in its record.
func AssocToWire(l assoc.Limits, w *api.V0044Assoc) {
	max := w.Max.Or(api.V0044AssocMax{})
	jobs := max.Jobs.Or(api.V0044AssocMaxJobs{})
	per := jobs.Per.Or(api.V0044AssocMaxJobsPer{})
	per.Count, per.Submitted, per.WallClock = limitWire(l.GrpJobs), limitWire(l.GrpSubmitJobs), limitWire(l.MaxWall)
	jobs.Per = api.NewOptV0044AssocMaxJobsPer(per)
	jobs.Active, jobs.Total = limitWire(l.MaxJobs), limitWire(l.MaxSubmitJobs)
	max.Jobs = api.NewOptV0044AssocMaxJobs(jobs)
	tres := max.Tres.Or(api.V0044AssocMaxTres{})
	tres.Total = tresWire(l.GrpTRES)
	tper := tres.Per.Or(api.V0044AssocMaxTresPer{})
	tper.Job, tper.Node = tresWire(l.MaxTRESPerJob), tresWire(l.MaxTRESPerNode)
	tres.Per = api.NewOptV0044AssocMaxTresPer(tper)
	group := tres.Group.Or(api.V0044AssocMaxTresGroup{})
	group.Minutes, group.Active = tresWire(l.GrpTRESMins), tresWire(l.GrpTRESRunMins)
	tres.Group = api.NewOptV0044AssocMaxTresGroup(group)
	mins := tres.Minutes.Or(api.V0044AssocMaxTresMinutes{})
	mper := mins.Per.Or(api.V0044AssocMaxTresMinutesPer{})
	mper.Job = tresWire(l.MaxTRESMinsPerJob)
	mins.Per = api.NewOptV0044AssocMaxTresMinutesPer(mper)
	tres.Minutes = api.NewOptV0044AssocMaxTresMinutes(mins)
	max.Tres = api.NewOptV0044AssocMaxTres(tres)
	aper := max.Per.Or(api.V0044AssocMaxPer{})
	acct := aper.Account.Or(api.V0044AssocMaxPerAccount{})
	acct.WallClock = limitWire(l.GrpWall)
	aper.Account = api.NewOptV0044AssocMaxPerAccount(acct)
	max.Per = api.NewOptV0044AssocMaxPer(aper)
	w.Max = api.NewOptV0044AssocMax(max)
}

// AssocFromWire reads a posted association's limits over its old
// ones.
func AssocFromWire(w *api.V0044Assoc, old assoc.Limits) assoc.Limits {
	l := old.Clone()
	max, ok := w.Max.Get()
	if !ok {
		return l
	}
	if jobs, ok := max.Jobs.Get(); ok {
		if per, ok := jobs.Per.Get(); ok {
			l.GrpJobs = limitRead(per.Count, l.GrpJobs)
			l.GrpSubmitJobs = limitRead(per.Submitted, l.GrpSubmitJobs)
			l.MaxWall = limitRead(per.WallClock, l.MaxWall)
		}
		l.MaxJobs = limitRead(jobs.Active, l.MaxJobs)
		l.MaxSubmitJobs = limitRead(jobs.Total, l.MaxSubmitJobs)
	}
	if tres, ok := max.Tres.Get(); ok {
		l.GrpTRES = tresRead(tres.Total, l.GrpTRES)
		if per, ok := tres.Per.Get(); ok {
			l.MaxTRESPerJob = tresRead(per.Job, l.MaxTRESPerJob)
			l.MaxTRESPerNode = tresRead(per.Node, l.MaxTRESPerNode)
		}
		if g, ok := tres.Group.Get(); ok {
			l.GrpTRESMins = tresRead(g.Minutes, l.GrpTRESMins)
			l.GrpTRESRunMins = tresRead(g.Active, l.GrpTRESRunMins)
		}
		if m, ok := tres.Minutes.Get(); ok {
			if per, ok := m.Per.Get(); ok {
				l.MaxTRESMinsPerJob = tresRead(per.Job, l.MaxTRESMinsPerJob)
			}
		}
	}
	if per, ok := max.Per.Get(); ok {
		if acct, ok := per.Account.Get(); ok {
			l.GrpWall = limitRead(acct.WallClock, l.GrpWall)
		}
	}
	return l
}

// QOSToWire puts a QOS's limits in its record.
func QOSToWire(l assoc.Limits, lim *api.V0044QosLimits) {
	max := lim.Max.Or(api.V0044QosLimitsMax{})
	active := max.ActiveJobs.Or(api.V0044QosLimitsMaxActiveJobs{})
	active.Count = limitWire(l.GrpJobs)
	max.ActiveJobs = api.NewOptV0044QosLimitsMaxActiveJobs(active)
	jobs := max.Jobs.Or(api.V0044QosLimitsMaxJobs{})
	jobs.Count = limitWire(l.GrpSubmitJobs)
	jper := jobs.Per.Or(api.V0044QosLimitsMaxJobsPer{})
	jper.User, jper.Account = limitWire(l.MaxSubmitJobs), limitWire(l.MaxSubmitJobsPerAccount)
	jobs.Per = api.NewOptV0044QosLimitsMaxJobsPer(jper)
	aj := jobs.ActiveJobs.Or(api.V0044QosLimitsMaxJobsActiveJobs{})
	ajper := aj.Per.Or(api.V0044QosLimitsMaxJobsActiveJobsPer{})
	ajper.User, ajper.Account = limitWire(l.MaxJobs), limitWire(l.MaxJobsPerAccount)
	aj.Per = api.NewOptV0044QosLimitsMaxJobsActiveJobsPer(ajper)
	jobs.ActiveJobs = api.NewOptV0044QosLimitsMaxJobsActiveJobs(aj)
	max.Jobs = api.NewOptV0044QosLimitsMaxJobs(jobs)
	tres := max.Tres.Or(api.V0044QosLimitsMaxTres{})
	tres.Total = tresWire(l.GrpTRES)
	tper := tres.Per.Or(api.V0044QosLimitsMaxTresPer{})
	tper.Job, tper.Node, tper.User = tresWire(l.MaxTRESPerJob), tresWire(l.MaxTRESPerNode), tresWire(l.MaxTRESPerUser)
	tper.Account = tresWire(l.MaxTRESPerAccount)
	tres.Per = api.NewOptV0044QosLimitsMaxTresPer(tper)
	tmins := tres.Minutes.Or(api.V0044QosLimitsMaxTresMinutes{})
	tmins.Total = tresWire(l.GrpTRESMins)
	tmper := tmins.Per.Or(api.V0044QosLimitsMaxTresMinutesPer{})
	tmper.Qos, tmper.Job = tresWire(l.GrpTRESRunMins), tresWire(l.MaxTRESMinsPerJob)
	tmins.Per = api.NewOptV0044QosLimitsMaxTresMinutesPer(tmper)
	tres.Minutes = api.NewOptV0044QosLimitsMaxTresMinutes(tmins)
	max.Tres = api.NewOptV0044QosLimitsMaxTres(tres)
	wall := max.WallClock.Or(api.V0044QosLimitsMaxWallClock{})
	wper := wall.Per.Or(api.V0044QosLimitsMaxWallClockPer{})
	wper.Job, wper.Qos = limitWire(l.MaxWall), limitWire(l.GrpWall)
	wall.Per = api.NewOptV0044QosLimitsMaxWallClockPer(wper)
	max.WallClock = api.NewOptV0044QosLimitsMaxWallClock(wall)
	lim.Max = api.NewOptV0044QosLimitsMax(max)
	min := lim.Min.Or(api.V0044QosLimitsMin{})
	mtres := min.Tres.Or(api.V0044QosLimitsMinTres{})
	mper := mtres.Per.Or(api.V0044QosLimitsMinTresPer{})
	mper.Job = tresWire(l.MinTRESPerJob)
	mtres.Per = api.NewOptV0044QosLimitsMinTresPer(mper)
	min.Tres = api.NewOptV0044QosLimitsMinTres(mtres)
	lim.Min = api.NewOptV0044QosLimitsMin(min)
}

// QOSFromWire reads a posted QOS's limits over its old ones.
func QOSFromWire(lim api.V0044QosLimits, old assoc.Limits) assoc.Limits {
	l := old.Clone()
	if max, ok := lim.Max.Get(); ok {
		if a, ok := max.ActiveJobs.Get(); ok {
			l.GrpJobs = limitRead(a.Count, l.GrpJobs)
		}
		if jobs, ok := max.Jobs.Get(); ok {
			l.GrpSubmitJobs = limitRead(jobs.Count, l.GrpSubmitJobs)
			if per, ok := jobs.Per.Get(); ok {
				l.MaxSubmitJobs = limitRead(per.User, l.MaxSubmitJobs)
				l.MaxSubmitJobsPerAccount = limitRead(per.Account, l.MaxSubmitJobsPerAccount)
			}
			if aj, ok := jobs.ActiveJobs.Get(); ok {
				if per, ok := aj.Per.Get(); ok {
					l.MaxJobs = limitRead(per.User, l.MaxJobs)
					l.MaxJobsPerAccount = limitRead(per.Account, l.MaxJobsPerAccount)
				}
			}
		}
		if tres, ok := max.Tres.Get(); ok {
			l.GrpTRES = tresRead(tres.Total, l.GrpTRES)
			if per, ok := tres.Per.Get(); ok {
				l.MaxTRESPerJob = tresRead(per.Job, l.MaxTRESPerJob)
				l.MaxTRESPerNode = tresRead(per.Node, l.MaxTRESPerNode)
				l.MaxTRESPerUser = tresRead(per.User, l.MaxTRESPerUser)
				l.MaxTRESPerAccount = tresRead(per.Account, l.MaxTRESPerAccount)
			}
			if m, ok := tres.Minutes.Get(); ok {
				l.GrpTRESMins = tresRead(m.Total, l.GrpTRESMins)
				if per, ok := m.Per.Get(); ok {
					l.GrpTRESRunMins = tresRead(per.Qos, l.GrpTRESRunMins)
					l.MaxTRESMinsPerJob = tresRead(per.Job, l.MaxTRESMinsPerJob)
				}
			}
		}
		if wall, ok := max.WallClock.Get(); ok {
			if per, ok := wall.Per.Get(); ok {
				l.MaxWall = limitRead(per.Job, l.MaxWall)
				l.GrpWall = limitRead(per.Qos, l.GrpWall)
			}
		}
	}
	if min, ok := lim.Min.Get(); ok {
		if t, ok := min.Tres.Get(); ok {
			if per, ok := t.Per.Get(); ok {
				l.MinTRESPerJob = tresRead(per.Job, l.MinTRESPerJob)
			}
		}
	}
	return l
}

func u32(n uint32) api.V0044Uint32NoValStruct {
	return api.V0044Uint32NoValStruct{Set: api.NewOptBool(true), Infinite: api.NewOptBool(false), Number: api.NewOptInt32(int32(n))}
}

func u32Inf() api.V0044Uint32NoValStruct {
	return api.V0044Uint32NoValStruct{Set: api.NewOptBool(false), Infinite: api.NewOptBool(true), Number: api.NewOptInt32(0)}
}

// readU32 reads a posted {set, infinite, number}: a number (ok), or
// clear (infinite, or set false), or absent.
func readU32(o api.OptV0044Uint32NoValStruct) (n uint32, how int) {
	v, present := o.Get()
	if !present {
		return 0, absent
	}
	if v.Infinite.Or(false) {
		return 0, clear
	}
	if s, has := v.Set.Get(); has && !s {
		return 0, clear
	}
	num, has := v.Number.Get()
	if !has {
		return 0, absent
	}
	return uint32(max(num, 0)), number
}

const (
	absent = iota
	clear
	number
)

// qosFlagWire names each QOS flag as slurmrestd's flags enum does.
var qosFlagWire = map[string]api.V0044QosFlagsItem{
	assoc.FlagDenyOnLimit:   api.V0044QosFlagsItemDENYLIMIT,
	"EnforceUsageThreshold": api.V0044QosFlagsItemENFORCEUSAGETHRESHOLD,
	"NoReserve":             api.V0044QosFlagsItemNORESERVE,
	"PartitionMaxNodes":     api.V0044QosFlagsItemPARTITIONMAXIMUMNODE,
	"PartitionMinNodes":     api.V0044QosFlagsItemPARTITIONMINIMUMNODE,
	assoc.FlagOverPartQOS:   api.V0044QosFlagsItemOVERRIDEPARTITIONQOS,
	"PartitionTimeLimit":    api.V0044QosFlagsItemPARTITIONTIMELIMIT,
	"RequiresReservation":   api.V0044QosFlagsItemREQUIREDRESERVATION,
	assoc.FlagNoDecay:       api.V0044QosFlagsItemNODECAY,
	"UsageFactorSafe":       api.V0044QosFlagsItemUSAGEFACTORSAFE,
}

// QOSFlagsToWire writes a QOS's flags in slurmrestd's names.
func QOSFlagsToWire(flags []string) []api.V0044QosFlagsItem {
	out := []api.V0044QosFlagsItem{}
	for _, f := range flags {
		if w, ok := qosFlagWire[f]; ok {
			out = append(out, w)
		}
	}
	return out
}

// QOSFlagsFromWire reads posted flags over the old ones: none (or only
// NOT_SET) keeps them; a list replaces them, or, with ADD or REMOVE among them, adds or
// removes its members. A flag with no sacctmgr name (PARTITION_QOS,
// RELATIVE...) is returned as it is, for the model to refuse.
func QOSFlagsFromWire(w []api.V0044QosFlagsItem, old []string) []string {
	if len(w) == 0 {
		return old
	}
	mode := api.V0044QosFlagsItemNOTSET
	var named []string
	for _, item := range w {
		switch item {
		case api.V0044QosFlagsItemADD, api.V0044QosFlagsItemREMOVE:
			mode = item
			continue
		case api.V0044QosFlagsItemNOTSET:
			continue
		}
		name := string(item)
		for n, wire := range qosFlagWire {
			if wire == item {
				name = n
			}
		}
		named = append(named, name)
	}
	switch mode {
	case api.V0044QosFlagsItemADD:
		out := append([]string{}, old...)
		for _, n := range named {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		return out
	case api.V0044QosFlagsItemREMOVE:
		return slices.DeleteFunc(append([]string{}, old...), func(f string) bool { return slices.Contains(named, f) })
	}
	if named == nil {
		return old
	}
	return named
}
