package readmodel

import (
	"strings"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Node is one node record as scontrol and sinfo read it. Counts keep the
// widths and signs slurmrestd gives them (sinfo widens them as its C
// original does); strings are "" where slurmctld has NULL; timestamps are
// seconds since the epoch, 0 when unset and int64(Infinite) when
// slurmrestd reports INFINITE, since scontrol prints the two apart.
type Node struct {
	Name string
	Arch string
	OS   string

	// State is the state list encoded as slurmctld holds it. NoBaseState
	// marks a list without a base state (State reads UNKNOWN, scontrol
	// prints INVALID) and UnknownStates counts the names the encoding
	// does not know, each a "+?" in scontrol's complete state.
	State         NodeState
	NoBaseState   bool
	UnknownStates int
	// NextState is next_state_after_reboot as slurmrestd spells it.
	NextState []string

	CPUs, EffectiveCPUs, AllocCPUs  int32
	Sockets, Cores, Threads, Boards int32
	// CPULoad is the load in hundredths; CPULoadSet is false when the
	// record has none.
	CPULoad    int32
	CPULoadSet bool

	RealMemory, AllocMemory int64
	// FreeMem is free_mem in MB, NoVal64 or Infinite64.
	FreeMem uint64
	TmpDisk int32
	Weight  int32
	Port    int32

	Features, ActiveFeatures string
	Gres                     string
	// GresDrain and GresUsed come with SHOW_DETAIL; the Set members say
	// whether the record carried them at all.
	GresDrain, GresUsed       string
	GresDrainSet, GresUsedSet bool

	Address, Hostname, Version string

	SpecCores      int32
	SpecCPUs       string
	SpecMemory     int64
	ResCoresPerGPU int32
	GPUSpec        string

	Owner, MCSLabel string
	Partitions      []string

	BootTime, SlurmdStartTime, LastBusy, ResumeAfter int64
	TRES, TRESUsed                                   string

	// CurrentWatts is NoVal when the record has no energy data.
	CurrentWatts uint32
	AveWatts     int32

	Reason     string
	ReasonTime int64
	// ReasonUser names who set the reason; "" stands for NO_VAL.
	ReasonUser string

	Comment, Extra, InstanceID, InstanceType, Reservation, Topology string

	// CertFlags lists cert_flags as slurmrestd spells them ("TOKEN_SET").
	CertFlags          []string
	TLSCertLastRenewal int64
}

// StateComplete is node_state_string_complete over the record's list as
// scontrol prints it: "IDLE+DRAIN", INVALID for a missing base state and
// "+?" for each name Slurm's table does not hold.
func (n *Node) StateComplete() string {
	return n.State.complete(n.NoBaseState, n.UnknownStates)
}

// FromV0044Node reads one slurmrestd v0.0.44 node record.
func FromV0044Node(w *v0044.V0044Node) Node {
	names := make([]string, len(w.State))
	for i, s := range w.State {
		names[i] = string(s)
	}
	n := Node{
		Name: w.Name.Or(""),
		Arch: w.Architecture.Or(""),
		OS:   w.OperatingSystem.Or(""),

		CPUs:          w.Cpus.Or(0),
		EffectiveCPUs: w.EffectiveCpus.Or(0),
		AllocCPUs:     w.AllocCpus.Or(0),
		Sockets:       w.Sockets.Or(0),
		Cores:         w.Cores.Or(0),
		Threads:       w.Threads.Or(0),
		Boards:        w.Boards.Or(0),
		CPULoad:       w.CPULoad.Or(0),
		CPULoadSet:    w.CPULoad.Set,

		RealMemory:  w.RealMemory.Or(0),
		AllocMemory: w.AllocMemory.Or(0),
		FreeMem:     u64(w.FreeMem),
		TmpDisk:     w.TemporaryDisk.Or(0),
		Weight:      w.Weight.Or(0),
		Port:        w.Port.Or(0),

		Features:       strings.Join(w.Features, ","),
		ActiveFeatures: strings.Join(w.ActiveFeatures, ","),
		Gres:           w.Gres.Or(""),
		GresDrain:      w.GresDrained.Or(""),
		GresDrainSet:   w.GresDrained.Set,
		GresUsed:       w.GresUsed.Or(""),
		GresUsedSet:    w.GresUsed.Set,

		Address:  w.Address.Or(""),
		Hostname: w.Hostname.Or(""),
		Version:  w.Version.Or(""),

		SpecCores:      w.SpecializedCores.Or(0),
		SpecCPUs:       w.SpecializedCpus.Or(""),
		SpecMemory:     w.SpecializedMemory.Or(0),
		ResCoresPerGPU: w.ResCoresPerGpu.Or(0),
		GPUSpec:        w.GpuSpec.Or(""),

		Owner:      w.Owner.Or(""),
		MCSLabel:   w.McsLabel.Or(""),
		Partitions: w.Partitions,

		BootTime:        slurmTime(w.BootTime),
		SlurmdStartTime: slurmTime(w.SlurmdStartTime),
		LastBusy:        slurmTime(w.LastBusy),
		ResumeAfter:     slurmTime(w.ResumeAfter),
		TRES:            w.Tres.Or(""),
		TRESUsed:        w.TresUsed.Or(""),

		CurrentWatts: NoVal,

		Reason:     w.Reason.Or(""),
		ReasonTime: slurmTime(w.ReasonChangedAt),
		ReasonUser: w.ReasonSetByUser.Or(""),

		Comment:      w.Comment.Or(""),
		Extra:        w.Extra.Or(""),
		InstanceID:   w.InstanceID.Or(""),
		InstanceType: w.InstanceType.Or(""),
		Reservation:  w.Reservation.Or(""),
		Topology:     w.Topology.Or(""),

		TLSCertLastRenewal: slurmTime(w.TLSCertLastRenewal),
	}
	n.State, n.NoBaseState, n.UnknownStates = NodeStateFromWire(names)
	for _, s := range w.NextStateAfterReboot {
		n.NextState = append(n.NextState, string(s))
	}
	for _, f := range w.CertFlags {
		n.CertFlags = append(n.CertFlags, string(f))
	}
	if e, ok := w.Energy.Get(); ok {
		n.CurrentWatts = u32(e.CurrentWatts)
		n.AveWatts = e.AverageWatts.Or(0)
	}
	return n
}

// FromV0044Nodes reads a REST node list, in its order.
func FromV0044Nodes(ws []v0044.V0044Node) []Node {
	out := make([]Node, len(ws))
	for i := range ws {
		out[i] = FromV0044Node(&ws[i])
	}
	return out
}
