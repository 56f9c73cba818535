package scontrol

import (
	"context"
	"fmt"
	"strings"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// partitionView carries what the partition layout needs besides the
// partition: the flags that only slurm.conf has (see partFlags) and the
// cluster-wide defaults.
type partitionView struct {
	oneLiner    bool
	flags       map[string]partFlags
	preemptMode string
	powerSave   bool
}

func yesNo(b bool) string {
	if b {
		return "YES"
	}
	return "NO"
}

// formatPartition prints one partition in `scontrol show partition` layout
// (slurm_sprint_partition_info).
func formatPartition(p *v0044.V0044PartitionInfo, v partitionView) string {
	w := newLineWriter(v.oneLiner)
	name := p.Name.Or("")
	fl := v.flags[name]

	w.printf("PartitionName=%s", name)
	w.end()

	groups, accounts, qos := p.Groups.Or(v0044.V0044PartitionInfoGroups{}), p.Accounts.Or(v0044.V0044PartitionInfoAccounts{}), p.Qos.Or(v0044.V0044PartitionInfoQos{})
	if g := groups.Allowed.Or(""); g == "" {
		w.printf("AllowGroups=ALL")
	} else {
		w.printf("AllowGroups=%s", g)
	}
	if allow, deny := accounts.Allowed.Or(""), accounts.Deny.Or(""); allow != "" || deny == "" {
		w.printf(" AllowAccounts=%s", orAll(allow))
	} else {
		w.printf(" DenyAccounts=%s", deny)
	}
	if allow, deny := qos.Allowed.Or(""), qos.Deny.Or(""); allow != "" || deny == "" {
		w.printf(" AllowQos=%s", orAll(allow))
	} else {
		w.printf(" DenyQos=%s", deny)
	}
	w.end()

	nodes := p.Nodes.Or(v0044.V0044PartitionInfoNodes{})
	w.printf("AllocNodes=%s", orAll(nodes.AllowedAllocation.Or("")))
	if alt := p.Alternate.Or(""); alt != "" {
		w.printf(" Alternate=%s", alt)
	}
	w.printf(" Default=%s", yesNo(fl.Default))
	if a := qos.Assigned.Or(""); a != "" {
		w.printf(" QoS=%s", a)
	} else {
		w.printf(" QoS=N/A")
	}
	w.end()

	defaults := p.Defaults.Or(v0044.V0044PartitionInfoDefaults{})
	switch dt := u32(defaults.Time); dt {
	case infinite:
		w.printf("DefaultTime=UNLIMITED")
	case noVal:
		w.printf("DefaultTime=NONE")
	default:
		w.printf("DefaultTime=%s", secs2time(int64(dt)*60))
	}
	w.printf(" DisableRootJobs=%s ExclusiveUser=%s ExclusiveTopo=%s", yesNo(fl.DisableRootJobs), yesNo(fl.ExclusiveUser), yesNo(fl.ExclusiveTopo))
	w.printf(" GraceTime=%d Hidden=%s", p.GraceTime.Or(0), yesNo(fl.Hidden))
	w.end()

	max := p.Maximums.Or(v0044.V0044PartitionInfoMaximums{})
	mins := p.Minimums.Or(v0044.V0044PartitionInfoMinimums{})
	if mn := u32(max.Nodes); mn == infinite || mn == noVal {
		w.printf("MaxNodes=UNLIMITED")
	} else {
		w.printf("MaxNodes=%d", mn)
	}
	if mt := u32(max.Time); mt == infinite || mt == noVal {
		w.printf(" MaxTime=UNLIMITED")
	} else {
		w.printf(" MaxTime=%s", secs2time(int64(mt)*60))
	}
	w.printf(" MinNodes=%d LLN=%s", mins.Nodes.Or(0), yesNo(fl.LLN))
	if c := u32(max.CpusPerNode); c == infinite || c == noVal {
		w.printf(" MaxCPUsPerNode=UNLIMITED")
	} else {
		w.printf(" MaxCPUsPerNode=%d", c)
	}
	if c := u32(max.CpusPerSocket); c == infinite || c == noVal {
		w.printf(" MaxCPUsPerSocket=UNLIMITED")
	} else {
		w.printf(" MaxCPUsPerSocket=%d", c)
	}
	w.end()

	if ns := p.NodeSets.Or(""); ns != "" {
		w.printf("NodeSets=%s", ns)
		w.end()
	}
	w.printf("Nodes=%s", orNull(nodes.Configured.Or("")))
	w.end()

	prio := p.Priority.Or(v0044.V0044PartitionInfoPriority{})
	w.printf("PriorityJobFactor=%d PriorityTier=%d RootOnly=%s ReqResv=%s",
		prio.JobFactor.Or(0), prio.Tier.Or(0), yesNo(fl.RootOnly), yesNo(fl.ReqResv))
	w.printf(" OverSubscribe=%s", oversubscribe(max.Oversubscribe.Or(v0044.V0044PartitionInfoMaximumsOversubscribe{})))
	w.end()

	switch otl := u16(max.OverTimeLimit); otl {
	case noVal16:
		w.printf("OverTimeLimit=NONE")
	case infinite16:
		w.printf("OverTimeLimit=UNLIMITED")
	default:
		w.printf("OverTimeLimit=%d", otl)
	}
	mode := fl.PreemptMode
	if mode == "" {
		mode = v.preemptMode
	}
	w.printf(" PreemptMode=%s", strings.ToUpper(mode))
	w.end()

	if t := p.Topology.Or(""); t != "" {
		w.printf("Topology=%s", t)
		w.end()
	}

	state := "UNKNOWN"
	if st, ok := p.Partition.Get(); ok && len(st.State) > 0 {
		state = string(st.State[0])
	}
	cpus := p.Cpus.Or(v0044.V0044PartitionInfoCpus{})
	w.printf("State=%s TotalCPUs=%d TotalNodes=%d SelectTypeParameters=%s",
		state, cpus.Total.Or(0), nodes.Total.Or(0), selectTypeParams(p.SelectType))
	w.end()

	w.printf("JobDefaults=%s", orNull(defaults.Job.Or("")))
	w.end()

	w.printf("%s %s", memLimit("Def", defaults.PartitionMemoryPerCPU, defaults.PartitionMemoryPerNode),
		memLimit("Max", max.PartitionMemoryPerCPU, max.PartitionMemoryPerNode))
	w.end()
	tres := p.Tres.Or(v0044.V0044PartitionInfoTres{})
	w.printf("TRES=%s", orNull(tres.Configured.Or("")))
	if bw := tres.BillingWeights.Or(""); bw != "" {
		w.end()
		w.printf("TRESBillingWeights=%s", bw)
	}
	if v.powerSave {
		timeouts := p.Timeouts.Or(v0044.V0044PartitionInfoTimeouts{})
		w.end()
		w.printf("ResumeTimeout=%s SuspendTimeout=%s SuspendTime=%s PowerDownOnIdle=%s",
			globalOr(u16(timeouts.Resume), true), globalOr(u16(timeouts.Suspend), true),
			globalOr(u32(p.SuspendTime), false), yesNo(fl.PowerDownOnIdle))
	}
	if v.oneLiner {
		return w.b.String() + "\n"
	}
	return w.b.String() + "\n\n"
}

func orAll(s string) string {
	if s == "" {
		return "ALL"
	}
	return s
}

// globalOr prints a power-saving timeout: GLOBAL when unset (the
// slurm.conf value applies), INFINITE, or the number.
func globalOr(v uint64, is16 bool) string {
	nv, inf := uint64(noVal), uint64(infinite)
	if is16 {
		nv, inf = noVal16, infinite16
	}
	switch v {
	case nv:
		return "GLOBAL"
	case inf:
		return "INFINITE"
	}
	return fmt.Sprint(v)
}

// oversubscribe prints a partition's OverSubscribe as scontrol does from
// max_share (EXCLUSIVE, NO, YES:n, FORCE:n).
func oversubscribe(o v0044.V0044PartitionInfoMaximumsOversubscribe) string {
	jobs := o.Jobs.Or(1)
	force := false
	for _, f := range o.Flags {
		if f == v0044.V0044PartitionInfoMaximumsOversubscribeFlagsItemForce {
			force = true
		}
	}
	switch {
	case jobs == 0:
		return "EXCLUSIVE"
	case force:
		return fmt.Sprintf("FORCE:%d", jobs)
	case jobs == 1:
		return "NO"
	}
	return fmt.Sprintf("YES:%d", jobs)
}

// memLimit prints DefMemPerCPU/DefMemPerNode (prefix "Def") or the Max
// variants as scontrol does: a per-CPU limit when one is set, else the
// per-node one, UNLIMITED for 0.
func memLimit(prefix string, perCPU, perNode v0044.OptV0044Uint64NoValStruct) string {
	if c := u64(perCPU); c != noVal64 {
		if c == infinite64 || c == 0 {
			return prefix + "MemPerCPU=UNLIMITED"
		}
		return fmt.Sprintf("%sMemPerCPU=%d", prefix, c)
	}
	if n := u64(perNode); n != noVal64 && n != infinite64 && n != 0 {
		return fmt.Sprintf("%sMemPerNode=%d", prefix, n)
	}
	return prefix + "MemPerNode=UNLIMITED"
}

// selectTypeParams is select_type_param_string for a partition's
// select_type list: NONE when empty.
func selectTypeParams(items []v0044.V0044PartitionInfoSelectTypeItem) string {
	if len(items) == 0 {
		return "NONE"
	}
	names := make([]string, len(items))
	for i, it := range items {
		names[i] = string(it)
	}
	return strings.Join(names, ",")
}

// showLicenses is scontrol_print_licenses: licenses sorted by name.
func (c *cmd) showLicenses(ctx context.Context, val *string) {
	res, err := c.env.Client.SlurmV0044GetLicenses(ctx)
	var lics v0044.V0044Licenses
	var re *restError
	if err != nil {
		re, _ = fromTransport(err)
	} else {
		switch r := res.(type) {
		case *v0044.V0044OpenapiLicensesResp:
			if e := fromErrors(r.Errors, 200); e != nil && e.Code != 0 {
				re = e
			}
			lics = r.Licenses
		case *v0044.V0044OpenapiLicensesRespStatusCode:
			if re = fromErrors(r.Response.Errors, r.StatusCode); re == nil {
				re = fromStatus(r.StatusCode)
			}
		default:
			re = fromStatus(0)
		}
	}
	if re != nil {
		c.perror("slurm_load_license error", re)
		return
	}
	if len(lics) == 0 {
		fmt.Fprintln(c.env.Stdout, "No licenses configured in Slurm.")
		return
	}
	sorted := make([]v0044.V0044License, len(lics))
	copy(sorted, lics)
	sortLicenses(sorted)
	for i := range sorted {
		if val != nil && sorted[i].LicenseName.Or("") != *val {
			continue
		}
		fmt.Fprint(c.env.Stdout, formatLicense(&sorted[i], c.oneLiner, c.timeStr))
	}
}

func sortLicenses(l []v0044.V0044License) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j].LicenseName.Or("") < l[j-1].LicenseName.Or(""); j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

// showReservations is scontrol_print_res.
func (c *cmd) showReservations(ctx context.Context, val *string) {
	res, err := c.env.Client.SlurmV0044GetReservations(ctx, v0044.SlurmV0044GetReservationsParams{})
	var resvs v0044.V0044ReservationInfoMsg
	var re *restError
	if err != nil {
		re, _ = fromTransport(err)
	} else {
		switch r := res.(type) {
		case *v0044.V0044OpenapiReservationResp:
			if e := fromErrors(r.Errors, 200); e != nil && e.Code != 0 {
				re = e
			}
			resvs = r.Reservations
		case *v0044.V0044OpenapiReservationRespStatusCode:
			if re = fromErrors(r.Response.Errors, r.StatusCode); re == nil {
				re = fromStatus(r.StatusCode)
			}
		default:
			re = fromStatus(0)
		}
	}
	if re != nil {
		c.perror("slurm_load_reservations error", re)
		return
	}
	printed := 0
	for i := range resvs {
		if val != nil && resvs[i].Name.Or("") != *val {
			continue
		}
		fmt.Fprint(c.env.Stdout, formatReservation(&resvs[i], c.oneLiner, c.now().Unix(), c.timeStr))
		printed++
		if val != nil {
			break
		}
	}
	if printed > 0 {
		return
	}
	if val != nil {
		c.exitCode = 1
		if c.quiet != 1 {
			fmt.Fprintf(c.env.Stdout, "Reservation %s not found\n", *val)
		}
		return
	}
	if c.quiet != 1 {
		fmt.Fprintln(c.env.Stdout, "No reservations in the system")
	}
}
