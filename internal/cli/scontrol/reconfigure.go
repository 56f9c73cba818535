package scontrol

import (
	"context"
)

// reconfigure is scontrol reconfigure: the controller reads slurm.conf
// again. Silent on success; a refusal is slurm_perror's line, then the
// controller's reason (slurmctld keeps that in its log).
func (c *cmd) reconfigure(ctx context.Context) {
	res, err := c.env.Client.SlurmV0044GetReconfigure(ctx)
	if re := plainResult(res, err); re != nil {
		c.perror("slurm_reconfigure error", re)
		c.printReason(re)
	}
}
