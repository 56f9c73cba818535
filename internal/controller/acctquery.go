package controller

import (
	"context"
	"slices"
	"time"

	"github.com/droverhq/drover/internal/acctdb"
	"github.com/droverhq/drover/internal/slurmerr"
)

// AcctReader reads job records back (acctdb.Lazy).
type AcctReader interface {
	Jobs(ctx context.Context, f acctdb.Filter) ([]acctdb.Job, error)
	Steps(ctx context.Context, runs []acctdb.Job) ([]acctdb.Step, error)
}

// MsgAccountingDisabled is what sacct and slurmdbd's job queries say
// under accounting_storage/none.
const MsgAccountingDisabled = "Slurm accounting storage is disabled"

// AccountingJobs returns the job records f selects that who may see,
// with their steps. Under PrivateData=jobs a user other than an
// operator sees only their own, as slurmdbd shows them.
func (c *Controller) AccountingJobs(ctx context.Context, who Identity, f acctdb.Filter) ([]acctdb.Job, []acctdb.Step, error) {
	r, ok := c.cfg.Accounting.(AcctReader)
	if c.cfg.Accounting == nil || !ok {
		return nil, nil, slurmerr.New(slurmerr.Disabled, MsgAccountingDisabled)
	}
	if c.Hides("jobs", who) {
		f.UIDs, f.Users = []uint32{who.UID}, nil
	}
	jobs, err := r.Jobs(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	steps, err := r.Steps(ctx, jobs)
	if err != nil {
		return nil, nil, err
	}
	return jobs, steps, nil
}

// UsageReader adds up usage over a period (acctdb.Lazy).
type UsageReader interface {
	Usage(ctx context.Context, q acctdb.UsageQuery) ([]acctdb.ClusterUsage, error)
}

// AccountingUsage is sreport's data: each cluster's usage over the
// period, by account and user and by job size. Under PrivateData=usage a
// user other than an operator sees only their own associations.
func (c *Controller) AccountingUsage(ctx context.Context, who Identity, q acctdb.UsageQuery) ([]acctdb.ClusterUsage, error) {
	r, ok := c.cfg.Accounting.(UsageReader)
	if c.cfg.Accounting == nil || !ok {
		return nil, slurmerr.New(slurmerr.Disabled, MsgAccountingDisabled)
	}
	// What has not reached the store yet belongs in the report.
	if err := c.FlushAccounting(ctx); err != nil {
		return nil, err
	}
	out, err := r.Usage(ctx, q)
	if err != nil {
		return nil, err
	}
	if c.Hides("usage", who) {
		for i := range out {
			u := &out[i]
			u.Assocs = slices.DeleteFunc(u.Assocs, func(a acctdb.AssocUsage) bool { return a.UID != who.UID })
			u.Sizes = nil
		}
	}
	return out, nil
}

// clusterSizer reads and keeps the cluster's size (acctdb.Lazy).
type clusterSizer interface {
	ClusterSize(ctx context.Context, cluster string) (uint32, time.Time, bool, error)
}

// recordClusterSize writes the cluster's CPU count when the store does
// not have it yet or has another: the size sreport counts as Reported
// from then on (slurmdbd's cluster TRES events).
func (c *Controller) recordClusterSize(ctx context.Context) error {
	sz, ok := c.cfg.Accounting.(clusterSizer)
	if !ok {
		return nil
	}
	c.mu.RLock()
	var cpus uint32
	for _, n := range c.nodes {
		cpus += n.CPUs
	}
	c.mu.RUnlock()
	if c.acctCPUs.Load() == int64(cpus) {
		return nil
	}
	have, since, ok, err := sz.ClusterSize(ctx, c.cfg.ClusterName)
	if err != nil {
		return err
	}
	now := time.Now()
	var b acctdb.Batch
	if ok && have != cpus {
		b.Events = append(b.Events, acctdb.Event{Cluster: c.cfg.ClusterName, Start: since, End: now, State: acctdb.ClusterEvent, CPUs: have})
	}
	if !ok || have != cpus {
		b.Events = append(b.Events, acctdb.Event{Cluster: c.cfg.ClusterName, Start: now, State: acctdb.ClusterEvent, CPUs: cpus})
	}
	if err := c.cfg.Accounting.Put(ctx, b); err != nil {
		return err
	}
	c.acctCPUs.Store(int64(cpus))
	return nil
}
