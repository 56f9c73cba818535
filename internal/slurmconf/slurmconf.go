// Package slurmconf reads Slurm's slurm.conf into typed configuration.
//
// It follows Slurm 25.11's parser (parse_config.c and read_config.c) where
// users can see the difference:
//
//   - Keys are case-insensitive; values keep their case.
//   - "#" starts a comment unless escaped as "\#"; a line ending in an odd
//     number of backslashes continues on the next line; any other backslash
//     escapes the character after it ("\\" is a backslash).
//   - A value is either a run of non-blank characters or a double-quoted
//     string that may hold blanks ("Reason="disk failed"").
//   - Ordinary keys stand alone on their line, one per line; NodeName,
//     PartitionName, DownNodes and NodeSet lines carry further key=value
//     pairs. A key given twice keeps its latest value (with a warning).
//   - "Include <file>" (at the start of a line) reads another file in
//     place; relative names are relative to the folder of the main file,
//     and "%c" in the name is the ClusterName in lower case.
//   - NodeName=DEFAULT and PartitionName=DEFAULT lines set defaults for the
//     records that follow them, adding to or replacing earlier defaults.
//   - Unset keys take the defaults documented in slurm.conf(5).
//
// Keys Slurm does not know are kept (Config.Unknown) and reported as
// warnings, where Slurm would refuse the file. Problems Slurm only logs
// (a key given twice, CPUs=0 reset to 1, defunct options...) are warnings
// too. Everything else that is wrong is an error naming the file and line.
package slurmconf

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/timefmt"
)

// Infinite is the value of 32-bit limits (partition MaxNodes,
// MaxCPUsPerNode...) that are unlimited, Slurm's INFINITE.
const Infinite = math.MaxUint32

// Default values from slurm.conf(5) and Slurm's read_config.h.
const (
	DefaultSlurmctldPort     = 6817
	DefaultSlurmdPort        = 6818
	DefaultStateSaveLocation = "/var/spool"
	DefaultSlurmdSpoolDir    = "/var/spool/slurmd"
	DefaultSlurmdTimeout     = 300 * time.Second
	DefaultSlurmctldTimeout  = 120 * time.Second
	DefaultKillWait          = 30 * time.Second
	DefaultMinJobAge         = 300 * time.Second
	DefaultMessageTimeout    = 10 * time.Second
	DefaultBatchStartTimeout = 10 * time.Second
	DefaultMaxJobCount       = 10000
	DefaultFirstJobID        = 1
	DefaultMaxJobID          = 0x03ff0000
	DefaultMaxArraySize      = 1001
	DefaultMaxStepCount      = 40000
	DefaultMaxTasksPerNode   = 512
	DefaultTreeWidth         = 16
	DefaultSelectType        = "select/cons_tres"
	// DefaultSelectTypeParameters applies with select/cons_tres only.
	DefaultSelectTypeParameters = "CR_Core_Memory"
	DefaultSchedulerType        = "sched/backfill"
	DefaultPriorityType         = "priority/multifactor"
	DefaultAuthType             = "auth/munge"
	DefaultCredType             = "cred/munge"
	// DefaultProctrackType is the default of Slurm builds with cgroup
	// support, which Linux builds have.
	DefaultProctrackType = "proctrack/cgroup"
	DefaultSlurmUser     = "root"
	DefaultTmpFS         = "/tmp"
)

// Config is a parsed slurm.conf. Fields hold Slurm's defaults for keys the
// file does not set.
type Config struct {
	ClusterName string
	// SlurmctldHosts lists the controllers in order: the first is the
	// primary, the others backups. Legacy ControlMachine/BackupController
	// lines are folded in when no SlurmctldHost line is present.
	SlurmctldHosts []ControllerHost
	// SlurmctldPort is the controller port; a range "6817-6818" sets the
	// first port here and the number of ports in SlurmctldPortCount.
	SlurmctldPort      uint16
	SlurmctldPortCount uint16
	SlurmdPort         uint16

	StateSaveLocation string
	SlurmdSpoolDir    string
	TmpFS             string

	SlurmdTimeout     time.Duration
	SlurmctldTimeout  time.Duration
	KillWait          time.Duration
	MinJobAge         time.Duration
	InactiveLimit     time.Duration
	MessageTimeout    time.Duration
	BatchStartTimeout time.Duration
	// OverTimeLimit is in minutes; Infinite16 (65535) is UNLIMITED.
	OverTimeLimit uint16

	MaxJobCount     uint32
	FirstJobID      uint32
	MaxJobID        uint32
	MaxArraySize    uint32
	MaxStepCount    uint32
	MaxTasksPerNode uint16
	TreeWidth       uint16

	// GresTypes is the GresTypes list split on commas.
	GresTypes            []string
	SelectType           string
	SelectTypeParameters string
	SchedulerType        string
	// SchedulerParameters is kept as written; the scheduler parses it.
	SchedulerParameters string
	PriorityType        string

	// Memory defaults and limits in MB; 0 means unset (unlimited). As in
	// Slurm, the per-node and per-CPU forms are mutually exclusive and the
	// per-node one wins.
	DefMemPerCPU  uint64
	DefMemPerNode uint64
	MaxMemPerCPU  uint64
	MaxMemPerNode uint64

	AuthType              string
	AuthAltTypes          string
	CredType              string
	ProctrackType         string
	TaskPlugin            string
	MpiDefault            string
	SwitchType            string
	AccountingStorageType string
	JobCompType           string
	JobAcctGatherType     string
	// JobAcctGatherFrequency is the task sampling interval (its task=
	// part; 0: sample only at the end and when sstat asks).
	JobAcctGatherFrequency time.Duration
	// Licenses is kept as written ("fluent:10,matlab:2").
	Licenses string

	// JobRequeue is true when batch jobs are requeued by default (1).
	JobRequeue      bool
	ReturnToService uint16
	DisableRootJobs bool
	SlurmUser       string
	SlurmdUser      string
	// PrivateData is kept as written.
	PrivateData         string
	EnforcePartLimits   string
	SlurmctldParameters string
	SlurmdParameters    string
	Prolog              []string
	Epilog              []string

	Nodes      []Node
	Partitions []Partition
	DownNodes  []DownNodes
	NodeSets   []NodeSet

	// Entries lists every global key=value line as read, in file order
	// (includes inlined), with Slurm's spelling of known keys; NodeName,
	// PartitionName, DownNodes and NodeSet records are not in it.
	// `scontrol show config` prints from it.
	Entries []Entry
	// Unknown lists the entries (global or inside records) whose key
	// Slurm does not know.
	Unknown []Entry
	// Warnings are problems Slurm tolerates, in file order.
	Warnings []Warning
	// Files lists the files read: the main file first, then included
	// files in the order they were included.
	Files []string
}

// Infinite16 is the value of 16-bit settings set to UNLIMITED or INFINITE
// (Slurm's INFINITE16).
const Infinite16 = math.MaxUint16

// ControllerHost is one SlurmctldHost entry: "name" or "name(addr)".
type ControllerHost struct {
	// Name is the controller's short host name.
	Name string
	// Addr is the address to reach it; Name when not given.
	Addr string
}

// Entry is one key=value as read from a file.
type Entry struct {
	Key   string
	Value string
	File  string
	Line  int
}

// Warning is a problem Slurm logs and tolerates.
type Warning struct {
	File string
	Line int
	Text string
}

// String formats the warning as "file:line: text".
func (w Warning) String() string {
	return fmt.Sprintf("%s:%d: %s", w.File, w.Line, w.Text)
}

// Value returns the value of the global key (matched case-insensitively)
// that is in effect: the last one read. ok is false when the file does not
// set it.
func (c *Config) Value(key string) (value string, ok bool) {
	for i := len(c.Entries) - 1; i >= 0; i-- {
		if strings.EqualFold(c.Entries[i].Key, key) {
			return c.Entries[i].Value, true
		}
	}
	return "", false
}

// ControllerAddrs are the host:port of every SlurmctldHost (its
// address, else its name, at SlurmctldPort) in slurm.conf's order, the
// primary first, as Slurm's clients try them; duplicates are dropped, and
// with none it is the local host's.
func (c *Config) ControllerAddrs() []string {
	var out []string
	for _, h := range c.SlurmctldHosts {
		if a := c.ControllerAddr(h); !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		out = []string{joinHostPort("127.0.0.1", strconv.Itoa(int(c.SlurmctldPort)))}
	}
	return out
}

// ControllerAddr is where SlurmctldHost h is reached: its address, else
// its name, at SlurmctldPort.
func (c *Config) ControllerAddr(h ControllerHost) string {
	host := h.Name
	if h.Addr != "" {
		host = h.Addr
	}
	return joinHostPort(host, strconv.Itoa(int(c.SlurmctldPort)))
}

// joinHostPort is net.JoinHostPort, without linking package net into
// everything that reads slurm.conf (the controller's state machine does,
// and must do no I/O: internal/archtest).
func joinHostPort(host, port string) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// Node returns the node named name, or nil.
func (c *Config) Node(name string) *Node {
	for i := range c.Nodes {
		if c.Nodes[i].Name == name {
			return &c.Nodes[i]
		}
	}
	return nil
}

// Partition returns the partition named name, or nil.
func (c *Config) Partition(name string) *Partition {
	for i := range c.Partitions {
		if c.Partitions[i].Name == name {
			return &c.Partitions[i]
		}
	}
	return nil
}

// DefaultPartition returns the partition marked Default=YES (the last one
// when several are, as slurmctld keeps the last), or nil.
func (c *Config) DefaultPartition() *Partition {
	var def *Partition
	for i := range c.Partitions {
		if c.Partitions[i].Default {
			def = &c.Partitions[i]
		}
	}
	return def
}

// Node is one node of a NodeName line; a line naming a hostlist yields
// one Node per name.
type Node struct {
	Name string
	// Hostname is NodeHostname, Name when not given.
	Hostname string
	// Addr is NodeAddr, Hostname when not given.
	Addr string
	// BcastAddr is empty when not given.
	BcastAddr string
	// Port is the node's slurmd port: its Port= entry, else SlurmdPort.
	Port uint16

	CPUs           uint16
	Boards         uint16
	Sockets        uint16 // in total, over all boards
	CoresPerSocket uint16
	ThreadsPerCore uint16
	RealMemory     uint64 // MB
	TmpDisk        uint32 // MB
	MemSpecLimit   uint64 // MB
	CoreSpecCount  uint16
	CPUSpecList    string
	// Gres is the Gres= list as written, split on commas
	// ("gpu:a100:4"); package gres parses the entries.
	Gres     []string
	Features []string
	Weight   uint32
	State    NodeState
	Reason   string
	// Parameters, CpuBind, Topology and TRESWeights are kept as written.
	Parameters  string
	CpuBind     string
	Topology    string
	TRESWeights string

	// File and Line say where the node is defined.
	File string
	Line int
}

// NodeState is a node's configured State=.
type NodeState int

// Node states accepted in slurm.conf.
const (
	NodeStateUnknown NodeState = iota
	NodeStateDown
	NodeStateIdle
	NodeStateAllocated
	NodeStateError
	NodeStateMixed
	NodeStateFuture
	NodeStateCloud
	NodeStateExternal
	NodeStateDrain
	NodeStateFail
)

var nodeStateNames = [...]string{
	NodeStateUnknown:   "UNKNOWN",
	NodeStateDown:      "DOWN",
	NodeStateIdle:      "IDLE",
	NodeStateAllocated: "ALLOCATED",
	NodeStateError:     "ERROR",
	NodeStateMixed:     "MIXED",
	NodeStateFuture:    "FUTURE",
	NodeStateCloud:     "CLOUD",
	NodeStateExternal:  "EXTERNAL",
	NodeStateDrain:     "DRAIN",
	NodeStateFail:      "FAIL",
}

// String returns Slurm's spelling of the state.
func (s NodeState) String() string {
	if s >= 0 && int(s) < len(nodeStateNames) {
		return nodeStateNames[s]
	}
	return "NodeState(" + strconv.Itoa(int(s)) + ")"
}

// Partition is one PartitionName line.
type Partition struct {
	Name string
	// Nodes are the partition's node names in the order written, with
	// NodeSet names and ALL resolved.
	Nodes []string
	// NodesExpr is the Nodes= value as written (blanks turned to commas,
	// as Slurm does).
	NodesExpr string
	Default   bool
	// MaxTime is UNLIMITED unless set.
	MaxTime timefmt.Limit
	// DefaultTime applies when HasDefaultTime is set ("NONE" otherwise).
	DefaultTime    timefmt.Limit
	HasDefaultTime bool
	State          PartitionState

	PriorityTier      uint16
	PriorityJobFactor uint16
	MaxNodes          uint32 // Infinite unless set
	MinNodes          uint32
	MaxCPUsPerNode    uint32 // Infinite unless set
	MaxCPUsPerSocket  uint32 // Infinite unless set
	GraceTime         time.Duration
	OverSubscribe     OverSubscribe

	ExclusiveUser   bool
	ExclusiveTopo   bool
	Hidden          bool
	RootOnly        bool
	ReqResv         bool
	LLN             bool
	PowerDownOnIdle bool
	// DisableRootJobs is the partition's value, or the global one.
	DisableRootJobs bool

	// Access lists are kept as written, except that accounts and QOS
	// names are lower-cased and "ALL" becomes empty, as Slurm does: empty
	// means everyone.
	AllowAccounts string
	AllowGroups   string
	AllowQos      string
	DenyAccounts  string
	DenyQos       string
	AllocNodes    string

	QOS                  string
	Alternate            string
	SelectTypeParameters string
	TRESBillingWeights   string
	PreemptMode          string
	CpuBind              string

	// Memory defaults and limits in MB; 0 means unset (the cluster-wide
	// value applies).
	DefMemPerCPU  uint64
	DefMemPerNode uint64
	MaxMemPerCPU  uint64
	MaxMemPerNode uint64

	// Options lists the line's key=value pairs after PartitionName, as
	// written but with Slurm's spelling of the keys and without defaults
	// or unknown keys, for display and for keys that have no field.
	Options []Entry

	File string
	Line int
}

// PartitionState is a partition's State=.
type PartitionState int

// Partition states; the zero value is UP, the default.
const (
	PartitionUp PartitionState = iota
	PartitionDown
	PartitionDrain
	PartitionInactive
)

// String returns Slurm's spelling of the state.
func (s PartitionState) String() string {
	switch s {
	case PartitionUp:
		return "UP"
	case PartitionDown:
		return "DOWN"
	case PartitionDrain:
		return "DRAIN"
	case PartitionInactive:
		return "INACTIVE"
	}
	return "PartitionState(" + strconv.Itoa(int(s)) + ")"
}

// OverSubscribeMode is the first word of a partition's OverSubscribe=.
type OverSubscribeMode int

// OverSubscribe modes; the zero value is NO, the default.
const (
	OverSubscribeNo OverSubscribeMode = iota
	OverSubscribeExclusive
	OverSubscribeYes
	OverSubscribeForce
)

// OverSubscribe is a partition's OverSubscribe= setting.
type OverSubscribe struct {
	Mode OverSubscribeMode
	// Jobs is the number of jobs that may share a resource with YES and
	// FORCE (4 when not written).
	Jobs uint16
}

// String formats the setting as `scontrol show partition` does: NO,
// EXCLUSIVE, YES:4, FORCE:4.
func (o OverSubscribe) String() string {
	switch o.Mode {
	case OverSubscribeExclusive:
		return "EXCLUSIVE"
	case OverSubscribeYes:
		return "YES:" + strconv.Itoa(int(o.Jobs))
	case OverSubscribeForce:
		return "FORCE:" + strconv.Itoa(int(o.Jobs))
	}
	return "NO"
}

// DownNodes is one DownNodes line: nodes to start in a DOWN, DRAIN, FAIL,
// FAILING or FUTURE state.
type DownNodes struct {
	Nodes  []string
	State  NodeState // DOWN unless set
	Reason string
	File   string
	Line   int
}

// NodeSet is one NodeSet line: a name for nodes, usable in partitions'
// Nodes=.
type NodeSet struct {
	Name    string
	Feature string
	Nodes   []string
	File    string
	Line    int
}
