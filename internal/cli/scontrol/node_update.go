package scontrol

import (
	"context"
	"fmt"
	"strings"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// nodeUpdate is a parsed "update NodeName=..." request.
type nodeUpdate struct {
	// Names is the NodeName= hostlist expression.
	Names string
	// Msg is the request body.
	Msg v0044.V0044UpdateNodeMsg
	// Changes counts the settings to change.
	Changes int
}

// nodeStateWords maps scontrol's State= words to the state flags of
// V0044UpdateNodeMsg, in the order scontrol_update_node tests them, with
// the number of letters each needs.
var nodeStateWords = []struct {
	word   string
	min    int
	states []v0044.V0044UpdateNodeMsgStateItem
}{
	{"NoResp", 3, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemNOTRESPONDING}},
	{"CANCEL_REBOOT", 3, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemREBOOTCANCELED}},
	{"DRAIN", 3, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemDRAIN}},
	{"FAIL", 3, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemFAIL}},
	{"FUTURE", 3, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemFUTURE}},
	{"RESUME", 3, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemRESUME}},
	{"POWER_DOWN_ASAP", 12, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemPOWERDOWN, v0044.V0044UpdateNodeMsgStateItemPOWERDRAIN}},
	{"POWER_DOWN_FORCE", 12, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemPOWERDOWN, v0044.V0044UpdateNodeMsgStateItemPOWEREDDOWN}},
	{"POWER_DOWN", 7, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemPOWERDOWN}},
	{"POWER_UP", 7, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemPOWERUP}},
	{"UNDRAIN", 3, []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItemUNDRAIN}},
}

// nodeBaseStateNames are node_state_string(0..NODE_STATE_END-1), the base
// states State= also accepts.
var nodeBaseStateNames = []string{"UNKNOWN", "DOWN", "IDLE", "ALLOCATED", "ERROR", "MIXED", "FUTURE"}

// parseNodeUpdate parses the words of "update NodeName=..." as
// scontrol_update_node does, without sending anything.
func parseNodeUpdate(argv []string) (*nodeUpdate, *updateError) {
	u := &nodeUpdate{}
	var state string
	for _, word := range argv {
		tag, val, ok := strings.Cut(word, "=")
		if !ok {
			return nil, errorMsg("Invalid input: %s  Request aborted", word)
		}
		switch {
		case abbrev(tag, "NodeAddr", 5):
			u.Msg.Address = v0044.V0044HostlistString{val}
			u.Changes++
		case abbrev(tag, "NodeHostName", 5):
			u.Msg.Hostname = v0044.V0044HostlistString{val}
			u.Changes++
		case abbrev(tag, "NodeName", 1):
			u.Names = val
		case abbrev(tag, "ActiveFeatures", 3):
			u.Msg.FeaturesAct = splitCSV(val)
			u.Changes++
		case abbrev(tag, "Extra", 1):
			u.Msg.Extra = v0044.NewOptString(val)
			u.Changes++
		case abbrev(tag, "Features", 1), abbrev(tag, "AvailableFeatures", 3):
			u.Msg.Features = splitCSV(val)
			u.Changes++
		case abbrev(tag, "Gres", 1):
			u.Msg.Gres = v0044.NewOptString(val)
			u.Changes++
		case abbrev(tag, "Weight", 1):
			n, ok := parseUint(val, 32)
			if !ok {
				return nil, errorMsg("Invalid value %s for Weight", word)
			}
			u.Msg.Weight = u32Struct(n)
			u.Changes++
		case abbrev(tag, "Comment", 2):
			u.Msg.Comment = v0044.NewOptString(val)
			u.Changes++
		case abbrev(tag, "Reason", 1):
			reason := strings.TrimPrefix(val, `"`)
			reason = strings.TrimSuffix(reason, `"`)
			u.Msg.Reason = v0044.NewOptString(reason)
			u.Changes++
		case abbrev(tag, "ResumeAfter", 1):
			if val == "-1" {
				u.Msg.ResumeAfter = infiniteU32()
			} else if n, ok := parseUint(val, 32); ok {
				u.Msg.ResumeAfter = u32Struct(n)
			} else {
				return nil, errorMsg("Invalid value %s for ResumeAfter", word)
			}
			u.Changes++
		case abbrev(tag, "State", 1):
			matched := false
			for _, s := range nodeStateWords {
				if abbrev(val, s.word, s.min) {
					u.Msg.State = s.states
					state, matched = s.word, true
					break
				}
			}
			if !matched {
				for _, name := range nodeBaseStateNames {
					if abbrev(val, name, 3) {
						u.Msg.State = []v0044.V0044UpdateNodeMsgStateItem{v0044.V0044UpdateNodeMsgStateItem(name)}
						state, matched = name, true
						break
					}
				}
			}
			if !matched {
				return nil, rawMsg("Invalid input: %s\nRequest aborted\n"+
					"Valid states are: NoResp DRAIN FAIL FUTURE RESUME POWER_DOWN POWER_UP UNDRAIN\n"+
					"Not all states are valid given a node's prior state\n", word)
			}
			u.Changes++
		case abbrev(tag, "Topology", 4):
			u.Msg.TopologyStr = v0044.NewOptString(val)
			u.Changes++
		default:
			return nil, rawMsg("Update of this parameter is not supported: %s\nRequest aborted\n", word)
		}
	}
	if (state == "DOWN" || state == "DRAIN" || state == "FAIL") && u.Msg.Reason.Or("") == "" {
		return nil, rawMsg("You must specify a reason when DOWNING or DRAINING a node. Request denied\n")
	}
	if u.Msg.ResumeAfter.Set && state != "DOWN" && state != "DRAIN" {
		return nil, rawMsg("You can only specify a resume time when DOWNING or DRAINING a node. Request denied\n")
	}
	if u.Changes == 0 {
		return nil, rawMsg("No changes specified\n")
	}
	return u, nil
}

func splitCSV(s string) v0044.V0044CsvString {
	if s == "" {
		return v0044.V0044CsvString{}
	}
	return v0044.V0044CsvString(strings.Split(s, ","))
}

// updateNode runs "update NodeName=... <changes>": one POST /node/{name}
// whose name is the NodeName= expression, which the controller expands as
// slurmctld expands update_node_msg's node_names.
func (c *cmd) updateNode(ctx context.Context, argv []string) {
	u, perr := parseNodeUpdate(argv)
	if perr != nil {
		c.report(perr)
		return
	}
	res, err := c.env.Client.SlurmV0044PostNode(ctx, v0044.NewOptV0044UpdateNodeMsg(u.Msg), v0044.SlurmV0044PostNodeParams{NodeName: u.Names})
	var re *restError
	if err != nil {
		var failed bool
		if re, failed = fromTransport(err); !failed {
			return
		}
	} else {
		switch r := res.(type) {
		case *v0044.V0044OpenapiResp:
			if e := fromErrors(r.Errors, 200); e != nil && e.Code != 0 {
				re = e
			}
		case *v0044.V0044OpenapiRespStatusCode:
			if re = fromErrors(r.Response.Errors, r.StatusCode); re == nil {
				re = fromStatus(r.StatusCode)
			}
		default:
			re = fromStatus(0)
		}
	}
	if re != nil {
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "slurm_update error: %s\n", re.Message)
	}
}
