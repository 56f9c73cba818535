package readmodel

import (
	"slices"
	"strings"
)

// NodeState is a node state in Slurm's encoding (slurm.h): the base state
// in the low four bits and flags above them. sinfo compares, groups and
// sorts nodes by this number, so it is kept exactly.
type NodeState uint32

// Base node states (enum node_states).
const (
	NodeUnknown NodeState = iota
	NodeDown
	NodeIdle
	NodeAllocated
	NodeError
	NodeMixed
	NodeFuture
	nodeStateEnd
)

const (
	nodeBaseMask  NodeState = 0x0000000f
	nodeFlagsMask NodeState = 0xfffffff0
)

// Node state flags (NODE_STATE_* bits of slurm.h).
const (
	NodeExternal        NodeState = 1 << 4
	NodeReserved        NodeState = 1 << 5
	NodeUndrain         NodeState = 1 << 6
	NodeCloud           NodeState = 1 << 7
	NodeResume          NodeState = 1 << 8
	NodeDrain           NodeState = 1 << 9
	NodeCompleting      NodeState = 1 << 10
	NodeNoRespond       NodeState = 1 << 11
	NodePoweredDown     NodeState = 1 << 12
	NodeFail            NodeState = 1 << 13
	NodePoweringUp      NodeState = 1 << 14
	NodeMaint           NodeState = 1 << 15
	NodeRebootRequested NodeState = 1 << 16
	NodeRebootCancel    NodeState = 1 << 17
	NodePoweringDown    NodeState = 1 << 18
	NodeDynamicFuture   NodeState = 1 << 19
	NodeRebootIssued    NodeState = 1 << 20
	NodePlanned         NodeState = 1 << 21
	NodeInvalidReg      NodeState = 1 << 22
	NodePowerDown       NodeState = 1 << 23
	NodePowerUp         NodeState = 1 << 24
	NodePowerDrain      NodeState = 1 << 25
	NodeDynamicNorm     NodeState = 1 << 26
	NodeBlocked         NodeState = 1 << 27
)

// nodeStateNames maps slurmrestd's state names to Slurm's encoding.
var nodeStateNames = map[string]NodeState{
	"UNKNOWN": NodeUnknown, "DOWN": NodeDown, "IDLE": NodeIdle,
	"ALLOCATED": NodeAllocated, "ERROR": NodeError, "MIXED": NodeMixed,
	"FUTURE":   NodeFuture,
	"EXTERNAL": NodeExternal, "RESERVED": NodeReserved, "UNDRAIN": NodeUndrain,
	"CLOUD": NodeCloud, "RESUME": NodeResume, "DRAIN": NodeDrain,
	"COMPLETING": NodeCompleting, "NOT_RESPONDING": NodeNoRespond,
	"POWERED_DOWN": NodePoweredDown, "FAIL": NodeFail,
	"POWERING_UP": NodePoweringUp, "MAINTENANCE": NodeMaint,
	"REBOOT_REQUESTED": NodeRebootRequested, "REBOOT_CANCELED": NodeRebootCancel,
	"POWERING_DOWN": NodePoweringDown, "DYNAMIC_FUTURE": NodeDynamicFuture,
	"REBOOT_ISSUED": NodeRebootIssued, "PLANNED": NodePlanned,
	"INVALID_REG": NodeInvalidReg, "POWER_DOWN": NodePowerDown,
	"POWER_UP": NodePowerUp, "POWER_DRAIN": NodePowerDrain,
	"DYNAMIC_NORM": NodeDynamicNorm, "BLOCKED": NodeBlocked,
}

// NodeStateFromWire encodes slurmrestd's state list ("IDLE", "DRAIN").
// A later base state replaces an earlier one, as scontrol has read the
// list. Names the encoding does not know are left out and counted in
// unknown; noBase reports a list without a base state, which reads as
// UNKNOWN.
func NodeStateFromWire(items []string) (s NodeState, noBase bool, unknown int) {
	noBase = true
	var seen []string
	for _, it := range items {
		v, ok := nodeStateNames[it]
		switch {
		case !ok:
			if !slices.Contains(seen, it) {
				seen = append(seen, it)
				unknown++
			}
		case v&nodeBaseMask == v && v < nodeStateEnd:
			s, noBase = s&nodeFlagsMask|v, false
		default:
			s |= v
		}
	}
	return s, noBase, unknown
}

// Base returns the base state without flags.
func (s NodeState) Base() NodeState { return s & nodeBaseMask }

// Has reports whether any of the flags f is set.
func (s NodeState) Has(f NodeState) bool {
	return s&f != 0
}

// Drain, Draining and Drained are Slurm's IS_NODE_DRAIN,
// IS_NODE_DRAINING and IS_NODE_DRAINED.
func (s NodeState) Drain() bool { return s.Has(NodeDrain) }

// Draining is IS_NODE_DRAINING: drained while jobs still run.
func (s NodeState) Draining() bool {
	return s.Drain() && (s.Base() == NodeAllocated || s.Base() == NodeMixed || s.Has(NodeCompleting))
}

// Drained is IS_NODE_DRAINED: drained with no job left.
func (s NodeState) Drained() bool { return s.Drain() && !s.Draining() }

// suffix returns the one-character mark Slurm appends to a state name for
// maintenance, reboot, power and responsiveness flags, in its order of
// precedence.
func (s NodeState) suffix(withComp bool) string {
	switch {
	case s.Has(NodeMaint):
		return "$"
	case s.Has(NodeRebootIssued):
		return "^"
	case s.Has(NodeRebootRequested):
		return "@"
	case s.Has(NodePoweringUp):
		return "#"
	case s.Has(NodePoweringDown):
		return "%"
	case s.Has(NodePoweredDown):
		return "~"
	case s.Has(NodePowerDown):
		return "!"
	case s.Has(NodeNoRespond):
		return "*"
	case withComp && s.Has(NodeCompleting):
		return "+"
	}
	return ""
}

// nodeStateWords are the long and compact names of the states with the usual
// flag suffixes.
type nodeStateWords struct{ long, compact string }

// String is Slurm's node_state_string (sinfo %T, in upper case).
func (s NodeState) String() string { return s.name().long }

// Compact is Slurm's node_state_string_compact (sinfo %t, in upper case).
func (s NodeState) Compact() string { return s.name().compact }

func (s NodeState) name() nodeStateWords {
	base := s.Base()
	noResp := s.Has(NodeNoRespond)
	if s.Has(NodeInvalidReg) {
		return nodeStateWords{"INVAL", "INVAL"}
	}
	if s.Has(NodeMaint) && !(s.Drain() || base == NodeAllocated || base == NodeDown || base == NodeMixed) {
		if noResp {
			return nodeStateWords{"MAINT*", "MAINT*"}
		}
		return nodeStateWords{"MAINT", "MAINT"}
	}
	if (s.Has(NodeRebootRequested) || s.Has(NodeRebootIssued)) && base != NodeAllocated && base != NodeMixed {
		switch {
		case s.Has(NodeRebootIssued):
			return nodeStateWords{"REBOOT^", "BOOT^"}
		case noResp:
			return nodeStateWords{"REBOOT*", "BOOT*"}
		}
		return nodeStateWords{"REBOOT", "BOOT"}
	}
	if s.Drain() {
		sfx := s.suffix(false)
		if s.Has(NodeCompleting) || base == NodeAllocated || base == NodeMixed {
			return nodeStateWords{"DRAINING" + sfx, "DRNG" + sfx}
		}
		return nodeStateWords{"DRAINED" + sfx, "DRAIN" + sfx}
	}
	if s.Has(NodeFail) {
		star := ""
		if noResp {
			star = "*"
		}
		if s.Has(NodeCompleting) || base == NodeAllocated || base == NodeMixed {
			return nodeStateWords{"FAILING" + star, "FAILG" + star}
		}
		return nodeStateWords{"FAIL" + star, "FAIL" + star}
	}
	switch s {
	case NodeRebootIssued:
		return nodeStateWords{"REBOOT_ISSUED", "BOOT^"}
	case NodeRebootCancel:
		return nodeStateWords{"CANCEL_REBOOT", "CANC_R"}
	case NodeCloud:
		return nodeStateWords{"CLOUD", "CLOUD"}
	case NodeExternal:
		return nodeStateWords{"EXTERNAL", "EXT"}
	case NodePowerDown:
		return nodeStateWords{"POWER_DOWN", "POW_DN"}
	case NodePowerUp:
		return nodeStateWords{"POWER_UP", "POW_UP"}
	case NodePoweringDown:
		return nodeStateWords{"POWERING_DOWN", "POWRING_DN"}
	case NodePoweredDown:
		return nodeStateWords{"POWERED_DOWN", "POWERED_DN"}
	case NodePoweringUp:
		return nodeStateWords{"POWERING_UP", "POWERING_UP"}
	case NodeUndrain:
		return nodeStateWords{"UNDRAIN", "UNDRAIN"}
	case NodeDynamicFuture:
		return nodeStateWords{"DYNAMIC_FUTURE", "DYNAMIC_FUTURE"}
	case NodeDynamicNorm:
		return nodeStateWords{"DYNAMIC_NORM", "DYNAMIC_NORM"}
	}
	switch {
	case base == NodeDown:
		sfx := s.suffix(false)
		return nodeStateWords{"DOWN" + sfx, "DOWN" + sfx}
	case base == NodeAllocated:
		sfx := s.suffix(true)
		return nodeStateWords{"ALLOCATED" + sfx, "ALLOC" + sfx}
	case s.Has(NodeCompleting):
		sfx := s.suffix(false)
		return nodeStateWords{"COMPLETING" + sfx, "COMP" + sfx}
	case base == NodeIdle:
		if sfx := s.suffix(false); sfx != "" {
			return nodeStateWords{"IDLE" + sfx, "IDLE" + sfx}
		}
		switch {
		case s.Has(NodeReserved):
			return nodeStateWords{"RESERVED", "RESV"}
		case s.Has(NodeBlocked):
			return nodeStateWords{"BLOCKED", "BLOCK"}
		case s.Has(NodePlanned):
			return nodeStateWords{"PLANNED", "PLND"}
		}
		return nodeStateWords{"IDLE", "IDLE"}
	case base == NodeMixed:
		if sfx := s.suffix(false); sfx != "" {
			return nodeStateWords{"MIXED" + sfx, "MIX" + sfx}
		}
		if s.Has(NodePlanned) {
			return nodeStateWords{"MIXED-", "MIX-"}
		}
		return nodeStateWords{"MIXED", "MIX"}
	case base == NodeFuture:
		sfx := s.suffix(false)
		return nodeStateWords{"FUTURE" + sfx, "FUTR" + sfx}
	case s.Has(NodeResume):
		return nodeStateWords{"RESUME", "RESM"}
	case base == NodeUnknown:
		if noResp {
			return nodeStateWords{"UNKNOWN*", "UNK*"}
		}
		return nodeStateWords{"UNKNOWN", "UNK"}
	}
	return nodeStateWords{"?", "?"}
}

// nodeFlagOrder is Slurm's node_state_flags[] table: the order
// node_state_string_complete prints flags in.
var nodeFlagOrder = []struct {
	flag NodeState
	name string
}{
	{NodeBlocked, "BLOCKED"}, {NodeCloud, "CLOUD"}, {NodeCompleting, "COMPLETING"},
	{NodeDrain, "DRAIN"}, {NodeDynamicFuture, "DYNAMIC_FUTURE"},
	{NodeDynamicNorm, "DYNAMIC_NORM"}, {NodeExternal, "EXTERNAL"},
	{NodeInvalidReg, "INVALID_REG"}, {NodeFail, "FAIL"}, {NodeMaint, "MAINTENANCE"},
	{NodePowerDown, "POWER_DOWN"}, {NodePowerUp, "POWER_UP"},
	{NodePoweredDown, "POWERED_DOWN"}, {NodeRebootRequested, "REBOOT_REQUESTED"},
	{NodeRebootIssued, "REBOOT_ISSUED"}, {NodeReserved, "RESERVED"},
	{NodeResume, "RESUME"}, {NodeNoRespond, "NOT_RESPONDING"},
	{NodePlanned, "PLANNED"}, {NodePoweringUp, "POWERING_UP"},
	{NodePoweringDown, "POWERING_DOWN"},
}

var nodeBaseNames = []string{"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE"}

// Complete is node_state_string_complete: "IDLE+DRAIN".
func (s NodeState) Complete() string { return s.complete(false, 0) }

// complete is Complete with the base printed INVALID when the record
// named none and a "+?" for each state name the encoding does not know,
// as scontrol prints slurmrestd's list.
func (s NodeState) complete(noBase bool, unknown int) string {
	var b strings.Builder
	if int(s.Base()) < len(nodeBaseNames) && !noBase {
		b.WriteString(nodeBaseNames[s.Base()])
	} else {
		b.WriteString("INVALID")
	}
	rest := s & nodeFlagsMask
	for _, f := range nodeFlagOrder {
		if rest&f.flag != 0 {
			b.WriteString("+" + f.name)
			rest &^= f.flag
		}
	}
	for rest != 0 {
		b.WriteString("+?")
		rest &= rest - 1
	}
	for range unknown {
		b.WriteString("+?")
	}
	return b.String()
}
