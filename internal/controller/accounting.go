package controller

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/priority"
	"github.com/droverhq/drover/internal/slurmerr"
)

// Accounting returns the accounting model. A change replaces the model
// whole, so the one returned never changes: callers must not change it
// either.
func (c *Controller) Accounting() *assoc.Model {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.st.Acct
}

// ChangeAccounting applies a change to the accounting model for who, as
// slurmdbd does for sacctmgr: operators only, whole or not at all. A
// record that active jobs still run under cannot be deleted.
func (c *Controller) ChangeAccounting(ctx context.Context, who Identity, ch assoc.Change) error {
	if !c.privileged(who) {
		return slurmerr.New(slurmerr.AccessDenied, "")
	}
	if len(ch) == 0 {
		return nil
	}
	c.mu.RLock()
	next, err := c.st.Acct.Apply(ch)
	busy := err == nil && c.activeUnderLocked(ch, c.st.Acct.Removed(next))
	c.mu.RUnlock()
	if err != nil {
		return err
	}
	if busy {
		return slurmerr.New(slurmerr.JobsRunningOnAssoc, "")
	}
	if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpAcct, Acct: &ctlstate.AcctCmd{Change: ch}}); err != nil {
		return err
	}
	c.mu.Lock()
	c.acctChangedLocked()
	c.mu.Unlock()
	c.Kick()
	return nil
}

// activeUnderLocked reports whether a job not yet ended runs under an
// association the change removes (those below a deleted account
// included) or a QOS it deletes.
func (c *Controller) activeUnderLocked(ch assoc.Change, removed []assoc.Association) bool {
	qos := map[string]bool{}
	for _, it := range ch {
		if it.Delete && it.Kind == assoc.KindQOS && it.QOS != nil {
			qos[it.QOS.Name] = true
		}
	}
	under := func(j *job.Job) bool {
		if qos[j.Req.QOS] {
			return true
		}
		for _, a := range removed {
			if j.Req.Account == a.Account && (a.User == "" || j.Req.UserName == a.User) &&
				(a.Partition == "" || j.Req.Partition == a.Partition) {
				return true
			}
		}
		return false
	}
	for _, id := range c.st.JobIDs() {
		if j := c.st.Jobs[id]; !j.State.Terminal() && under(j) {
			return true
		}
	}
	return false
}

// acctChangedLocked refreshes what is derived from the accounting model:
// who operates the cluster, and the fair-share tree.
func (c *Controller) acctChangedLocked() {
	admins := map[string]assoc.AdminLevel{}
	for _, u := range c.st.Acct.Users() {
		if u.AdminLevel >= assoc.AdminOperator {
			admins[u.Name] = u.AdminLevel
		}
	}
	// Drover's settings name operators and administrators too, for
	// clusters whose accounting has no users yet; the higher level wins.
	for _, name := range c.cfg.Operators {
		admins[name] = max(admins[name], assoc.AdminOperator)
	}
	for _, name := range c.cfg.Administrators {
		admins[name] = assoc.AdminAdministrator
	}
	c.admins.Store(&admins)
	c.fairShareLocked()
}

// adminSet is the users whose AdminLevel makes them operators, with
// their level; read without the controller's lock, since permission
// checks run everywhere.
type adminSet = atomic.Pointer[map[string]assoc.AdminLevel]

// isAdmin reports whether user is an operator or an administrator.
func (c *Controller) isAdmin(user string) bool {
	m := c.admins.Load()
	return m != nil && (*m)[user] >= assoc.AdminOperator
}

// isSuperAdmin reports whether user is an administrator.
func (c *Controller) isSuperAdmin(user string) bool {
	m := c.admins.Load()
	return m != nil && (*m)[user] >= assoc.AdminAdministrator
}

// resolveAccountLocked gives a job its account and QOS, as slurmctld's
// job_create does with the association manager: the account requested or
// the user's default, the QOS requested or the association's default (or
// normal). What AccountingStorageEnforce enforces is refused with Slurm's
// errors; otherwise a job outside every association is let through.
func (c *Controller) resolveAccountLocked(r *job.Request) error {
	m := c.st.Acct
	enf := c.cfg.Enforce
	r.Account = strings.ToLower(r.Account)
	a, ok := m.Resolve(r.UserName, r.Account, r.Partition)
	if !ok {
		if enf.Associations {
			return slurmerr.New(slurmerr.InvalidAccount, "")
		}
		if r.QOS != "" {
			if _, known := m.QOS(r.QOS); !known && enf.QOS {
				return slurmerr.New(slurmerr.InvalidQOS, "")
			}
		}
		return nil
	}
	r.Account = a.Account
	eff := m.Effective(a)
	if r.QOS == "" {
		r.QOS = eff.DefaultQOS
		if r.QOS == "" && len(eff.QOS) == 1 {
			r.QOS = eff.QOS[0]
		}
		if r.QOS == "" {
			if _, known := m.QOS("normal"); known {
				r.QOS = "normal"
			}
		}
		return nil
	}
	r.QOS = strings.ToLower(r.QOS)
	if _, known := m.QOS(r.QOS); !known {
		return slurmerr.New(slurmerr.InvalidQOS, "")
	}
	if enf.QOS && !contains(eff.QOS, r.QOS) {
		return slurmerr.New(slurmerr.InvalidQOS, "")
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// jobAssocKey is the fair-share key of the association a job's usage
// counts against. A job outside every association (accounting not
// enforced) counts as a user of one share under its account, or under
// root when its account has no association.
func jobAssocKey(m *assoc.Model, j *job.Job) string {
	account := j.Req.Account
	if _, ok := m.Assoc(account, "", ""); !ok {
		account = "root"
	}
	return priority.AssocKey(account, j.Req.UserName)
}

// shareAssocsLocked is the fair-share tree: every association of the
// model (one per account and user, partition-specific ones folded into
// theirs), and an implicit one of one share for every user that has
// usage or jobs but no association.
func (c *Controller) shareAssocsLocked() []priority.ShareAssoc {
	m := c.st.Acct
	var out []priority.ShareAssoc
	seen := map[string]bool{}
	for _, a := range m.Associations() {
		key := priority.AssocKey(a.Account, a.User)
		if a.User == "" {
			key = a.Account
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		parent := a.ParentAccount
		if a.User != "" {
			parent = a.Account
		}
		out = append(out, priority.ShareAssoc{Account: a.Account, User: a.User, Parent: parent, Shares: a.Shares})
	}
	implicit := func(key string) {
		if seen[key] {
			return
		}
		account, user, ok := strings.Cut(key, "/")
		if !ok || user == "" {
			return
		}
		if !seen[account] {
			account = "root"
			key = priority.AssocKey(account, user)
			if seen[key] {
				return
			}
		}
		seen[key] = true
		out = append(out, priority.ShareAssoc{Account: account, User: user, Parent: account, Shares: 1})
	}
	for _, key := range slices.Sorted(maps.Keys(c.st.Usage)) {
		implicit(key)
	}
	for _, id := range c.st.JobIDs() {
		implicit(jobAssocKey(m, c.st.Jobs[id]))
	}
	return out
}
