// Package node holds the domain model of a compute node: its configured and
// reported hardware, its administrative and health state, and the state
// names Slurm shows for them.
package node

import (
	"strings"
	"time"
)

// GPU is one GPU a node offers.
type GPU struct {
	Index int
	Type  string
	Minor int
	File  string
	UUID  string
	// Cores is the CPU list near the GPU ("0-15"), for gres.conf Cores=.
	Cores string
	// Links are the GPU's NVLink counts to the node's other GPUs, by
	// device index (-1 for itself); nil when unknown. Shared between
	// copies of the node: replaced, never changed in place.
	Links []int
}

// Node is a compute node as the controller knows it.
type Node struct {
	Name     string
	Addr     string
	Hostname string
	Port     int

	// Configured hardware (slurm.conf NodeName lines).
	CPUs           uint32
	Boards         uint32
	Sockets        uint32
	CoresPerSocket uint32
	ThreadsPerCore uint32
	RealMemory     uint64 // MB
	Features       []string
	Weight         uint32
	// GPUs are the devices the node offers to jobs, from gres.conf or the
	// node daemon's discovery.
	GPUs []GPU
	// GresConf is the node's configured Gres= list as written.
	GresConf []string

	// Administrative state: set by scontrol/REST, kept across restarts.
	Drain      bool
	Down       bool
	Future     bool
	Reason     string
	ReasonUID  uint32
	ReasonTime time.Time

	// Health state, reported by the node daemon (volatile).
	Registered    bool
	Responding    bool
	LastHeartbeat time.Time
	BootTime      time.Time
	SlurmdStart   time.Time
	Version       string
	Arch          string
	OS            string
	// DaemonAddr is where the node daemon listens (host:port).
	DaemonAddr string
	// FreeMemMB is what the node last reported as free.
	FreeMemMB uint64
	CPULoad   float64
}

// Alloc is the share of a node held by running jobs, derived from the jobs.
type Alloc struct {
	CPUs  uint32
	MemMB uint64
	GPUs  []bool // by device index
	Jobs  int
}

// Usable reports whether the scheduler may start new jobs on the node.
func (n *Node) Usable() bool {
	return n.Registered && n.Responding && !n.Drain && !n.Down && !n.Future
}

// GPUTypes returns the distinct GPU types offered, in index order.
func (n *Node) GPUTypes() []string {
	var out []string
	seen := map[string]bool{}
	for _, g := range n.GPUs {
		if !seen[g.Type] {
			seen[g.Type] = true
			out = append(out, g.Type)
		}
	}
	return out
}

// StateFlags returns the node state as REST's state list and sinfo's long
// name derive it: a base state (IDLE, MIXED, ALLOCATED, DOWN, FUTURE,
// UNKNOWN) followed by flags (DRAIN, NOT_RESPONDING, COMPLETING...).
func (n *Node) StateFlags(a Alloc, completing bool) []string {
	var base string
	switch {
	case n.Future:
		base = "FUTURE"
	case n.Down || (!n.Registered && !n.LastHeartbeat.IsZero()):
		base = "DOWN"
	case !n.Registered:
		base = "UNKNOWN"
	case a.Jobs == 0:
		base = "IDLE"
	case a.CPUs >= n.CPUs:
		base = "ALLOCATED"
	default:
		base = "MIXED"
	}
	out := []string{base}
	if n.Drain {
		out = append(out, "DRAIN")
	}
	if completing {
		out = append(out, "COMPLETING")
	}
	if !n.Responding && base != "FUTURE" {
		out = append(out, "NOT_RESPONDING")
	}
	return out
}

// StateString joins StateFlags as scontrol prints State= ("IDLE+DRAIN").
func StateString(flags []string) string { return strings.Join(flags, "+") }
