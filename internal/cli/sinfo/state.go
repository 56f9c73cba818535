package sinfo

import (
	"strings"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// nodeState is a node state in Slurm's encoding (slurm.h): the base state
// in the low four bits and flags above them. sinfo compares, groups and
// sorts nodes by this number, so it is kept exactly.
type nodeState uint32

// Base node states (enum node_states).
const (
	stateUnknown nodeState = iota
	stateDown
	stateIdle
	stateAllocated
	stateError
	stateMixed
	stateFuture
	stateEnd
)

const (
	stateBase  nodeState = 0x0000000f
	stateFlags nodeState = 0xfffffff0
)

// Node state flags (NODE_STATE_* bits of slurm.h).
const (
	flagExternal        nodeState = 1 << 4
	flagReserved        nodeState = 1 << 5
	flagUndrain         nodeState = 1 << 6
	flagCloud           nodeState = 1 << 7
	flagResume          nodeState = 1 << 8
	flagDrain           nodeState = 1 << 9
	flagCompleting      nodeState = 1 << 10
	flagNoRespond       nodeState = 1 << 11
	flagPoweredDown     nodeState = 1 << 12
	flagFail            nodeState = 1 << 13
	flagPoweringUp      nodeState = 1 << 14
	flagMaint           nodeState = 1 << 15
	flagRebootRequested nodeState = 1 << 16
	flagRebootCancel    nodeState = 1 << 17
	flagPoweringDown    nodeState = 1 << 18
	flagDynamicFuture   nodeState = 1 << 19
	flagRebootIssued    nodeState = 1 << 20
	flagPlanned         nodeState = 1 << 21
	flagInvalidReg      nodeState = 1 << 22
	flagPowerDown       nodeState = 1 << 23
	flagPowerUp         nodeState = 1 << 24
	flagPowerDrain      nodeState = 1 << 25
	flagDynamicNorm     nodeState = 1 << 26
	flagBlocked         nodeState = 1 << 27
)

// restStateNames maps slurmrestd's state names to Slurm's encoding.
var restStateNames = map[string]nodeState{
	"UNKNOWN": stateUnknown, "DOWN": stateDown, "IDLE": stateIdle,
	"ALLOCATED": stateAllocated, "ERROR": stateError, "MIXED": stateMixed,
	"FUTURE":   stateFuture,
	"EXTERNAL": flagExternal, "RESERVED": flagReserved, "UNDRAIN": flagUndrain,
	"CLOUD": flagCloud, "RESUME": flagResume, "DRAIN": flagDrain,
	"COMPLETING": flagCompleting, "NOT_RESPONDING": flagNoRespond,
	"POWERED_DOWN": flagPoweredDown, "FAIL": flagFail,
	"POWERING_UP": flagPoweringUp, "MAINTENANCE": flagMaint,
	"REBOOT_REQUESTED": flagRebootRequested, "REBOOT_CANCELED": flagRebootCancel,
	"POWERING_DOWN": flagPoweringDown, "DYNAMIC_FUTURE": flagDynamicFuture,
	"REBOOT_ISSUED": flagRebootIssued, "PLANNED": flagPlanned,
	"INVALID_REG": flagInvalidReg, "POWER_DOWN": flagPowerDown,
	"POWER_UP": flagPowerUp, "POWER_DRAIN": flagPowerDrain,
	"DYNAMIC_NORM": flagDynamicNorm, "BLOCKED": flagBlocked,
}

// stateFromREST encodes slurmrestd's state list ("IDLE", "DRAIN").
// Unknown names are ignored.
func stateFromREST(items []v0044.V0044NodeStateItem) nodeState {
	var s nodeState
	for _, it := range items {
		if v, ok := restStateNames[string(it)]; ok {
			s |= v
		}
	}
	return s
}

func (s nodeState) base() nodeState { return s & stateBase }
func (s nodeState) has(f nodeState) bool {
	return s&f != 0
}

// drain, draining and drained are Slurm's IS_NODE_DRAIN, IS_NODE_DRAINING
// and IS_NODE_DRAINED.
func (s nodeState) drain() bool { return s.has(flagDrain) }
func (s nodeState) draining() bool {
	return s.drain() && (s.base() == stateAllocated || s.base() == stateMixed || s.has(flagCompleting))
}
func (s nodeState) drained() bool { return s.drain() && !s.draining() }

// suffix returns the one-character mark Slurm appends to a state name for
// maintenance, reboot, power and responsiveness flags, in its order of
// precedence.
func (s nodeState) suffix(withComp bool) string {
	switch {
	case s.has(flagMaint):
		return "$"
	case s.has(flagRebootIssued):
		return "^"
	case s.has(flagRebootRequested):
		return "@"
	case s.has(flagPoweringUp):
		return "#"
	case s.has(flagPoweringDown):
		return "%"
	case s.has(flagPoweredDown):
		return "~"
	case s.has(flagPowerDown):
		return "!"
	case s.has(flagNoRespond):
		return "*"
	case withComp && s.has(flagCompleting):
		return "+"
	}
	return ""
}

// stateNames are the long and compact names of the states with the usual
// flag suffixes.
type stateNames struct{ long, compact string }

// String is Slurm's node_state_string (sinfo %T, in upper case).
func (s nodeState) String() string { return s.name().long }

// Compact is Slurm's node_state_string_compact (sinfo %t, in upper case).
func (s nodeState) Compact() string { return s.name().compact }

func (s nodeState) name() stateNames {
	base := s.base()
	noResp := s.has(flagNoRespond)
	if s.has(flagInvalidReg) {
		return stateNames{"INVAL", "INVAL"}
	}
	if s.has(flagMaint) && !(s.drain() || base == stateAllocated || base == stateDown || base == stateMixed) {
		if noResp {
			return stateNames{"MAINT*", "MAINT*"}
		}
		return stateNames{"MAINT", "MAINT"}
	}
	if (s.has(flagRebootRequested) || s.has(flagRebootIssued)) && base != stateAllocated && base != stateMixed {
		switch {
		case s.has(flagRebootIssued):
			return stateNames{"REBOOT^", "BOOT^"}
		case noResp:
			return stateNames{"REBOOT*", "BOOT*"}
		}
		return stateNames{"REBOOT", "BOOT"}
	}
	if s.drain() {
		sfx := s.suffix(false)
		if s.has(flagCompleting) || base == stateAllocated || base == stateMixed {
			return stateNames{"DRAINING" + sfx, "DRNG" + sfx}
		}
		return stateNames{"DRAINED" + sfx, "DRAIN" + sfx}
	}
	if s.has(flagFail) {
		star := ""
		if noResp {
			star = "*"
		}
		if s.has(flagCompleting) || base == stateAllocated || base == stateMixed {
			return stateNames{"FAILING" + star, "FAILG" + star}
		}
		return stateNames{"FAIL" + star, "FAIL" + star}
	}
	switch s {
	case flagRebootIssued:
		return stateNames{"REBOOT_ISSUED", "BOOT^"}
	case flagRebootCancel:
		return stateNames{"CANCEL_REBOOT", "CANC_R"}
	case flagCloud:
		return stateNames{"CLOUD", "CLOUD"}
	case flagExternal:
		return stateNames{"EXTERNAL", "EXT"}
	case flagPowerDown:
		return stateNames{"POWER_DOWN", "POW_DN"}
	case flagPowerUp:
		return stateNames{"POWER_UP", "POW_UP"}
	case flagPoweringDown:
		return stateNames{"POWERING_DOWN", "POWRING_DN"}
	case flagPoweredDown:
		return stateNames{"POWERED_DOWN", "POWERED_DN"}
	case flagPoweringUp:
		return stateNames{"POWERING_UP", "POWERING_UP"}
	case flagUndrain:
		return stateNames{"UNDRAIN", "UNDRAIN"}
	case flagDynamicFuture:
		return stateNames{"DYNAMIC_FUTURE", "DYNAMIC_FUTURE"}
	case flagDynamicNorm:
		return stateNames{"DYNAMIC_NORM", "DYNAMIC_NORM"}
	}
	switch {
	case base == stateDown:
		sfx := s.suffix(false)
		return stateNames{"DOWN" + sfx, "DOWN" + sfx}
	case base == stateAllocated:
		sfx := s.suffix(true)
		return stateNames{"ALLOCATED" + sfx, "ALLOC" + sfx}
	case s.has(flagCompleting):
		sfx := s.suffix(false)
		return stateNames{"COMPLETING" + sfx, "COMP" + sfx}
	case base == stateIdle:
		if sfx := s.suffix(false); sfx != "" {
			return stateNames{"IDLE" + sfx, "IDLE" + sfx}
		}
		switch {
		case s.has(flagReserved):
			return stateNames{"RESERVED", "RESV"}
		case s.has(flagBlocked):
			return stateNames{"BLOCKED", "BLOCK"}
		case s.has(flagPlanned):
			return stateNames{"PLANNED", "PLND"}
		}
		return stateNames{"IDLE", "IDLE"}
	case base == stateMixed:
		if sfx := s.suffix(false); sfx != "" {
			return stateNames{"MIXED" + sfx, "MIX" + sfx}
		}
		if s.has(flagPlanned) {
			return stateNames{"MIXED-", "MIX-"}
		}
		return stateNames{"MIXED", "MIX"}
	case base == stateFuture:
		sfx := s.suffix(false)
		return stateNames{"FUTURE" + sfx, "FUTR" + sfx}
	case s.has(flagResume):
		return stateNames{"RESUME", "RESM"}
	case base == stateUnknown:
		if noResp {
			return stateNames{"UNKNOWN*", "UNK*"}
		}
		return stateNames{"UNKNOWN", "UNK"}
	}
	return stateNames{"?", "?"}
}

// completeFlagOrder is Slurm's node_state_flags[] table: the order
// node_state_string_complete prints flags in.
var completeFlagOrder = []struct {
	flag nodeState
	name string
}{
	{flagBlocked, "BLOCKED"}, {flagCloud, "CLOUD"}, {flagCompleting, "COMPLETING"},
	{flagDrain, "DRAIN"}, {flagDynamicFuture, "DYNAMIC_FUTURE"},
	{flagDynamicNorm, "DYNAMIC_NORM"}, {flagExternal, "EXTERNAL"},
	{flagInvalidReg, "INVALID_REG"}, {flagFail, "FAIL"}, {flagMaint, "MAINTENANCE"},
	{flagPowerDown, "POWER_DOWN"}, {flagPowerUp, "POWER_UP"},
	{flagPoweredDown, "POWERED_DOWN"}, {flagRebootRequested, "REBOOT_REQUESTED"},
	{flagRebootIssued, "REBOOT_ISSUED"}, {flagReserved, "RESERVED"},
	{flagResume, "RESUME"}, {flagNoRespond, "NOT_RESPONDING"},
	{flagPlanned, "PLANNED"}, {flagPoweringUp, "POWERING_UP"},
	{flagPoweringDown, "POWERING_DOWN"},
}

var baseNames = []string{"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE"}

// Complete is node_state_string_complete: "IDLE+DRAIN".
func (s nodeState) Complete() string {
	var b strings.Builder
	if int(s.base()) < len(baseNames) {
		b.WriteString(baseNames[s.base()])
	} else {
		b.WriteString("INVALID")
	}
	rest := s & stateFlags
	for _, f := range completeFlagOrder {
		if rest&f.flag != 0 {
			b.WriteString("+" + f.name)
			rest &^= f.flag
		}
	}
	for rest != 0 {
		b.WriteString("+?")
		rest &= rest - 1
	}
	return b.String()
}

// stateFilter is one element of -t/--states.
type stateFilter struct {
	state nodeState
	not   bool
}

// errBadState reports a -t element Slurm does not know.
type errBadState struct{ word string }

func (e errBadState) Error() string { return "Bad state string: \"" + e.word + "\"" }

// validStates is the list sinfo prints after a bad -t value
// (_node_state_list).
const validStates = "unknown,down,idle,allocated,mixed,future,drain,drained,draining," +
	"no_respond,reserved,planned,blocked,cloud,completing,powering_down,powered_down," +
	"power_down,powering_up,power_up,inval,fail,maint,reboot,reboot^,external," +
	"dynamic_future,dynamic_norm"

// parseStates parses -t/--states as sinfo's _build_state_list does:
// states separated by ',' (any may match) or '&'/'+' (all must match),
// each optionally negated with '~' or '!', names abbreviated freely. "all"
// matches every node.
func parseStates(s string) (filters []stateFilter, and bool, err error) {
	if strings.EqualFold(s, "all") {
		for st := stateUnknown; st < stateEnd; st++ {
			filters = append(filters, stateFilter{state: st})
		}
		filters = append(filters, stateFilter{state: flagDrain}, stateFilter{state: flagCompleting})
		return filters, false, nil
	}
	and = strings.ContainsAny(s, "+&")
	for _, word := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '&' || r == '+' }) {
		f := stateFilter{}
		if word[0] == '~' || word[0] == '!' {
			f.not = true
			word = word[1:]
		}
		st, ok := stateID(word)
		if !ok {
			return nil, false, errBadState{word: word}
		}
		f.state = st
		filters = append(filters, f)
	}
	if len(filters) == 0 {
		return nil, false, errBadState{word: s}
	}
	return filters, and, nil
}

// prefixFold reports whether word is a case-insensitive prefix of name
// (every name matches the empty word, as strncasecmp with length 0 does).
func prefixFold(word, name string) bool {
	return len(word) <= len(name) && strings.EqualFold(word, name[:len(word)])
}

// stateID is sinfo's _node_state_id.
func stateID(word string) (nodeState, bool) {
	equal := func(st nodeState) bool {
		return prefixFold(word, st.Compact()) || prefixFold(word, st.String())
	}
	for st := stateUnknown; st < stateEnd; st++ {
		if equal(st) {
			return st, true
		}
	}
	for _, c := range []struct {
		names []string
		st    nodeState
	}{
		{[]string{"BLOCKED", "BLOCK"}, flagBlocked},
		{[]string{"INVALID_REG", "INVAL"}, flagInvalidReg},
		{[]string{"PLANNED", "PLND"}, flagPlanned},
		{[]string{"DRAIN"}, flagDrain},
		{[]string{"DRAINED"}, flagDrain | stateIdle},
		{[]string{"RESV", "RESERVED"}, flagReserved},
		{[]string{"DRAINING", "DRNG"}, flagDrain | stateAllocated},
	} {
		for _, n := range c.names {
			if prefixFold(word, n) {
				return c.st, true
			}
		}
	}
	for _, st := range []nodeState{flagDynamicFuture, flagDynamicNorm, flagCompleting} {
		if equal(st) {
			return st, true
		}
	}
	if prefixFold(word, "NO_RESPOND") {
		return flagNoRespond, true
	}
	for _, st := range []nodeState{
		flagPowerUp, flagPoweringDown, flagPoweredDown, flagPowerDown, flagPoweringUp,
		flagFail, flagMaint, flagRebootRequested, flagRebootIssued, flagCloud, flagExternal,
	} {
		if equal(st) {
			return st, true
		}
	}
	return 0, false
}

// stateMatches is sinfo's _filter_node_state: whether a node (its state and
// allocated CPUs) is in the filter's state.
func stateMatches(want nodeState, node nodeState, allocCPUs int64) bool {
	switch {
	case want == flagDrain:
		return node.drain()
	case want.draining():
		return node.draining()
	case want.drained():
		return node.drained()
	case want&stateFlags != 0:
		return want&node != 0
	case want == stateAllocated:
		return allocCPUs != 0
	}
	return node.base() == want
}

// restStateList returns the state list as slurmrestd gave it, which is
// how sinfo --json dumps the state of a record's first node.
func restStateList(items []v0044.V0044NodeStateItem) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, string(it))
	}
	return out
}
