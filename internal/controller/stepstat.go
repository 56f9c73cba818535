package controller

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmerr"
	stepproto "github.com/droverhq/drover/internal/step/proto"
)

// statTimeout bounds how long sstat waits for a node's answer.
const statTimeout = 10 * time.Second

// StepStats asks the nodes of a running job's steps what their tasks
// use now (sstat): every running step, the batch script's included, or
// only step when it is not nil. Only the job's owner and operators may
// ask, as slurmctld hands the step layout sstat needs only to them. A
// node that does not answer is reported with its error.
func (c *Controller) StepStats(ctx context.Context, who Identity, id job.ID, step *uint32) ([]stepproto.StepStat, error) {
	type target struct {
		step  uint32
		nodes []string
	}
	var targets []target
	c.mu.RLock()
	j := c.st.Jobs[id]
	if j != nil && j.State == job.Running {
		if j.RunsScript() && j.BatchHost != "" {
			targets = append(targets, target{stepproto.BatchStep, []string{j.BatchHost}})
		}
		for _, s := range c.st.Steps[id] {
			targets = append(targets, target{s.ID, slices.Clone(s.Nodes)})
		}
	}
	addrs := map[string]string{}
	for _, t := range targets {
		for _, n := range t.nodes {
			if nd := c.nodes[n]; nd != nil {
				addrs[n] = nd.DaemonAddr
			}
		}
	}
	var owner uint32
	if j != nil {
		owner = j.Req.UserID
	}
	c.mu.RUnlock()
	switch {
	case j == nil:
		return nil, slurmerr.New(slurmerr.InvalidJobID, "")
	case owner != who.UID && !c.privileged(who):
		return nil, slurmerr.New(slurmerr.AccessDenied, "")
	}
	if step != nil {
		targets = slices.DeleteFunc(targets, func(t target) bool { return t.step != *step })
	}
	ctx, cancel := context.WithTimeout(ctx, statTimeout)
	defer cancel()
	out := make([]stepproto.StepStat, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		out[i] = stepproto.StepStat{JobID: uint32(id), StepID: t.step, Nodes: make([]stepproto.NodeStat, len(t.nodes))}
		for k, n := range t.nodes {
			ns := &out[i].Nodes[k]
			ns.Node = n
			addr := addrs[n]
			if addr == "" {
				ns.Error = "node is not registered"
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				var reply nodeproto.StepStat
				req := nodeproto.StepStatRequest{JobID: uint32(id), StepID: t.step}
				if err := c.client.Post(ctx, msgauth.Node(n), c.client.URL(addr, nodeproto.PathStepStat), req, &reply); err != nil {
					ns.Error = err.Error()
					return
				}
				ns.Tasks = reply.Tasks
			}()
		}
	}
	wg.Wait()
	return out, nil
}
