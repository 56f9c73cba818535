package sinfo

import (
	"strings"

	"github.com/droverhq/drover/internal/cli/readmodel"
)

// nodeState is the read model's node state: Slurm's encoding, which
// sinfo compares, groups and sorts nodes by. The names below are sinfo's
// for its base states and flags.
type nodeState = readmodel.NodeState

// Base node states (enum node_states).
const (
	stateUnknown   = readmodel.NodeUnknown
	stateDown      = readmodel.NodeDown
	stateIdle      = readmodel.NodeIdle
	stateAllocated = readmodel.NodeAllocated
	stateMixed     = readmodel.NodeMixed
	stateFuture    = readmodel.NodeFuture
	stateEnd       = stateFuture + 1
)

// stateFlags masks the flag bits above the base state.
const stateFlags nodeState = 0xfffffff0

// Node state flags (NODE_STATE_* bits of slurm.h).
const (
	flagExternal        = readmodel.NodeExternal
	flagReserved        = readmodel.NodeReserved
	flagCloud           = readmodel.NodeCloud
	flagDrain           = readmodel.NodeDrain
	flagCompleting      = readmodel.NodeCompleting
	flagNoRespond       = readmodel.NodeNoRespond
	flagPoweredDown     = readmodel.NodePoweredDown
	flagFail            = readmodel.NodeFail
	flagPoweringUp      = readmodel.NodePoweringUp
	flagMaint           = readmodel.NodeMaint
	flagRebootRequested = readmodel.NodeRebootRequested
	flagPoweringDown    = readmodel.NodePoweringDown
	flagDynamicFuture   = readmodel.NodeDynamicFuture
	flagRebootIssued    = readmodel.NodeRebootIssued
	flagPlanned         = readmodel.NodePlanned
	flagInvalidReg      = readmodel.NodeInvalidReg
	flagPowerDown       = readmodel.NodePowerDown
	flagPowerUp         = readmodel.NodePowerUp
	flagDynamicNorm     = readmodel.NodeDynamicNorm
	flagBlocked         = readmodel.NodeBlocked
)

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
		return node.Drain()
	case want.Draining():
		return node.Draining()
	case want.Drained():
		return node.Drained()
	case want&stateFlags != 0:
		return want&node != 0
	case want == stateAllocated:
		return allocCPUs != 0
	}
	return node.Base() == want
}
