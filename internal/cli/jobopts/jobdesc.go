package jobopts

import (
	"math"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/timefmt"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// JobDesc returns the v0.0.44 job description for the options, field for
// field what Slurm's slurm_opt_create_job_desc and sbatch put in the job
// description they send to slurmctld (slurmrestd's names for the fields).
// Call it after Finish. Fields that do not depend on options (script,
// environment, argv) are left for the caller, and so is the job name when
// --job-name was not given (sbatch names the job after its script).
//
// Fields sbatch leaves at their "unset" value are left out of the request;
// the ones it always fills (working directory, standard input, minimum CPU
// count) are always sent.
func (o *Options) JobDesc() v0044.V0044JobDescMsg {
	var d v0044.V0044JobDescMsg
	str := func(dst *v0044.OptString, v string) {
		if v != "" {
			*dst = v0044.NewOptString(v)
		}
	}
	i32 := func(dst *v0044.OptInt32, m Maybe[int]) {
		if m.Set {
			*dst = v0044.NewOptInt32(int32(m.Val))
		}
	}

	str(&d.Account, o.Account)
	str(&d.AccountGatherFrequency, o.AcctgFreq)
	str(&d.Array, o.Array)
	str(&d.BatchFeatures, o.BatchFeatures)
	if o.Begin.Set {
		d.BeginTime = v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{
			Set: v0044.NewOptBool(true), Number: v0044.NewOptInt64(o.Begin.Val.Unix()),
		})
	}
	d.Flags = o.jobFlags()
	str(&d.BurstBuffer, o.BurstBuffer)
	str(&d.ClusterConstraint, o.ClusterConstraint)
	str(&d.Comment, o.Comment)
	if o.Contiguous {
		d.Contiguous = v0044.NewOptBool(true)
	}
	str(&d.Container, o.Container)
	str(&d.ContainerID, o.ContainerID)
	i32(&d.CoreSpecification, o.CoreSpec)
	i32(&d.ThreadSpecification, o.ThreadSpec)
	str(&d.CPUFrequency, o.CPUFreq)
	if o.CPUsPerGPU.Set {
		d.CpusPerTres = v0044.NewOptString("gres/gpu:" + strconv.Itoa(o.CPUsPerGPU.Val))
	}
	if o.Deadline.Set {
		d.Deadline = v0044.NewOptInt64(o.Deadline.Val.Unix())
	}
	i32(&d.DelayBoot, o.DelayBoot)
	str(&d.Dependency, o.Dependency)
	str(&d.Distribution, o.DistributionEnv())
	if o.PlaneSize.Set {
		d.DistributionPlaneSize = v0044.NewOptV0044Uint16NoValStruct(v0044.V0044Uint16NoValStruct{
			Set: v0044.NewOptBool(true), Number: v0044.NewOptInt32(int32(o.PlaneSize.Val)),
		})
	}
	if o.Exclude != "" {
		d.ExcludedNodes = v0044.V0044CsvString{o.Exclude}
	}
	str(&d.Extra, o.Extra)
	str(&d.Constraints, o.Constraint)
	str(&d.Prefer, o.Prefer)
	if o.GID.Set {
		d.GroupID = v0044.NewOptString(strconv.FormatUint(uint64(o.GID.Val), 10))
	}
	if o.NoKill {
		d.KillOnNodeFail = v0044.NewOptBool(false)
	}
	lic := o.Licenses
	if o.Resources != "" {
		if lic != "" {
			lic += ","
		}
		lic += o.Resources
	}
	str(&d.Licenses, lic)
	if o.MailType.Set && len(o.MailType.Val) > 0 {
		for _, t := range o.MailType.Val {
			d.MailType = append(d.MailType, v0044.V0044JobDescMsgMailTypeItem(t))
		}
	}
	str(&d.MailUser, o.MailUser)
	str(&d.McsLabel, o.MCSLabel)
	if o.MemBind != "" {
		types, list, _ := parseMemBind(o.MemBind)
		for _, t := range types {
			d.MemoryBindingType = append(d.MemoryBindingType, v0044.V0044JobDescMsgMemoryBindingTypeItem(t))
		}
		str(&d.MemoryBinding, list)
	}
	if o.MemPerGPU.Set {
		d.MemoryPerTres = v0044.NewOptString("gres/gpu:" + strconv.FormatUint(o.MemPerGPU.Val, 10))
	}
	if o.JobName.Set {
		d.Name = v0044.NewOptString(o.JobName.Val)
	}
	str(&d.Network, o.Network)
	i32(&d.Nice, o.Nice)
	i32(&d.Tasks, o.Ntasks)
	if o.OpenMode != "" {
		d.OpenMode = []v0044.V0044JobDescMsgOpenModeItem{v0044.V0044JobDescMsgOpenModeItem(o.OpenMode)}
	}
	d.MinimumCpus = v0044.NewOptInt32(int32(o.minCPUs()))
	if o.Overcommit {
		d.Overcommit = v0044.NewOptBool(true)
	}
	str(&d.Partition, o.Partition)
	switch {
	case o.Hold.Set:
		d.Hold = v0044.NewOptBool(o.Hold.Val)
	case o.Priority.Set:
		d.Priority = v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
			Set: v0044.NewOptBool(true), Number: v0044.NewOptInt32(int32(o.Priority.Val)),
		})
	}
	for _, p := range o.Profile {
		d.Profile = append(d.Profile, v0044.V0044JobDescMsgProfileItem(p))
	}
	str(&d.Qos, o.QOS)
	if o.Reboot {
		d.Reboot = v0044.NewOptBool(true)
	}
	if o.NodeList != "" {
		d.RequiredNodes = v0044.V0044CsvString{o.requiredNodes()}
	}
	str(&d.Reservation, o.Reservation)
	if o.SegmentSize.Set {
		d.SegmentSize = v0044.NewOptV0044Uint16NoValStruct(v0044.V0044Uint16NoValStruct{
			Set: v0044.NewOptBool(true), Number: v0044.NewOptInt32(int32(o.SegmentSize.Val)),
		})
	}
	if s := o.Shared.String(); s != "" {
		d.Shared = []v0044.V0044JobDescMsgSharedItem{v0044.V0044JobDescMsgSharedItem(s)}
	}
	i32(&d.OomKillStep, o.OOMKillStep)
	if o.TimeLimit.Set {
		d.TimeLimit = v0044.NewOptV0044Uint32NoValStruct(limitStruct(o.TimeLimit.Val))
	}
	if o.TimeMin.Set {
		d.TimeMinimum = v0044.NewOptV0044Uint32NoValStruct(limitStruct(o.TimeMin.Val))
	}
	str(&d.TresBind, o.TRESBind)
	str(&d.TresFreq, o.TRESFreq)
	str(&d.TresPerJob, fmtTRES("gres/gpu", o.GPUs))
	perNode := fmtTRES("gres/gpu", o.GPUsPerNode)
	if o.GRES != "" && !strings.EqualFold(o.GRES, "none") {
		if perNode != "" {
			perNode += ","
		}
		perNode += o.GRES
	}
	str(&d.TresPerNode, perNode)
	str(&d.TresPerSocket, fmtTRES("gres/gpu", o.GPUsPerSocket))
	str(&d.TresPerTask, o.TRESPerTask)
	if o.UID.Set {
		d.UserID = v0044.NewOptString(strconv.FormatUint(uint64(o.UID.Val), 10))
	}
	if o.Signal.Set {
		s := o.Signal.Val
		d.KillWarningSignal = v0044.NewOptString(s.Signal)
		d.KillWarningDelay = v0044.NewOptV0044Uint16NoValStruct(v0044.V0044Uint16NoValStruct{
			Set: v0044.NewOptBool(true), Number: v0044.NewOptInt32(int32(s.Delay)),
		})
		if s.Batch {
			d.KillWarningFlags = append(d.KillWarningFlags, v0044.V0044JobDescMsgKillWarningFlagsItemBATCHJOB)
		}
		if s.Reservation {
			d.KillWarningFlags = append(d.KillWarningFlags, v0044.V0044JobDescMsgKillWarningFlagsItemRESERVATIONJOB)
		}
	}
	str(&d.CurrentWorkingDirectory, o.Chdir)
	i32(&d.CpusPerTask, o.CPUsPerTask)
	o.nodeCounts(&d)
	i32(&d.SocketsPerNode, o.SocketsPerNode)
	i32(&d.ThreadsPerCore, o.ThreadsPerCore)
	i32(&d.TasksPerNode, o.NtasksPerNode)
	i32(&d.TasksPerSocket, o.NtasksPerSocket)
	i32(&d.TasksPerCore, o.NtasksPerCore)
	switch {
	case o.NtasksPerTRES.Set:
		i32(&d.NtasksPerTres, o.NtasksPerTRES)
	case o.NtasksPerGPU.Set:
		i32(&d.NtasksPerTres, o.NtasksPerGPU)
	}
	i32(&d.MinimumCpusPerNode, o.MinCPUs)
	switch {
	case o.Mem.Set:
		d.MemoryPerNode = v0044.NewOptV0044Uint64NoValStruct(mbStruct(o.Mem.Val))
	case o.MemPerCPU.Set:
		d.MemoryPerCPU = v0044.NewOptV0044Uint64NoValStruct(mbStruct(o.MemPerCPU.Val))
	}
	if o.TmpDisk.Set {
		d.TemporaryDiskPerNode = v0044.NewOptInt32(int32(min(o.TmpDisk.Val, math.MaxInt32)))
	}
	if o.Switches.Set {
		d.RequiredSwitches = v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
			Set: v0044.NewOptBool(true), Number: v0044.NewOptInt32(int32(o.Switches.Val)),
		})
	}
	i32(&d.WaitForSwitch, o.SwitchWait)
	str(&d.Wckey, o.WCKey)
	str(&d.SelinuxContext, o.Context)
	str(&d.StandardOutput, o.Output)
	str(&d.StandardError, o.Error)
	str(&d.StandardInput, o.Input)
	if o.Requeue.Set {
		d.Requeue = v0044.NewOptBool(o.Requeue.Val)
	}
	if o.WaitAllNodes.Set {
		d.WaitAllNodes = v0044.NewOptBool(o.WaitAllNodes.Val == 1)
	}
	return d
}

// jobFlags lists the job_desc bit flags the options set, in the REST
// schema's order.
func (o *Options) jobFlags() []v0044.V0044JobDescMsgFlagsItem {
	var fl []v0044.V0044JobDescMsgFlagsItem
	add := func(on bool, f v0044.V0044JobDescMsgFlagsItem) {
		if on {
			fl = append(fl, f)
		}
	}
	add(o.KillInvDep.Set && o.KillInvDep.Val, v0044.V0044JobDescMsgFlagsItemKILLINVALIDDEPENDENCY)
	add(o.KillInvDep.Set && !o.KillInvDep.Val, v0044.V0044JobDescMsgFlagsItemNOKILLINVALIDDEPENDENCY)
	add(o.GRESEnforceBind, v0044.V0044JobDescMsgFlagsItemGRESBINDINGENFORCED)
	add(o.SpreadJob, v0044.V0044JobDescMsgFlagsItemSPREADJOB)
	add(o.UseMinNodes, v0044.V0044JobDescMsgFlagsItemPREFERMINIMUMNODECOUNT)
	add(o.Ntasks.Set, v0044.V0044JobDescMsgFlagsItemEXACTTASKCOUNTREQUESTED)
	add(o.CPUsPerTask.Set, v0044.V0044JobDescMsgFlagsItemEXACTCPUCOUNTREQUESTED)
	add(o.GRESDisableBind, v0044.V0044JobDescMsgFlagsItemGRESBINDINGDISABLED)
	add(o.StepMgr, v0044.V0044JobDescMsgFlagsItemSTEPMGRENABLED)
	add(o.SpreadSegments, v0044.V0044JobDescMsgFlagsItemSPREADSEGMENTS)
	add(o.Consolidate, v0044.V0044JobDescMsgFlagsItemCONSOLIDATESEGMENTS)
	add(o.Expedite, v0044.V0044JobDescMsgFlagsItemEXPEDITEDREQUEUE)
	return fl
}

// minCPUs is the job's minimum CPU count as sbatch computes it from the
// task estimate: tasks times --cpus-per-task, one per node with
// --overcommit, zero for a zero-node job.
func (o *Options) minCPUs() int {
	minNodes := 1
	if o.Nodes.Set {
		minNodes = o.Nodes.Val.Min
	}
	tasks := 1
	switch {
	case o.Ntasks.Set:
		tasks = o.Ntasks.Val
	case o.impliedTasks > 0:
		tasks = o.impliedTasks
	}
	if o.NtasksPerNode.Set && o.NtasksPerNode.Val > 0 && !o.Ntasks.Set &&
		(!o.Nodes.Set || o.Nodes.Val.Min == o.Nodes.Val.Max || o.Nodes.Val.Max == 0) {
		tasks = minNodes * o.NtasksPerNode.Val
	}
	switch {
	case o.Overcommit:
		return max(minNodes, 1)
	case o.CPUsPerTask.Set:
		return tasks * o.CPUsPerTask.Val
	case o.Nodes.Set && minNodes == 0:
		return 0
	}
	return tasks
}

// nodeCounts fills minimum_nodes, maximum_nodes and nodes as sbatch does:
// from --nodes, or from the task count and --ntasks-per-node.
func (o *Options) nodeCounts(d *v0044.V0044JobDescMsg) {
	switch {
	case o.Nodes.Set:
		n := o.Nodes.Val
		d.MinimumNodes = v0044.NewOptInt32(int32(n.Min))
		if n.Max != 0 {
			d.MaximumNodes = v0044.NewOptInt32(int32(n.Max))
			if n.Sizes != "" {
				d.Nodes = v0044.NewOptString(n.Sizes)
			}
		}
	case o.Ntasks.Set && o.NtasksPerNode.Set && o.NtasksPerNode.Val > 0:
		per := o.NtasksPerNode.Val
		d.MinimumNodes = v0044.NewOptInt32(int32((o.Ntasks.Val + per - 1) / per))
	}
}

// requiredNodes is the node list as sbatch sends it: expanded, sorted,
// without duplicates and compressed again ("n[1-3]"), unless the list uses
// a syntax only slurmctld understands.
func (o *Options) requiredNodes() string {
	if strings.Contains(o.NodeList, "{") {
		return o.NodeList
	}
	names, err := hostlist.Expand(o.NodeList)
	if err != nil {
		return o.NodeList
	}
	if o.Distribution == "arbitrary" {
		return hostlist.Compress(names)
	}
	return hostlist.CompressSorted(uniqueHosts(names))
}

func limitStruct(l timefmt.Limit) v0044.V0044Uint32NoValStruct {
	if l.Infinite {
		return v0044.V0044Uint32NoValStruct{Set: v0044.NewOptBool(false), Infinite: v0044.NewOptBool(true)}
	}
	return v0044.V0044Uint32NoValStruct{
		Set: v0044.NewOptBool(true), Infinite: v0044.NewOptBool(false),
		Number: v0044.NewOptInt32(int32(min(l.Minutes, math.MaxInt32))),
	}
}

func mbStruct(mb uint64) v0044.V0044Uint64NoValStruct {
	return v0044.V0044Uint64NoValStruct{
		Set: v0044.NewOptBool(true), Number: v0044.NewOptInt64(int64(min(mb, math.MaxInt64))),
	}
}

// fmtTRES is Slurm's xfmt_tres: each comma-separated entry of src prefixed
// with prefix and ':' ("2" gives "gres/gpu:2", "a100:1,v100:2" gives
// "gres/gpu:a100:1,gres/gpu:v100:2").
func fmtTRES(prefix, src string) string {
	if src == "" {
		return ""
	}
	var parts []string
	for tok := range strings.SplitSeq(src, ",") {
		if tok != "" {
			parts = append(parts, prefix+":"+tok)
		}
	}
	return strings.Join(parts, ",")
}
