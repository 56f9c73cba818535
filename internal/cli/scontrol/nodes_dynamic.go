package scontrol

import (
	"context"
	"strings"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// createNode is scontrol create NodeName=...: the arguments, joined, are
// the node line the controller makes dynamic nodes from.
func (c *cmd) createNode(ctx context.Context, argv []string) {
	line := strings.Join(argv, " ")
	res, err := c.env.Client.SlurmV0044PostNewNode(ctx, v0044.NewOptV0044OpenapiCreateNodeReq(v0044.V0044OpenapiCreateNodeReq{NodeConf: line}))
	if re := plainResult(res, err); re != nil {
		c.perror("Error creating node(s)", re)
		c.printReason(re)
	}
}

// deleteNode is scontrol delete NodeName=NAMES.
func (c *cmd) deleteNode(ctx context.Context, word, names string) {
	res, err := c.env.Client.SlurmV0044DeleteNode(ctx, v0044.SlurmV0044DeleteNodeParams{NodeName: names})
	if re := plainResult(res, err); re != nil {
		c.perror("delete_node "+word, re)
		c.printReason(re)
	}
}

// printReason prints the controller's reason after slurm_perror's line, which
// slurmctld would have put in its log.
func (c *cmd) printReason(re *restError) {
	if re.Description != "" && re.Description != re.Message && c.quiet != 1 {
		c.env.Stderr.Write([]byte(c.prog + ": error: " + re.Description + "\n"))
	}
}

// plainResult reads an answer with no payload: nil on success.
func plainResult(res any, err error) *restError {
	if err != nil {
		re, _ := fromTransport(err)
		return re
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiResp:
		if re := fromErrors(r.Errors, 200); re != nil && re.Code != 0 {
			return re
		}
		return nil
	case *v0044.V0044OpenapiRespStatusCode:
		if re := fromErrors(r.Response.Errors, r.StatusCode); re != nil {
			return re
		}
		return fromStatus(r.StatusCode)
	}
	return fromStatus(0)
}
