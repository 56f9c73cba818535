package controller

import (
	"context"

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
