package scontrol

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/droverhq/drover/internal/timefmt"
	v0044 "github.com/droverhq/drover/openapi/v0044"
	v0045 "github.com/droverhq/drover/openapi/v0045"
)

// parsePartition reads scontrol's PartitionName= options into a v0.0.45
// partition record, as scontrol_parse_part_options does; "" and false
// when the words are refused (the message is printed).
func (c *cmd) parsePartition(argv []string) (v0045.V0045PartitionInfo, bool) {
	var p v0045.V0045PartitionInfo
	refuse := func(format string, args ...any) (v0045.V0045PartitionInfo, bool) {
		c.exitCode = 1
		if c.quiet != 1 {
			fmt.Fprintf(c.env.Stderr, "%s: error: %s\n%s: error: Request aborted\n", c.prog, fmt.Sprintf(format, args...), c.prog)
		}
		return p, false
	}
	limit := func(v string) (v0045.V0045Uint32NoValStruct, bool) {
		if strings.EqualFold(v, "UNLIMITED") || strings.EqualFold(v, "INFINITE") {
			return v0045.V0045Uint32NoValStruct{Set: v0045.NewOptBool(false), Infinite: v0045.NewOptBool(true)}, true
		}
		n, err := strconv.ParseUint(v, 10, 31)
		return v0045.V0045Uint32NoValStruct{Set: v0045.NewOptBool(true), Number: v0045.NewOptInt32(int32(n))}, err == nil
	}
	minutes := func(v string) (v0045.V0045Uint32NoValStruct, bool) {
		l, err := timefmt.ParseLimit(v)
		if err != nil {
			return v0045.V0045Uint32NoValStruct{}, false
		}
		if l.Infinite {
			return v0045.V0045Uint32NoValStruct{Set: v0045.NewOptBool(false), Infinite: v0045.NewOptBool(true)}, true
		}
		return v0045.V0045Uint32NoValStruct{Set: v0045.NewOptBool(true), Number: v0045.NewOptInt32(int32(l.Minutes))}, true
	}
	yes := func(v string) (bool, bool) {
		switch strings.ToUpper(v) {
		case "YES", "Y", "1":
			return true, true
		case "NO", "N", "0":
			return false, true
		}
		return false, false
	}
	part := v0045.V0045PartitionInfoPartition{}
	max := v0045.V0045PartitionInfoMaximums{}
	def := v0045.V0045PartitionInfoDefaults{}
	pri := v0045.V0045PartitionInfoPriority{}
	var setPart, setMax, setDef, setPri bool
	for _, arg := range argv {
		key, val, ok := strings.Cut(arg, "=")
		if !ok {
			return refuse("Invalid input: %s", arg)
		}
		var good = true
		switch {
		case abbrev(key, "PartitionName", 3):
			p.Name = v0045.NewOptString(val)
		case abbrev(key, "Nodes", 1):
			p.Nodes = v0045.NewOptV0045PartitionInfoNodes(v0045.V0045PartitionInfoNodes{Configured: v0045.NewOptString(val)})
		case abbrev(key, "State", 2):
			st := v0045.V0045PartitionInfoPartitionStateItem(strings.ToUpper(val))
			switch st {
			case v0045.V0045PartitionInfoPartitionStateItemUP, v0045.V0045PartitionInfoPartitionStateItemDOWN,
				v0045.V0045PartitionInfoPartitionStateItemDRAIN, v0045.V0045PartitionInfoPartitionStateItemINACTIVE:
				part.State, setPart = []v0045.V0045PartitionInfoPartitionStateItem{st}, true
			default:
				return refuse("Invalid input: %s\nAcceptable State values are UP, DOWN, DRAIN and INACTIVE", arg)
			}
		case abbrev(key, "OverSubscribe", 2) || abbrev(key, "Shared", 2):
			part.Oversubscribe, setPart = v0045.NewOptString(strings.ToUpper(val)), true
		case abbrev(key, "MaxTime", 4):
			var v v0045.V0045Uint32NoValStruct
			v, good = minutes(val)
			max.Time, setMax = v0045.NewOptV0045Uint32NoValStruct(v), true
		case abbrev(key, "DefaultTime", 8):
			var v v0045.V0045Uint32NoValStruct
			v, good = minutes(val)
			def.Time, setDef = v0045.NewOptV0045Uint32NoValStruct(v), true
		case abbrev(key, "MaxNodes", 4):
			var v v0045.V0045Uint32NoValStruct
			v, good = limit(val)
			max.Nodes, setMax = v0045.NewOptV0045Uint32NoValStruct(v), true
		case abbrev(key, "MinNodes", 2):
			n, err := strconv.ParseUint(val, 10, 31)
			good = err == nil
			p.Minimums = v0045.NewOptV0045PartitionInfoMinimums(v0045.V0045PartitionInfoMinimums{Nodes: v0045.NewOptInt32(int32(n))})
		case abbrev(key, "PriorityTier", 9) || strings.EqualFold(key, "Priority"):
			n, err := strconv.ParseUint(val, 10, 16)
			good = err == nil
			pri.Tier, setPri = v0045.NewOptInt32(int32(n)), true
		case abbrev(key, "PriorityJobFactor", 9):
			n, err := strconv.ParseUint(val, 10, 16)
			good = err == nil
			pri.JobFactor, setPri = v0045.NewOptInt32(int32(n)), true
		case abbrev(key, "QOS", 3):
			p.Qos = v0045.NewOptV0045PartitionInfoQos(v0045.V0045PartitionInfoQos{Assigned: v0045.NewOptString(val)})
		case abbrev(key, "GraceTime", 2):
			n, err := strconv.ParseUint(val, 10, 31)
			good = err == nil
			p.GraceTime = v0045.NewOptInt32(int32(n))
		case abbrev(key, "Default", 7):
			var on bool
			on, good = yes(val)
			p.Flags = append(p.Flags, map[bool]v0045.V0045PartitionInfoFlagsItem{true: v0045.V0045PartitionInfoFlagsItemDEFAULT, false: v0045.V0045PartitionInfoFlagsItemDEFAULTCLEAR}[on])
		case abbrev(key, "Hidden", 1):
			var on bool
			on, good = yes(val)
			p.Flags = append(p.Flags, map[bool]v0045.V0045PartitionInfoFlagsItem{true: v0045.V0045PartitionInfoFlagsItemHIDDEN, false: v0045.V0045PartitionInfoFlagsItemHIDDENCLEAR}[on])
		case abbrev(key, "DefMemPerCPU", 10) || abbrev(key, "DefMemPerNode", 10) || abbrev(key, "MaxMemPerNode", 10):
			n, err := strconv.ParseUint(val, 10, 63)
			good = err == nil
			v := v0045.NewOptV0045Uint64NoValStruct(v0045.V0045Uint64NoValStruct{Set: v0045.NewOptBool(true), Number: v0045.NewOptInt64(int64(n))})
			switch {
			case abbrev(key, "DefMemPerCPU", 10):
				def.PartitionMemoryPerCPU, setDef = v, true
			case abbrev(key, "DefMemPerNode", 10):
				def.PartitionMemoryPerNode, setDef = v, true
			default:
				max.PartitionMemoryPerNode, setMax = v, true
			}
		default:
			return refuse("Update of this parameter is not supported: %s", arg)
		}
		if !good {
			return refuse("Invalid input: %s", arg)
		}
	}
	if !p.Name.Set {
		return refuse("PartitionName must be given.")
	}
	if setPart {
		p.Partition = v0045.NewOptV0045PartitionInfoPartition(part)
	}
	if setMax {
		p.Maximums = v0045.NewOptV0045PartitionInfoMaximums(max)
	}
	if setDef {
		p.Defaults = v0045.NewOptV0045PartitionInfoDefaults(def)
	}
	if setPri {
		p.Priority = v0045.NewOptV0045PartitionInfoPriority(pri)
	}
	return p, true
}

// setPartition is scontrol create and update PartitionName=: both post
// the record; the controller makes the partition when it does not exist.
// create refuses a name that exists first, as slurmctld does.
func (c *cmd) setPartition(ctx context.Context, argv []string, create bool) {
	p, ok := c.parsePartition(argv)
	if !ok {
		return
	}
	what := "slurm_update error"
	if create {
		what = "Error creating the partition"
	}
	if exists := c.partitionExists(ctx, p.Name.Value); exists == create {
		c.perror(what, &restError{Message: slurmerr.InvalidPartitionName.Message()})
		return
	}
	c.postPartitions(ctx, what, p)
}

// partitionExists asks the controller whether a partition is known.
func (c *cmd) partitionExists(ctx context.Context, name string) bool {
	res, err := c.env.Client.SlurmV0044GetPartition(ctx, v0044.SlurmV0044GetPartitionParams{PartitionName: name})
	if err != nil {
		return false
	}
	r, ok := res.(*v0044.V0044OpenapiPartitionResp)
	return ok && len(r.Partitions) > 0
}

func (c *cmd) postPartitions(ctx context.Context, what string, p v0045.V0045PartitionInfo) {
	if c.env.Client45 == nil {
		c.errorf("partitions cannot be changed through this client")
		return
	}
	res, err := c.env.Client45.SlurmV0045PostPartitions(ctx, v0045.NewOptV0045OpenapiPartitionsModReq(v0045.V0045OpenapiPartitionsModReq{Partitions: v0045.V0045UpdatePartitionMsgList{p}}))
	if re := plainResult45(res, err); re != nil {
		c.perror(what, re)
		c.printReason(re)
	}
}

// deletePartition is scontrol delete PartitionName=NAME.
func (c *cmd) deletePartition(ctx context.Context, word, name string) {
	if c.env.Client45 == nil {
		c.errorf("partitions cannot be deleted through this client")
		return
	}
	res, err := c.env.Client45.SlurmV0045DeletePartition(ctx, v0045.SlurmV0045DeletePartitionParams{PartitionName: name})
	if re := plainResult45(res, err); re != nil {
		c.perror("delete_partition "+word, re)
		c.printReason(re)
	}
}

// plainResult45 reads a v0.0.45 answer with no payload: nil on success.
func plainResult45(res any, err error) *restError {
	if err != nil {
		re, _ := fromTransport(err)
		return re
	}
	var errs v0045.V0045OpenapiErrors
	status := 200
	switch r := res.(type) {
	case *v0045.V0045OpenapiResp:
		errs = r.Errors
	case *v0045.V0045OpenapiRespStatusCode:
		errs, status = r.Response.Errors, r.StatusCode
	default:
		return fromStatus(0)
	}
	for _, e := range errs {
		if code := e.ErrorNumber.Or(0); code != 0 || status != 200 {
			return &restError{Code: code, Message: e.Error.Or(""), Description: e.Description.Or(""), Status: status}
		}
	}
	if status != 200 {
		return fromStatus(status)
	}
	return nil
}
