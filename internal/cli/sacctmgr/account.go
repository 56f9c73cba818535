package sacctmgr

import (
	"fmt"
	"slices"
	"strings"
)

// What a condition sets, as sacctmgr's SA_SET_USER and SA_SET_ASSOC: the
// records themselves, or their associations.
const (
	setRecord = 1 << iota
	setAssoc
)

// acctCond is an account condition: names, descriptions and
// organizations, and association conditions.
type acctCond struct {
	names, descs, orgs []string
	assoc              assocCond
	format             []string
	withAssoc          bool
}

func (q *acctCond) matches(a acctRec) bool {
	in := func(list []string, v string) bool {
		return len(list) == 0 || slices.ContainsFunc(list, func(s string) bool { return strings.EqualFold(s, v) })
	}
	return in(q.names, a.name) && in(q.descs, a.desc) && in(q.orgs, a.org)
}

// acctCondWords reads an account condition (account _set_cond) from
// argv[i:].
func (c *cmd) acctCondWords(argv []string, i int, q *acctCond, withFormat bool) (int, int) {
	set := 0
	i = c.condWords(argv, i, func(o option) bool {
		v := o.arg()
		switch {
		case listFlag(o, &q.withAssoc):
		case !o.eq || o.is("Names", 1) || o.is("Accounts", 1) || o.is("Acct", 4):
			q.names = addToList(q.names, v, true)
			if len(q.names) > 0 {
				set |= setRecord
			}
		case o.is("Descriptions", 1):
			q.descs = addToList(q.descs, v, true)
			set |= setRecord
		case o.is("Flags", 2):
			c.notSupported(o.word)
			return false
		case o.is("Format", 2):
			if withFormat {
				q.format = addToList(q.format, v, true)
			}
		case o.is("Organizations", 1):
			q.orgs = addToList(q.orgs, v, true)
			set |= setRecord
		case c.assocCondWord(&q.assoc, o):
			set |= setAssoc
		default:
			c.fail()
			c.errf(" Unknown condition: %s\n Use keyword 'set' to modify value\n", o.word)
		}
		return true
	})
	return i, set
}

// listFlag reads a flag of an account or user condition: WithAssoc, and
// those Drover has nothing to add for (WithCoordinators, WithDeleted,
// WithRawQOSLevel, WOPLimits), or a "where" among the conditions; false
// when o is none of them.
func listFlag(o option, withAssoc *bool) bool {
	switch {
	case o.eq:
		return false
	case o.is("WithAssoc", 5):
		*withAssoc = true
	case o.is("WithCoordinators", 5) || o.is("WithDeleted", 5) || o.is("WithRawQOSLevel", 5) || o.is("WOPLimits", 4):
	case o.is("where", 5):
	default:
		return false
	}
	return true
}

// acctChange is what "set" (or add) gives an account.
type acctChange struct {
	desc, org *string
	assoc     assocChange
}

// acctRecWords reads account "set" words (account _set_rec); names and
// clusters go to their lists when not nil (add), else are refused.
func (c *cmd) acctRecWords(argv []string, i int, names, clusters *[]string, ch *acctChange) (int, int) {
	set := 0
	i = c.recWords(argv, i, func(o option, allow *bool) {
		v := o.arg()
		switch {
		case !o.eq || o.is("Accounts", 1) || o.is("Names", 1) || o.is("Acct", 4):
			if names != nil {
				*names = addToList(*names, v, true)
			} else {
				c.fail()
				c.errf(" Can't modify the name of an account\n")
			}
		case o.is("Clusters", 1):
			if clusters != nil {
				*clusters = addToList(*clusters, v, true)
			} else {
				c.fail()
				c.errf(" Can't modify the cluster of an account\n")
			}
		case o.is("Description", 1):
			d := stripQuotes(o.value, true)
			ch.desc = &d
			set |= setRecord
		case o.is("Flags", 2) || o.is("RawUsage", 7):
			*allow = true
			c.notSupported(o.word)
		case o.is("Organization", 1):
			org := stripQuotes(o.value, true)
			ch.org = &org
			set |= setRecord
		default:
			set |= c.assocRecWord(&ch.assoc, o, allow)
		}
	})
	return i, set
}

func (c *cmd) addAccount(argv []string) {
	var names, clusters []string
	var ch acctChange
	limitSet := readWords(argv, func(argv []string, i int) (int, int) {
		return c.acctRecWords(argv, i, &names, &clusters, &ch)
	})
	if c.exitCode != 0 {
		return
	}
	if len(names) == 0 {
		c.fail()
		c.errf(" Need name of account to add.\n")
		return
	}
	accounts, err := c.getAccounts()
	if c.requestFailed(err) {
		return
	}
	assocs, err := c.getAssocs(true)
	if c.requestFailed(err) {
		return
	}
	cluster := c.clusterName()
	for _, cl := range clusters {
		if cl != cluster {
			c.fail()
			c.errf(" error: Cluster '%s' has not been added yet, please contact your admin before adding accounts to it\n", cl)
			return
		}
	}
	parent := "root"
	if ch.assoc.parent != nil && *ch.assoc.parent != "" {
		parent = *ch.assoc.parent
	}
	hasAssoc := func(account string) bool {
		return slices.ContainsFunc(assocs, func(a assocRec) bool { return a.account == account && a.user == "" })
	}
	if !hasAssoc(parent) {
		c.fail()
		c.errf(" error: No parent account '%s' on cluster '%s'\n", parent, cluster)
		return
	}
	// What slurmdbd reports: the accounts it adds, then their
	// associations.
	var added, assocText strings.Builder
	addedAssoc := false
	for _, name := range names {
		if !slices.ContainsFunc(accounts, func(a acctRec) bool { return a.name == name }) {
			if added.Len() == 0 {
				added.WriteString(" Adding Account(s)\n")
			}
			fmt.Fprintf(&added, "  %s\n", name)
		}
		if hasAssoc(name) {
			fmt.Fprintf(&assocText, "Already existing account %s on cluster %s\n", name, cluster)
			continue
		}
		if assocText.Len() == 0 {
			assocText.WriteString(" Associations =\n")
		}
		fmt.Fprintf(&assocText, "  C = %-10s A = %-20s\n", cluster, name)
		addedAssoc = true
	}
	if added.Len() > 0 {
		d, o := "Account Name", "Parent/Account Name"
		if ch.desc != nil {
			d = *ch.desc
		}
		if ch.org != nil {
			o = *ch.org
		}
		fmt.Fprintf(&added, " Settings\n  Description     = %s\n  Organization    = %s\n", d, o)
	}
	if added.Len() == 0 && !addedAssoc {
		c.fail()
		c.out(" %s", assocText.String())
		return
	}
	report := func() {
		c.out("%s%s", added.String(), assocText.String())
		if limitSet != 0 {
			c.out(" Settings\n")
			c.printLimits(&ch.assoc)
		}
	}
	desc, org := "", ""
	if ch.desc != nil {
		desc = *ch.desc
	}
	if ch.org != nil {
		org = *ch.org
	}
	c.commitAndSend(report, func() bool {
		text, err := c.addAccounts(names, desc, org, ch.assoc.recSet())
		if err == nil {
			return true
		}
		c.fail()
		if text != "" {
			c.errf(" error: %s\n", strings.TrimRight(text, "\n"))
		} else {
			c.errf(" error: Problem adding account associations: %s\n", strerror(err))
		}
		return false
	})
}

func (c *cmd) listAccounts(argv []string) {
	var q acctCond
	q.withAssoc = c.withAssoc
	condSet := readWords(argv, func(argv []string, i int) (int, int) { return c.acctCondWords(argv, i, &q, true) })
	p, ok := c.recordPrinter(q.format, "Acc,Des,O", "Cl,ParentN,U,Share,Priority,GrpJ,GrpN,GrpCPUs,GrpMEM,GrpS,GrpWall,GrpCPUMins,"+
		"MaxJ,MaxN,MaxCPUs,MaxS,MaxW,MaxCPUMins,QOS,DefaultQOS", q.withAssoc, condSet)
	if !ok {
		return
	}
	accounts, err := c.getAccounts()
	if c.queryFailed(err) {
		return
	}
	var assocs []assocRec
	if q.withAssoc {
		if assocs, err = c.getAssocs(false); c.queryFailed(err) {
			return
		}
		assocs = sortTree(assocs)
	}
	p.header()
	for _, a := range accounts {
		if !q.matches(a) {
			continue
		}
		ofAccount := func(as assocRec) bool { return as.account == a.name && q.assoc.matches(as) }
		p.recordRows(func(f field) cell { return acctCell(a, f) }, q.withAssoc, assocs, ofAccount, fAccount, fCoords, fDesc, fOrg)
	}
}

func acctName(a acctRec) string { return a.name }

func acctCell(a acctRec, f field) cell {
	switch f.typ {
	case fAccount:
		return str(a.name)
	case fDesc:
		return str(a.desc)
	case fOrg:
		return str(a.org)
	case fQOS:
		return str("")
	case fPriority:
		return unset()
	case fFlags:
		return nullStr()
	}
	return nullStr()
}

func (c *cmd) modifyAccount(argv []string) {
	var q acctCond
	var ch acctChange
	condSet, recSet, ok := c.modifyWords(argv,
		func(argv []string, i int) (int, int) { return c.acctCondWords(argv, i, &q, false) },
		func(argv []string, i int) (int, int) { return c.acctRecWords(argv, i, nil, nil, &ch) })
	if !ok {
		return
	}
	c.modifyRecordsAndAssocs(condSet, recSet, len(q.names) > 0, func() { c.modifyAccountRecords(&q, &ch) }, func() {
		aq := q.assoc
		aq.accounts = append(slices.Clone(aq.accounts), q.names...)
		if len(q.descs) > 0 || len(q.orgs) > 0 {
			accounts, err := c.getAccounts()
			if c.requestFailed(err) {
				return
			}
			aq.accounts = append(aq.accounts, namesOf(accounts, q.matches, acctName)...)
		}
		// An account's modify changes the accounts' own associations.
		aq.hasUsers, aq.users = false, nil
		c.modifyAssocs(&accountOnly{aq}, &ch.assoc, "account")
	})
}

// accountOnly selects accounts' own associations.
type accountOnly struct{ assocCond }

func (a *accountOnly) matches(r assocRec) bool { return r.user == "" && a.assocCond.matches(r) }

func (c *cmd) modifyAccountRecords(q *acctCond, ch *acctChange) {
	accounts, err := c.getAccounts()
	if c.requestFailed(err) {
		return
	}
	var changed []acctRec
	for _, a := range accounts {
		if !q.matches(a) {
			continue
		}
		if ch.desc != nil {
			a.desc = *ch.desc
		}
		if ch.org != nil {
			a.org = *ch.org
		}
		changed = append(changed, a)
	}
	// sacctmgr names what it modified after slurmdbd answered, success
	// or not.
	c.out(" Modified accounts...\n")
	if c.nothingModified(len(changed)) {
		return
	}
	c.commitAndSend(func() {
		for _, a := range changed {
			c.out("  %s\n", a.name)
		}
	}, func() bool { return c.sent(c.postAccounts(changed)) })
}

func (c *cmd) deleteAccounts(argv []string) {
	var q acctCond
	condSet := readWords(argv, func(argv []string, i int) (int, int) { return c.acctCondWords(argv, i, &q, false) })
	if !c.deletable(condSet != 0) {
		return
	}
	if slices.ContainsFunc(q.names, func(n string) bool { return strings.EqualFold(n, "root") }) {
		c.fail()
		c.errf(" You are not allowed to remove the root account.\n Use remove cluster instead.\n")
		return
	}
	if condSet&setAssoc != 0 {
		// Association conditions remove associations, not accounts.
		aq := q.assoc
		aq.accounts = append(slices.Clone(aq.accounts), q.names...)
		c.deleteAssocs(&accountOnly{aq}, "account")
		return
	}
	accounts, err := c.getAccounts()
	if c.requestFailed(err) {
		return
	}
	c.deleteNamed("account", namesOf(accounts, q.matches, acctName), c.deleteAccount)
}

// deleteRefused reports a refused removal of what (an account, a user
// or an association) as sacctmgr does for the refusals slurmdbd names: a
// user's default account, jobs still running.
func (c *cmd) deleteRefused(err error, entity, what string) {
	c.errorWithRequest(err)
	re, ok := err.(*restError)
	if !ok {
		return
	}
	switch re.code {
	case 7009: // ESLURM_NO_REMOVE_DEFAULT_ACCOUNT
		c.errf("  %s\n", what)
		if entity == "account" {
			c.errf(" Please either remove the accounts listed above from list and resubmit,\n" +
				" or change these users' default accounts to remove the account(s).\n Changes Discarded\n")
		} else {
			c.errf(" You must change the default account of these users or remove the users completely from the affected clusters to allow these changes.\n Changes Discarded\n")
		}
	case 7001: // ESLURM_JOBS_RUNNING_ON_ASSOC
		c.errf("  %s\n", what)
	}
}

// matcher selects associations.
type matcher interface{ matches(assocRec) bool }

// deleteAssocs removes the associations q selects (and what is below an
// account's), as slurmdb_associations_remove.
func (c *cmd) deleteAssocs(q matcher, what string) {
	raw, err := c.getAssocs(true)
	if c.requestFailed(err) {
		return
	}
	var doomed []assocRec
	for _, a := range sortTree(raw) {
		if q.matches(a) {
			doomed = append(doomed, a)
		}
	}
	if len(doomed) == 0 {
		c.fail()
		c.out(" Nothing deleted\n")
		return
	}
	report := func() {
		c.out(" Deleting %s associations...\n", what)
		for _, a := range doomed {
			c.out("  %s\n", removedName(a))
		}
	}
	c.commitAndSend(report, func() bool {
		// An account's association takes what is below it along:
		// remove only the topmost of what was selected.
		var tops []string
		for _, a := range doomed {
			if slices.ContainsFunc(tops, func(t string) bool { return strings.HasPrefix(a.lineage, t) }) {
				continue
			}
			if a.user == "" {
				tops = append(tops, a.lineage)
			}
			if err := c.deleteAssoc(a); err != nil {
				c.deleteRefused(err, what, removedName(a))
				return false
			}
		}
		return true
	})
}
