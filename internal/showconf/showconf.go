// Package showconf is slurm.conf as `scontrol show config` and
// slurmrestd's conf dump show it: every setting slurmctld reports, in its
// order, with Slurm's defaults for what slurm.conf leaves out and the
// values it computes (AccountingStorageTRES completed, SlurmUser with its
// id...).
package showconf

import (
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/slurmconf"
)

// key is one line of `scontrol show config`: its name as printed,
// the slurm.conf setting it reflects (the same name unless conf says
// otherwise), Slurm's default and the unit printed after numbers.
type key struct {
	name string
	conf string
	def  string
	unit string
	// show, when set, decides whether the line is printed at all.
	show func(Source) bool
	// value, when set, computes the value instead of the generic lookup.
	value func(*Source) string
}

// Source is what the values are computed from.
type Source struct {
	// Path is slurm.conf's path (SLURM_CONF); Conf what it says, nil when
	// it could not be read (Slurm's defaults are shown then).
	Path string
	Conf *slurmconf.Config
	// BootTime and Version are the controller's, as printed.
	BootTime string
	Version  string
}

// Get returns the value of a global setting as written, "" when unset.
func (s Source) Get(key string) string {
	if s.Conf == nil {
		return ""
	}
	v, _ := s.Conf.Value(key)
	return v
}

// GetDefault returns a setting, or def when unset.
func (s Source) GetDefault(key, def string) string {
	if v := s.Get(key); v != "" {
		return v
	}
	return def
}

// Bool reads a yes/no setting as Slurm does.
func (s Source) Bool(key string) bool {
	switch strings.ToLower(s.Get(key)) {
	case "yes", "true", "1", "y":
		return true
	}
	return false
}

// Line is one setting: its name and its value as scontrol prints it
// ("(null)" when unset, numbers with their unit).
type Line struct {
	Name, Value string
	// Raw is the value without unit, "" when unset.
	Raw string
}

// Lines lists the settings slurmctld reports, in its order.
func Lines(src Source) []Line {
	var out []Line
	for _, k := range keys {
		if k.show != nil && !k.show(src) {
			continue
		}
		v := configValue(k, &src)
		raw := v
		if v == "(null)" {
			raw = ""
		} else if k.unit != "" {
			raw = strings.TrimSuffix(v, " "+k.unit)
		}
		out = append(out, Line{Name: configName(k, src), Value: v, Raw: raw})
	}
	return out
}

func notBasicPriority(l Source) bool {
	return l.GetDefault("PriorityType", "priority/multifactor") != "priority/basic"
}

// keys is slurm_ctl_conf_2_key_pairs's list in its order, with
// Slurm 25.11's defaults for settings missing from slurm.conf.
var keys = []key{
	{name: "AccountingStorageBackupHost"},
	{name: "AccountingStorageEnforce", def: "none"},
	{name: "AccountingStorageHost"},
	{name: "AccountingStorageExternalHost"},
	{name: "AccountingStorageParameters"},
	{name: "AccountingStoragePort", def: "0"},
	{name: "AccountingStorageTRES", value: accountingTRES},
	{name: "AccountingStorageType"},
	{name: "AccountingStoreFlags"},
	{name: "AcctGatherEnergyType"},
	{name: "AcctGatherFilesystemType"},
	{name: "AcctGatherInterconnectType"},
	{name: "AcctGatherNodeFreq", def: "0", unit: "sec"},
	{name: "AcctGatherProfileType"},
	{name: "AllowSpecResourcesUsage", def: "no", value: boolValue("AllowSpecResourcesUsage")},
	{name: "AuthAltTypes"},
	{name: "AuthAltParameters"},
	{name: "AuthInfo"},
	{name: "AuthType", def: "auth/munge"},
	{name: "BatchStartTimeout", def: "10", unit: "sec"},
	{name: "BcastExclude", def: "/lib,/usr/lib,/lib64,/usr/lib64"},
	{name: "BcastParameters"},
	{name: "BOOT_TIME", value: func(c *Source) string { return c.BootTime }},
	{name: "BurstBufferType"},
	{name: "CertgenParameters"},
	{name: "CertgenType"},
	{name: "CertmgrParameters"},
	{name: "CertmgrType"},
	{name: "CliFilterParameters"},
	{name: "CliFilterPlugins"},
	{name: "ClusterName"},
	{name: "CommunicationParameters"},
	{name: "CompleteWait", def: "0", unit: "sec"},
	{name: "CpuFreqDef", def: "Unknown"},
	{name: "CpuFreqGovernors", def: "OnDemand,Performance,UserSpace"},
	{name: "CredType", def: "cred/munge"},
	{name: "DataParserParameters"},
	{name: "DebugFlags"},
	{name: "DefMemPerNode", value: func(c *Source) string { return memPerValue(*c, "DefMemPerCPU", "DefMemPerNode") }},
	{name: "DependencyParameters"},
	{name: "DisableRootJobs", value: boolValue("DisableRootJobs")},
	{name: "EioTimeout", def: "60"},
	{name: "EnforcePartLimits", def: "NO", value: func(c *Source) string {
		return strings.ToUpper(c.GetDefault("EnforcePartLimits", "NO"))
	}},
	{name: "EpilogMsgTime", def: "2000", unit: "usec"},
	{name: "FairShareDampeningFactor", def: "1", show: notBasicPriority},
	{name: "FederationParameters"},
	{name: "FirstJobId", def: "1"},
	{name: "GresTypes"},
	{name: "GpuFreqDef"},
	{name: "GroupUpdateForce", def: "1"},
	{name: "GroupUpdateTime", def: "600", unit: "sec"},
	{name: "HASH_VAL", value: func(*Source) string { return "Match" }},
	{name: "HashPlugin", def: "hash/k12"},
	{name: "HealthCheckInterval", def: "0", unit: "sec"},
	{name: "HealthCheckNodeState", def: "ANY"},
	{name: "HealthCheckProgram"},
	{name: "HttpParserType"},
	{name: "InactiveLimit", def: "0", unit: "sec"},
	{name: "InteractiveStepOptions", def: "--interactive --preserve-env --pty $SHELL"},
	{name: "JobAcctGatherFrequency", def: "30"},
	{name: "JobAcctGatherType"},
	{name: "JobAcctGatherParams"},
	{name: "JobCompHost", def: "localhost"},
	{name: "JobCompLoc"},
	{name: "JobCompParams"},
	{name: "JobCompPass"},
	{name: "JobCompPort", def: "0"},
	{name: "JobCompType"},
	{name: "JobCompUser", def: "root"},
	{name: "JobDefaults"},
	{name: "JobFileAppend", def: "0"},
	{name: "JobRequeue", def: "1"},
	{name: "JobSubmitPlugins"},
	{name: "KillOnBadExit", def: "0"},
	{name: "KillWait", def: "30", unit: "sec"},
	{name: "LaunchParameters"},
	{name: "Licenses"},
	{name: "LogTimeFormat", def: "iso8601_ms"},
	{name: "MailDomain"},
	{name: "MailProg", def: "/bin/mail"},
	{name: "MaxArraySize", def: "1001"},
	{name: "MaxBatchRequeue", def: "5"},
	{name: "MaxDBDMsgs", def: "20000"},
	{name: "MaxJobCount", def: "10000"},
	{name: "MaxJobId", def: "67043328"},
	{name: "MaxMemPerNode", value: func(c *Source) string { return memPerValue(*c, "MaxMemPerCPU", "MaxMemPerNode") }},
	{name: "MaxNodeCount", def: "0"},
	{name: "MaxStepCount", def: "40000"},
	{name: "MaxTasksPerNode", def: "512"},
	{name: "MCSPlugin"},
	{name: "MCSParameters"},
	{name: "MessageTimeout", def: "10", unit: "sec"},
	{name: "MetricsType"},
	{name: "MinJobAge", def: "300", unit: "sec"},
	{name: "MpiDefault", def: "none"},
	{name: "MpiParams"},
	{name: "NamespaceType"},
	{name: "NodeFeaturesPlugins"},
	{name: "OverTimeLimit", def: "0", unit: "min"},
	{name: "PluginDir", def: "/usr/lib/slurm"},
	{name: "PlugStackConfig"},
	{name: "PreemptMode", def: "OFF", value: func(c *Source) string {
		return strings.ToUpper(c.GetDefault("PreemptMode", "OFF"))
	}},
	{name: "PreemptParameters"},
	{name: "PreemptType"},
	{name: "PreemptExemptTime", def: "00:00:00"},
	{name: "PrEpParameters"},
	{name: "PrEpPlugins", def: "prep/script"},
	{name: "PriorityParameters"},
	{name: "PrioritySiteFactorParameters"},
	{name: "PrioritySiteFactorPlugin"},
	{name: "PriorityDecayHalfLife", def: "7-00:00:00", show: notBasicPriority},
	{name: "PriorityCalcPeriod", def: "00:05:00", show: notBasicPriority},
	{name: "PriorityFavorSmall", show: notBasicPriority, value: boolValue("PriorityFavorSmall")},
	{name: "PriorityFlags", show: notBasicPriority},
	{name: "PriorityMaxAge", def: "7-00:00:00", show: notBasicPriority},
	{name: "PriorityType", def: "priority/multifactor"},
	{name: "PriorityUsageResetPeriod", def: "NONE", show: notBasicPriority},
	{name: "PriorityWeightAge", def: "0", show: notBasicPriority},
	{name: "PriorityWeightAssoc", def: "0", show: notBasicPriority},
	{name: "PriorityWeightFairShare", def: "0", show: notBasicPriority},
	{name: "PriorityWeightJobSize", def: "0", show: notBasicPriority},
	{name: "PriorityWeightPartition", def: "0", show: notBasicPriority},
	{name: "PriorityWeightQOS", def: "0", show: notBasicPriority},
	{name: "PriorityWeightTRES", show: notBasicPriority},
	{name: "PrivateData", def: "none"},
	{name: "ProctrackType", def: "proctrack/cgroup"},
	{name: "PrologEpilogTimeout", def: "65534"},
	{name: "PrologFlags"},
	{name: "PropagatePrioProcess", def: "0"},
	{name: "PropagateResourceLimits", def: "ALL"},
	{name: "PropagateResourceLimitsExcept"},
	{name: "RebootProgram"},
	{name: "ReconfigFlags"},
	{name: "RequeueExit"},
	{name: "RequeueExitHold"},
	{name: "ResumeFailProgram"},
	{name: "ResumeProgram"},
	{name: "ResumeRate", def: "300", unit: "nodes/min"},
	{name: "ResumeTimeout", def: "60", unit: "sec"},
	{name: "ResvEpilog"},
	{name: "ResvOverRun", def: "0", unit: "min"},
	{name: "ResvProlog"},
	{name: "ReturnToService", def: "1"},
	{name: "SchedulerParameters"},
	{name: "SchedulerTimeSlice", def: "30", unit: "sec"},
	{name: "SchedulerType", def: "sched/backfill"},
	{name: "ScronParameters"},
	{name: "SelectType", def: "select/cons_tres"},
	{name: "SelectTypeParameters", show: func(l Source) bool { return l.Get("SelectTypeParameters") != "" },
		value: func(c *Source) string { return strings.ToUpper(c.Get("SelectTypeParameters")) }},
	{name: "SlurmUser", value: func(c *Source) string { return userWithID(c.GetDefault("SlurmUser", "root")) }},
	{name: "SlurmctldAddr"},
	{name: "SlurmctldDebug", def: "info"},
	{name: "SlurmctldHost[0]", value: func(c *Source) string {
		h := c.Get("SlurmctldHost")
		if h == "" {
			h = c.Get("ControlMachine")
		}
		return orNull(h)
	}},
	{name: "SlurmctldLogFile"},
	{name: "SlurmctldPort", def: "6817"},
	{name: "SlurmctldSyslogDebug"},
	{name: "SlurmctldPrimaryOffProg"},
	{name: "SlurmctldPrimaryOnProg"},
	{name: "SlurmctldTimeout", def: "120", unit: "sec"},
	{name: "SlurmctldParameters"},
	{name: "SlurmdDebug", def: "info"},
	{name: "SlurmdLogFile"},
	{name: "SlurmdParameters"},
	{name: "SlurmdPidFile", def: "/var/run/slurmd.pid"},
	{name: "SlurmdPort", def: "6818"},
	{name: "SlurmdSpoolDir", def: "/var/spool/slurmd"},
	{name: "SlurmdSyslogDebug"},
	{name: "SlurmdTimeout", def: "300", unit: "sec"},
	{name: "SlurmdUser", value: func(c *Source) string { return userWithID(c.GetDefault("SlurmdUser", "root")) }},
	{name: "SlurmSchedLogFile"},
	{name: "SlurmSchedLogLevel", def: "0"},
	{name: "SlurmctldPidFile", def: "/var/run/slurmctld.pid"},
	{name: "SLURM_CONF", value: func(c *Source) string { return c.Path }},
	{name: "SLURM_VERSION", value: func(c *Source) string { return c.Version }},
	{name: "SrunEpilog"},
	{name: "SrunPortRange", def: "0-0"},
	{name: "SrunProlog"},
	{name: "StateSaveLocation", def: "/var/spool/slurmctld"},
	{name: "SuspendExcNodes"},
	{name: "SuspendExcParts"},
	{name: "SuspendExcStates"},
	{name: "SuspendProgram"},
	{name: "SuspendRate", def: "60", unit: "nodes/min"},
	{name: "SuspendTime", value: func(c *Source) string {
		v := c.Get("SuspendTime")
		if v == "" || strings.EqualFold(v, "INFINITE") || v == "-1" || strings.EqualFold(v, "NONE") {
			return "INFINITE"
		}
		return v + " sec"
	}},
	{name: "SuspendTimeout", def: "30", unit: "sec"},
	{name: "SwitchParameters"},
	{name: "SwitchType"},
	{name: "TaskEpilog"},
	{name: "TaskPlugin"},
	{name: "TaskPluginParam", def: "(null type)"},
	{name: "TaskProlog"},
	{name: "TCPTimeout", def: "2", unit: "sec"},
	{name: "TLSParameters"},
	{name: "TLSType", def: "tls/none"},
	{name: "TmpFS", def: "/tmp"},
	{name: "TopologyParam"},
	{name: "TopologyPlugin", def: "topology/flat"},
	{name: "TrackWCKey", value: boolValue("TrackWCKey")},
	{name: "TreeWidth", def: "16"},
	{name: "UsePam", value: boolValue("UsePam")},
	{name: "UnkillableStepProgram"},
	{name: "UnkillableStepTimeout", def: "60", unit: "sec"},
	{name: "UrlParserType"},
	{name: "VSizeFactor", def: "0", unit: "percent"},
	{name: "WaitTime", def: "0", unit: "sec"},
	{name: "X11Parameters"},
}

// boolValue prints a yes/no setting as add_key_pair_bool does.
func boolValue(key string) func(*Source) string {
	return func(c *Source) string {
		if c.Bool(key) {
			return "yes"
		}
		return "no"
	}
}

// userWithID prints SlurmUser/SlurmdUser as "name(uid)"; the uid of
// names other than root is not known to a REST client and prints as the
// name alone.
func userWithID(name string) string {
	if name == "root" {
		return "root(0)"
	}
	if _, err := strconv.Atoi(name); err == nil {
		return name + "(" + name + ")"
	}
	return name
}

// memPerValue prints DefMemPerCPU/DefMemPerNode (or the Max variants):
// whichever slurm.conf sets, UNLIMITED when neither.
func memPerValue(l Source, perCPU, perNode string) string {
	if v := l.Get(perCPU); v != "" && v != "0" && !strings.EqualFold(v, "UNLIMITED") {
		return v
	}
	if v := l.Get(perNode); v != "" && v != "0" && !strings.EqualFold(v, "UNLIMITED") {
		return v
	}
	return "UNLIMITED"
}

// configName returns the key printed for DefMemPer*/MaxMemPer* lines,
// which depend on the setting used.
func configName(k key, l Source) string {
	switch k.name {
	case "DefMemPerNode":
		if v := l.Get("DefMemPerCPU"); v != "" && v != "0" && !strings.EqualFold(v, "UNLIMITED") {
			return "DefMemPerCPU"
		}
	case "MaxMemPerNode":
		if v := l.Get("MaxMemPerCPU"); v != "" && v != "0" && !strings.EqualFold(v, "UNLIMITED") {
			return "MaxMemPerCPU"
		}
	}
	return k.name
}

// accountingTRES is AccountingStorageTRES as slurmctld completes it: the
// default TRES first, then the configured ones, with the GPU memory and
// utilisation TRES added after gres/gpu.
func accountingTRES(c *Source) string {
	return strings.Join(slurmconf.AccountingTRES(c.Get("AccountingStorageTRES")), ",")
}

// pluginValue prints a plugin setting: Slurm drops "<type>/none" plugins,
// which print as (null).
func pluginValue(v string) string {
	if strings.HasSuffix(v, "/none") {
		return ""
	}
	return v
}

// configValue computes one line's value.
func configValue(k key, ctx *Source) string {
	if k.value != nil {
		return k.value(ctx)
	}
	name := k.conf
	if name == "" {
		name = k.name
	}
	v := pluginValue(ctx.Get(name))
	if v == "" {
		v = k.def
	}
	if v == "" {
		return "(null)"
	}
	if k.unit != "" {
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return v + " " + k.unit
		}
	}
	return v
}

func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}
