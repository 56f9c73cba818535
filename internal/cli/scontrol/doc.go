package scontrol

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/cli/slurmjson"
	"github.com/droverhq/drover/internal/cli/wireval"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/hostlist"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// docFormat is what --json and --yaml ask for: scontrol show prints the
// document slurmrestd answers for the same records (25.11's scontrol
// dumps OPENAPI_JOB_INFO_RESP, OPENAPI_NODES_RESP, OPENAPI_PARTITION_RESP
// and OPENAPI_RESERVATION_RESP), its meta block describing this command.
type docFormat string

const (
	docNone docFormat = ""
	docJSON docFormat = "json"
	docYAML docFormat = "yaml"
)

// readDocFormat reads --json[=parser] and --yaml[=parser]: only the
// v0.0.44 data parser is here.
func readDocFormat(jsonArg, yamlArg string) (docFormat, error) {
	f, arg := docNone, ""
	switch {
	case jsonArg != "":
		f, arg = docJSON, jsonArg
	case yamlArg != "":
		f, arg = docYAML, yamlArg
	default:
		return docNone, nil
	}
	if arg != " " && arg != "v0.0.44" && arg != "data_parser/v0.0.44" {
		return docNone, fmt.Errorf("%s output is only available with data parser v0.0.44, not %s", map[docFormat]string{docJSON: "JSON", docYAML: "YAML"}[f], arg)
	}
	return f, nil
}

// showDoc is show's --json/--yaml output for jobs, nodes, partitions and
// reservations; false for an entity that has no document (config,
// hostnames...), which then prints as text.
func (c *cmd) showDoc(ctx context.Context, entity string, val *string) bool {
	var (
		doc    slurmjson.Encoder
		schema slurmjson.Schema
		meta   *v0044.OptV0044OpenapiMeta
		errs   *v0044.V0044OpenapiErrors
		warns  *v0044.V0044OpenapiWarnings
		failed bool
	)
	switch entity {
	case "jobs":
		var r v0044.V0044OpenapiJobInfoResp
		failed = c.docJobs(ctx, val, &r)
		doc, schema, meta, errs, warns = &r, slurmjson.JobInfoResp(), &r.Meta, &r.Errors, &r.Warnings
	case "nodes":
		var r v0044.V0044OpenapiNodesResp
		failed = c.docNodes(ctx, val, &r)
		doc, schema, meta, errs, warns = &r, slurmjson.NodesResp(), &r.Meta, &r.Errors, &r.Warnings
	case "partitions":
		var r v0044.V0044OpenapiPartitionResp
		failed = c.docPartitions(ctx, val, &r)
		doc, schema, meta, errs, warns = &r, slurmjson.PartitionResp(), &r.Meta, &r.Errors, &r.Warnings
	case "reservations":
		var r v0044.V0044OpenapiReservationResp
		failed = c.docReservations(ctx, val, &r)
		doc, schema, meta, errs, warns = &r, slurmjson.ReservationResp(), &r.Meta, &r.Errors, &r.Warnings
	default:
		return false
	}
	*meta = v0044.NewOptV0044OpenapiMeta(slurmjson.CLIMeta(c.prog, c.args, c.env.User.Name, c.env.User.GID, clienv.SlurmVersion, *meta))
	if *errs == nil {
		*errs = v0044.V0044OpenapiErrors{}
	}
	if *warns == nil {
		*warns = v0044.V0044OpenapiWarnings{}
	}
	if failed {
		c.exitCode = 1
	}
	text, err := slurmjson.Format(doc, schema)
	if err == nil && c.doc == docYAML {
		text, err = slurmjson.YAML(text)
	}
	if err != nil {
		c.errorf("%v", err)
		c.exitCode = 1
		return true
	}
	if _, err := io.WriteString(c.env.Stdout, text); err != nil {
		c.exitCode = 1
	}
	return true
}

// transportErrors is a request that got no answer, as errors[].
func transportErrors(err error) v0044.V0044OpenapiErrors {
	re, _ := fromTransport(err)
	return v0044.V0044OpenapiErrors{{Error: v0044.NewOptString(re.Message), ErrorNumber: v0044.NewOptInt32(re.Code),
		Description: v0044.NewOptString(re.Description)}}
}

// docJobs fills r with one job (every record of an array or a
// heterogeneous job, narrowed to JOB_TASK or JOB+OFFSET) or all jobs; true
// when the controller refused.
func (c *cmd) docJobs(ctx context.Context, val *string, r *v0044.V0044OpenapiJobInfoResp) bool {
	var (
		jobID   uint64
		arrayID *uint32
		het     *uint32
	)
	if val != nil {
		var ok bool
		if jobID, arrayID, het, ok = parseJobSelector(*val); !ok {
			r.Jobs = v0044.V0044JobInfoMsg{}
			r.Errors = v0044.V0044OpenapiErrors{{Error: v0044.NewOptString("Invalid job id specified"), ErrorNumber: v0044.NewOptInt32(2017)}}
			return true
		}
	}
	var res any
	var err error
	if jobID == 0 {
		params := v0044.SlurmV0044GetJobsParams{}
		if c.detail {
			params.Flags = v0044.NewOptSlurmV0044GetJobsFlags(v0044.SlurmV0044GetJobsFlagsDETAIL)
		} else if c.all {
			params.Flags = v0044.NewOptSlurmV0044GetJobsFlags(v0044.SlurmV0044GetJobsFlagsALL)
		}
		res, err = c.env.Client.SlurmV0044GetJobs(ctx, params)
	} else {
		params := v0044.SlurmV0044GetJobParams{JobID: strconv.FormatUint(jobID, 10)}
		if c.detail {
			params.Flags = v0044.NewOptSlurmV0044GetJobFlags(v0044.SlurmV0044GetJobFlagsDETAIL)
		} else if c.all {
			params.Flags = v0044.NewOptSlurmV0044GetJobFlags(v0044.SlurmV0044GetJobFlagsALL)
		}
		res, err = c.env.Client.SlurmV0044GetJob(ctx, params)
	}
	failed := false
	switch t := res.(type) {
	case *v0044.V0044OpenapiJobInfoResp:
		*r = *t
	case *v0044.V0044OpenapiJobInfoRespStatusCode:
		*r, failed = t.Response, true
	default:
		r.Errors, failed = transportErrors(err), true
	}
	r.Jobs = slices.DeleteFunc(r.Jobs, func(j v0044.V0044JobInfo) bool {
		return (het != nil && u32(j.HetJobOffset) != uint64(*het)) || (arrayID != nil && !readmodel.ArrayHoldsTask(wireval.U32(j.ArrayTaskID), j.ArrayTaskString.Or(""), *arrayID))
	})
	if r.Jobs == nil {
		r.Jobs = v0044.V0044JobInfoMsg{}
	}
	return failed
}

// docNodes fills r with the nodes, or those of a hostlist.
func (c *cmd) docNodes(ctx context.Context, val *string, r *v0044.V0044OpenapiNodesResp) bool {
	res, err := c.env.Client.SlurmV0044GetNodes(ctx, c.nodeParams())
	failed := false
	switch t := res.(type) {
	case *v0044.V0044OpenapiNodesResp:
		*r = *t
	case *v0044.V0044OpenapiNodesRespStatusCode:
		*r, failed = t.Response, true
	default:
		r.Errors, failed = transportErrors(err), true
	}
	if val != nil {
		names, err := hostlist.Expand(*val)
		if err != nil {
			fmt.Fprintf(c.env.Stderr, "unable to parse node list %s\n", *val)
			failed = true
		}
		r.Nodes = slices.DeleteFunc(r.Nodes, func(n v0044.V0044Node) bool { return !slices.Contains(names, n.Name.Or("")) })
	}
	if r.Nodes == nil {
		r.Nodes = v0044.V0044Nodes{}
	}
	return failed
}

// docPartitions fills r with the partitions, or the one named.
func (c *cmd) docPartitions(ctx context.Context, val *string, r *v0044.V0044OpenapiPartitionResp) bool {
	params := v0044.SlurmV0044GetPartitionsParams{}
	if c.all {
		params.Flags = v0044.NewOptSlurmV0044GetPartitionsFlags(v0044.SlurmV0044GetPartitionsFlagsALL)
	}
	res, err := c.env.Client.SlurmV0044GetPartitions(ctx, params)
	failed := false
	switch t := res.(type) {
	case *v0044.V0044OpenapiPartitionResp:
		*r = *t
	case *v0044.V0044OpenapiPartitionRespStatusCode:
		*r, failed = t.Response, true
	default:
		r.Errors, failed = transportErrors(err), true
	}
	if val != nil {
		r.Partitions = slices.DeleteFunc(r.Partitions, func(p v0044.V0044PartitionInfo) bool { return p.Name.Or("") != *val })
	}
	if r.Partitions == nil {
		r.Partitions = v0044.V0044PartitionInfoMsg{}
	}
	return failed
}

// docReservations fills r with the reservations, or the one named.
func (c *cmd) docReservations(ctx context.Context, val *string, r *v0044.V0044OpenapiReservationResp) bool {
	res, err := c.env.Client.SlurmV0044GetReservations(ctx, v0044.SlurmV0044GetReservationsParams{})
	failed := false
	switch t := res.(type) {
	case *v0044.V0044OpenapiReservationResp:
		*r = *t
	case *v0044.V0044OpenapiReservationRespStatusCode:
		*r, failed = t.Response, true
	default:
		r.Errors, failed = transportErrors(err), true
	}
	if val != nil {
		r.Reservations = slices.DeleteFunc(r.Reservations, func(v v0044.V0044ReservationInfo) bool { return v.Name.Or("") != *val })
	}
	if r.Reservations == nil {
		r.Reservations = v0044.V0044ReservationInfoMsg{}
	}
	return failed
}

// nodeParams asks for the nodes -d, --future or -a show.
func (c *cmd) nodeParams() v0044.SlurmV0044GetNodesParams {
	params := v0044.SlurmV0044GetNodesParams{}
	switch {
	case c.detail:
		params.Flags = v0044.NewOptSlurmV0044GetNodesFlags(v0044.SlurmV0044GetNodesFlagsDETAIL)
	case c.future:
		params.Flags = v0044.NewOptSlurmV0044GetNodesFlags(v0044.SlurmV0044GetNodesFlagsFUTURE)
	case c.all:
		params.Flags = v0044.NewOptSlurmV0044GetNodesFlags(v0044.SlurmV0044GetNodesFlagsALL)
	}
	return params
}

// pingDoc is ping's --json/--yaml output: OPENAPI_PING_ARRAY_RESP, as
// 25.11's scontrol dumps it (the exit code is the dump's, 0).
func (c *cmd) pingDoc(pings []ping) {
	r := v0044.V0044OpenapiPingArrayResp{Pings: v0044.V0044ControllerPingArray{}, Errors: v0044.V0044OpenapiErrors{}, Warnings: v0044.V0044OpenapiWarnings{}}
	for i, p := range pings {
		pinged := "DOWN"
		if p.Pinged == "UP" || p.Responding {
			pinged = "UP"
		}
		mode := p.Mode
		if mode == "" {
			mode = droverapi.ControllerMode(i, len(pings))
		}
		r.Pings = append(r.Pings, v0044.V0044ControllerPing{
			Hostname: v0044.NewOptString(p.Hostname), Pinged: v0044.NewOptString(pinged),
			Responding: pinged == "UP", Latency: v0044.NewOptInt64(p.Latency),
			Mode: v0044.NewOptString(mode), Primary: i == 0,
		})
	}
	r.Meta = v0044.NewOptV0044OpenapiMeta(slurmjson.CLIMeta(c.prog, c.args, c.env.User.Name, c.env.User.GID, clienv.SlurmVersion, r.Meta))
	text, err := slurmjson.Format(&r, slurmjson.PingArrayResp())
	if err == nil && c.doc == docYAML {
		text, err = slurmjson.YAML(text)
	}
	if err != nil {
		c.errorf("%v", err)
		c.exitCode = 1
		return
	}
	if _, err := io.WriteString(c.env.Stdout, text); err != nil {
		c.exitCode = 1
	}
}
