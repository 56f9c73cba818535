package controller

import (
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
)

// ConfigFiles answers a configuration request (REQUEST_CONFIG): the
// files for a node daemon (forNode) or a login host, as this controller
// read them with its slurm.conf. Without enable_configless it is
// refused with ESLURM_CONFIGLESS_DISABLED and logged, as slurmctld
// rejects it.
func (c *Controller) ConfigFiles(forNode bool) (*nodeproto.ConfigReply, error) {
	if c.cfg.Configless == nil {
		c.logger.Error("configuration request rejected as configless is disabled")
		return nil, slurmerr.New(slurmerr.ConfiglessDisabled, "")
	}
	if forNode {
		return c.cfg.Configless.Slurmd, nil
	}
	return c.cfg.Configless.Clients, nil
}

// Signer signs what the controller sends with the cluster key, as
// slurmctld: its messages to nodes and the configuration replies.
func (c *Controller) Signer() *msgauth.Signer { return c.client.Signer }
