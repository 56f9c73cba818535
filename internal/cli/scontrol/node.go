package scontrol

import (
	"slices"
	"strings"

	"github.com/droverhq/drover/internal/cli/readmodel"
)

// nodeView carries what the node layout needs besides the node.
type nodeView struct {
	oneLiner bool
	detail   bool
	timeStr  func(int64) string
	// slurmdPort is slurm.conf's SlurmdPort: nodes listening elsewhere
	// print Port=. knownPort is false when no slurm.conf was read, in which
	// case Port= is left out rather than guessed.
	slurmdPort int
	knownPort  bool
}

// formatNode prints one node in `scontrol show node` layout
// (slurm_sprint_node_table).
func formatNode(n *readmodel.Node, v nodeView) string {
	w := newLineWriter(v.oneLiner)

	w.printf("NodeName=%s ", n.Name)
	if n.Arch != "" {
		w.printf("Arch=%s ", n.Arch)
	}
	w.printf("CoresPerSocket=%d ", n.Cores)
	w.end()

	w.printf("CPUAlloc=%d CPUEfctv=%d CPUTot=%d ", n.AllocCPUs, n.EffectiveCPUs, n.CPUs)
	w.printf("CPULoad=%.2f", float64(n.CPULoad)/100.0)
	w.end()

	w.printf("AvailableFeatures=%s", orNull(n.Features))
	w.end()
	w.printf("ActiveFeatures=%s", orNull(n.ActiveFeatures))
	w.end()
	w.printf("Gres=%s", orNull(n.Gres))
	w.end()
	// slurmctld sends the drained and used GRES only with SHOW_DETAIL.
	if v.detail {
		if n.GresDrainSet {
			w.printf("GresDrain=%s", n.GresDrain)
			w.end()
		}
		if n.GresUsedSet {
			w.printf("GresUsed=%s", n.GresUsed)
			w.end()
		}
	}

	used := false
	if n.Address != "" {
		w.printf("NodeAddr=%s ", n.Address)
		used = true
	}
	if n.Hostname != "" {
		w.printf("NodeHostName=%s ", n.Hostname)
		used = true
	}
	if p := int(n.Port); v.knownPort && p != v.slurmdPort {
		w.printf("Port=%d ", p)
		used = true
	}
	if n.Version != "" {
		w.printf("Version=%s", n.Version)
		used = true
	}
	if used {
		w.end()
	}

	if n.OS != "" {
		w.printf("OS=%s ", n.OS)
		w.end()
	}

	w.printf("RealMemory=%d AllocMem=%d ", n.RealMemory, n.AllocMemory)
	if fm := n.FreeMem; fm == noVal64 || fm == infinite64 {
		w.printf("FreeMem=N/A ")
	} else {
		w.printf("FreeMem=%d ", fm)
	}
	w.printf("Sockets=%d Boards=%d", n.Sockets, n.Boards)
	w.end()

	if n.SpecCores != 0 || n.SpecCPUs != "" || n.SpecMemory != 0 {
		if n.SpecCores != 0 {
			w.printf("CoreSpecCount=%d ", n.SpecCores)
		}
		if n.SpecCPUs != "" {
			w.printf("CPUSpecList=%s ", n.SpecCPUs)
		}
		if n.SpecMemory != 0 {
			w.printf("MemSpecLimit=%d", n.SpecMemory)
		}
		w.end()
	}
	if n.ResCoresPerGPU != 0 {
		w.printf("RestrictedCoresPerGPU=%d(%s) ", n.ResCoresPerGPU, orNull(n.GPUSpec))
		w.end()
	}

	owner := "N/A"
	if n.Owner != "" {
		owner = n.Owner
	}
	mcs := n.MCSLabel
	if mcs == "" {
		mcs = "N/A"
	}
	w.printf("State=%s ThreadsPerCore=%d TmpDisk=%d Weight=%d Owner=%s MCS_label=%s",
		n.StateComplete(), n.Threads, n.TmpDisk, n.Weight, owner, mcs)
	w.end()

	if next := n.NextState; len(next) > 0 && next[0] != "INVALID" && n.State.Has(readmodel.NodeRebootRequested|readmodel.NodeRebootIssued) {
		w.printf("NextState=%s", strings.Join(next, "+"))
		w.end()
	}

	if len(n.Partitions) > 0 {
		w.printf("Partitions=%s ", strings.Join(n.Partitions, ","))
		w.end()
	}

	if n.BootTime != 0 {
		w.printf("BootTime=%s ", v.timeStr(n.BootTime))
	} else {
		w.printf("BootTime=None ")
	}
	if n.SlurmdStartTime != 0 {
		w.printf("SlurmdStartTime=%s", v.timeStr(n.SlurmdStartTime))
	} else {
		w.printf("SlurmdStartTime=None")
	}
	w.end()

	w.printf("LastBusyTime=%s ", v.timeStr(n.LastBusy))
	if n.ResumeAfter != 0 {
		w.printf("ResumeAfterTime=%s", v.timeStr(n.ResumeAfter))
	} else {
		w.printf("ResumeAfterTime=None")
	}
	w.end()

	w.printf("CfgTRES=%s", orNull(n.TRES))
	w.end()
	w.printf("AllocTRES=%s", n.TRESUsed)
	w.end()

	if n.CurrentWatts == noVal {
		w.printf("CurrentWatts=n/a AveWatts=n/a")
	} else {
		w.printf("CurrentWatts=%d AveWatts=%d", n.CurrentWatts, n.AveWatts)
	}

	if n.Reason != "" {
		for i, tok := range strings.Split(n.Reason, "\n") {
			if tok == "" {
				continue
			}
			w.end()
			if i == 0 {
				w.printf("Reason=%s", tok)
				if n.ReasonTime != 0 {
					w.printf(" [%s@%s]", orNull(n.ReasonUser), v.timeStr(n.ReasonTime))
				}
			} else {
				w.printf("       %s", tok)
			}
		}
	}
	for _, f := range []struct{ key, val string }{
		{"Comment", n.Comment},
		{"Extra", n.Extra},
	} {
		if f.val != "" {
			w.end()
			w.printf("%s=%s", f.key, f.val)
		}
	}
	if n.InstanceID != "" || n.InstanceType != "" {
		w.end()
		if n.InstanceID != "" {
			w.printf("InstanceId=%s ", n.InstanceID)
		}
		if n.InstanceType != "" {
			w.printf("InstanceType=%s", n.InstanceType)
		}
	}
	if n.Reservation != "" {
		w.end()
		w.printf("ReservationName=%s", n.Reservation)
	}
	if renewal := n.TLSCertLastRenewal; len(n.CertFlags) > 0 || renewal != 0 {
		w.end()
		token := "No"
		if slices.Contains(n.CertFlags, "TOKEN_SET") {
			token = "Yes"
		}
		w.printf("TLSCertTokenSet=%s TLSCertLastRenewal=%s", token, v.timeStr(renewal))
	}
	if n.Topology != "" {
		w.end()
		w.printf("Topology=%s", n.Topology)
	}
	if v.oneLiner {
		return w.b.String() + "\n"
	}
	return w.b.String() + "\n\n"
}
