package scontrol

import (
	"context"
	"fmt"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// reconfigure is scontrol reconfigure: the controller reads slurm.conf
// again. Silent on success; a refusal is slurm_perror's line, then the
// controller's reason (slurmctld keeps that in its log).
func (c *cmd) reconfigure(ctx context.Context) {
	re := c.postReconfigure(ctx)
	if re == nil {
		return
	}
	c.perror("slurm_reconfigure error", re)
	if re.Description != "" && re.Description != re.Message && c.quiet != 1 {
		fmt.Fprintf(c.env.Stderr, "%s: error: %s\n", c.prog, re.Description)
	}
}

func (c *cmd) postReconfigure(ctx context.Context) *restError {
	res, err := c.env.Client.SlurmV0044GetReconfigure(ctx)
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
