package sacctmgr

import (
	"fmt"
	"os/user"
	"slices"
	"strings"
)

// userCond is a user condition: names, admin level, default accounts, and
// association conditions (users always set: an empty list keeps every
// user's associations and no account's).
type userCond struct {
	names, defAccts []string
	admin           string
	assoc           assocCond
	format          []string
	withAssoc       bool
}

func (q *userCond) matches(u userRec) bool {
	if len(q.names) > 0 && !slices.Contains(q.names, u.name) {
		return false
	}
	if len(q.defAccts) > 0 && !slices.Contains(q.defAccts, u.defAcct) {
		return false
	}
	return q.admin == "" || q.admin == u.admin
}

// adminLevel reads AdminLevel= as str_2_slurmdb_admin_level: None,
// Operator, Administrator (or SuperUser) by their first letter.
func adminLevel(v string) string {
	if v == "" {
		return ""
	}
	switch lower(v[0]) {
	case 'n':
		return "None"
	case 'o':
		return "Operator"
	case 'a', 's':
		return "Administrator"
	}
	return ""
}

// userCondWords reads a user condition (user _set_cond) from argv[i:].
func (c *cmd) userCondWords(argv []string, i int, q *userCond, withFormat bool) (int, int) {
	set := 0
	q.assoc.hasUsers = true
	i = c.condWords(argv, i, func(o option) bool {
		v := o.arg()
		switch {
		case listFlag(o, &q.withAssoc):
		case !o.eq || o.is("Names", 1) || o.is("Users", 1):
			q.names = addToList(q.names, v, true)
			q.assoc.users = q.names
			if len(q.names) > 0 {
				set |= setRecord
			}
		case o.is("AdminLevel", 2):
			q.admin = adminLevel(v)
			set |= setRecord
		case o.is("Clusters", 1):
			q.assoc.clusters = addToList(q.assoc.clusters, v, true)
			set |= setRecord
		case o.is("DefaultAccount", 8):
			q.defAccts = addToList(q.defAccts, v, true)
			set |= setRecord
		case o.is("DefaultWCKey", 8) || o.is("WCKeys", 1):
			c.notSupported(o.word)
		case o.is("Format", 1):
			if withFormat {
				q.format = addToList(q.format, v, true)
			}
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

// userChange is what "set" gives a user.
type userChange struct {
	admin, defAcct *string
	assoc          assocChange
}

// userRecWords reads user "set" words (user _set_rec) from argv[i:].
func (c *cmd) userRecWords(argv []string, i int, ch *userChange) (int, int) {
	set := 0
	i = c.recWords(argv, i, func(o option, allow *bool) {
		switch {
		case !o.eq:
			c.fail()
			c.errf(" Bad format on %s: End your option with an '=' sign\n", o.word)
		case o.is("AdminLevel", 2):
			a := adminLevel(o.value)
			ch.admin = &a
			set |= setRecord
		case o.is("DefaultAccount", 8):
			d := stripQuotes(o.value, true)
			ch.defAcct = &d
			set |= setRecord
		case o.is("DefaultWCKey", 8) || o.is("NewName", 1) || o.is("RawUsage", 7):
			*allow = true
			c.notSupported(o.word)
		default:
			set |= c.assocRecWord(&ch.assoc, o, allow)
		}
	})
	return i, set
}

func (c *cmd) addUser(argv []string) {
	var users, accounts, partitions []string
	var ch assocChange
	defAcct, admin := "", ""
	limitSet := false
	for i := 0; i < len(argv); i++ {
		if abbrev(argv[i], "Where", 5) || abbrev(argv[i], "Set", 3) {
			i++
		}
		allow := false
		limitSet = false
		for ; i < len(argv); i++ {
			o := parseOption(argv[i])
			v := o.arg()
			switch {
			case !o.eq || o.is("Names", 1) || o.is("Users", 1):
				users = addToList(users, v, true)
			case o.is("Accounts", 3) || o.is("Acct", 4):
				accounts = addToList(accounts, v, true)
			case o.is("AdminLevel", 2):
				admin = adminLevel(v)
			case o.is("Clusters", 1):
				for _, cl := range addToList(nil, v, true) {
					if cl != c.clusterName() {
						c.fail()
						c.errf(" error: Cluster '%s' has not been added yet, please contact your admin before adding accounts to it\n", cl)
					}
				}
			case o.is("DefaultAccount", 8):
				if defAcct != "" {
					c.fail()
					c.errf(" Already listed DefaultAccount %s\n", defAcct)
					continue
				}
				defAcct = stripQuotes(v, true)
				accounts = addToList(accounts, defAcct, true)
			case o.is("DefaultWCKey", 8) || o.is("WCKeys", 1):
				c.notSupported(o.word)
			case o.is("Partitions", 1):
				partitions = addToList(partitions, v, true)
			default:
				s, handled := c.setAssoc(&ch, o, &allow)
				limitSet = s
				if !s && !handled {
					allow = true
					c.fail()
					c.errf(" Unknown option: %s\n", o.word)
				}
			}
			if o.op != 0 && !allow {
				c.badOperator(o)
			}
		}
		if c.exitCode != 0 {
			return
		}
	}
	if len(users) == 0 {
		c.fail()
		c.errf(" Need name of user to add.\n")
		return
	}
	if len(accounts) == 0 {
		c.fail()
		c.errf(" Need name of account or wckey to add.\n")
		return
	}
	for _, u := range users {
		if _, err := user.Lookup(u); err != nil &&
			!c.commitCheck(fmt.Sprintf("There is no uid for user '%s'\nAre you sure you want to continue?", u)) {
			c.fail()
			return
		}
	}
	known, err := c.getUsers()
	if c.requestFailed(err) {
		return
	}
	assocs, err := c.getAssocs(true)
	if c.requestFailed(err) {
		return
	}
	cluster := c.clusterName()
	// What slurmdbd reports: the users it adds, then the associations.
	var added, assocText strings.Builder
	for _, u := range users {
		if slices.ContainsFunc(known, func(r userRec) bool { return r.name == u }) {
			continue
		}
		if added.Len() == 0 {
			added.WriteString(" Adding User(s)\n")
		}
		fmt.Fprintf(&added, "  %s\n", u)
	}
	if added.Len() > 0 {
		added.WriteString(" Settings\n")
		if defAcct != "" {
			fmt.Fprintf(&added, "  Default Account = %s\n", defAcct)
		}
		if admin != "" {
			fmt.Fprintf(&added, "  Admin Level     = %s\n", admin)
		}
	}
	parts := partitions
	if len(parts) == 0 {
		parts = []string{""}
	}
	addedAssoc := false
	for _, acct := range accounts {
		if !slices.ContainsFunc(assocs, func(a assocRec) bool { return a.account == acct && a.user == "" }) {
			fmt.Fprintf(&assocText, "No account %s on cluster %s, skipping.\n", acct, cluster)
			continue
		}
		for _, u := range users {
			for _, part := range parts {
				if slices.ContainsFunc(assocs, func(a assocRec) bool { return a.account == acct && a.user == u && a.partition == part }) {
					continue
				}
				if assocText.Len() == 0 {
					assocText.WriteString(" Associations =\n")
				}
				fmt.Fprintf(&assocText, "  C = %-10s A = %-20s U = %-9s", cluster, acct, u)
				if part != "" {
					fmt.Fprintf(&assocText, " P = %s", part)
				}
				assocText.WriteString("\n")
				addedAssoc = true
			}
		}
	}
	if !addedAssoc {
		c.fail()
		text := assocText.String()
		if text == "" {
			text = "Request didn't affect anything\n"
		}
		c.out("%sNothing added.\nMake sure the accounts requested here have been added to the system/cluster. (sacctmgr add account...)\n", text)
		return
	}
	report := func() {
		c.out("%s%s", added.String(), assocText.String())
		if limitSet {
			c.out(" Non Default Settings\n")
			c.printLimits(&ch)
		}
	}
	c.commitAndSend(report, func() bool {
		text, err := c.addUsers(users, accounts, partitions, defAcct, admin, ch.recSet())
		if err != nil {
			c.fail()
			c.errf(" error: Problem adding user associations: %s (%s)\n", strerror(err), strings.TrimRight(text, "\n"))
			return false
		}
		return true
	})
}

func (c *cmd) listUsers(argv []string) {
	var q userCond
	q.withAssoc = c.withAssoc
	condSet := readWords(argv, func(argv []string, i int) (int, int) { return c.userCondWords(argv, i, &q, true) })
	p, ok := c.recordPrinter(q.format, "U,DefaultA,Ad", "Cl,Acc,Part,Share,Priority,MaxJ,MaxN,MaxCPUs,MaxS,MaxW,MaxCPUMins,QOS,DefaultQOS", q.withAssoc, condSet)
	if !ok {
		return
	}
	users, err := c.getUsers()
	if c.queryFailed(err) {
		return
	}
	var assocs []assocRec
	if q.withAssoc {
		if assocs, err = c.getAssocs(false); c.queryFailed(err) {
			return
		}
		// A user's associations by account, as slurmdbd lists them.
		slices.SortStableFunc(assocs, func(a, b assocRec) int {
			return strings.Compare(a.account+"\x00"+a.partition, b.account+"\x00"+b.partition)
		})
	}
	p.header()
	for _, u := range users {
		if !q.matches(u) {
			continue
		}
		ofUser := func(a assocRec) bool { return a.user == u.name && q.assoc.matches(a) }
		p.recordRows(func(f field) cell { return userCell(u, f) }, q.withAssoc, assocs, ofUser, fAdmin, fCoords, fDefAcct, fDefWCKey)
	}
}

func userName(u userRec) string { return u.name }

func userCell(u userRec, f field) cell {
	switch f.typ {
	case fAdmin:
		return str(u.admin)
	case fDefAcct:
		return str(u.defAcct)
	case fUser:
		return str(u.name)
	case fQOS:
		return str("")
	case fPriority:
		return unset()
	}
	return nullStr()
}

func (c *cmd) modifyUser(argv []string) {
	var q userCond
	var ch userChange
	q.assoc.hasUsers = true
	condSet, recSet, ok := c.modifyWords(argv,
		func(argv []string, i int) (int, int) { return c.userCondWords(argv, i, &q, false) },
		func(argv []string, i int) (int, int) { return c.userRecWords(argv, i, &ch) })
	if !ok {
		return
	}
	records := func() { c.modifyUserRecords(&q, &ch, condSet != 0) }
	c.modifyRecordsAndAssocs(condSet, recSet, len(q.names) > 0, records, func() {
		aq := q.assoc
		if len(q.defAccts) > 0 || q.admin != "" {
			// Users chosen by their records: their associations.
			users, err := c.getUsers()
			if c.requestFailed(err) {
				return
			}
			names := namesOf(users, q.matches, userName)
			if len(names) == 0 {
				names = []string{"\x00"}
			}
			aq.users = names
		}
		c.modifyAssocs(&aq, &ch.assoc, "user")
	})
}

// modifyUserRecords changes the users q selects; without any condition
// slurmdbd changes none (a real 22.05 answers "Nothing modified").
func (c *cmd) modifyUserRecords(q *userCond, ch *userChange, conditioned bool) {
	if len(q.assoc.accounts) > 0 && c.commitCheck(" You specified Accounts in your request.  Did you mean DefaultAccounts?\n") {
		q.defAccts = append(q.defAccts, q.assoc.accounts...)
	}
	users, err := c.getUsers()
	if c.requestFailed(err) {
		return
	}
	var changed []userRec
	for _, u := range users {
		if !conditioned || !q.matches(u) {
			continue
		}
		if ch.admin != nil && *ch.admin != "" {
			u.admin = *ch.admin
		}
		if ch.defAcct != nil {
			u.defAcct = *ch.defAcct
		}
		changed = append(changed, u)
	}
	c.out(" Modified users...\n")
	if c.nothingModified(len(changed)) {
		return
	}
	if ch.defAcct != nil && *ch.defAcct != "" {
		// The new default account must be one the users have.
		assocs, err := c.getAssocs(true)
		if c.requestFailed(err) {
			return
		}
		var regret []string
		for _, u := range changed {
			if !slices.ContainsFunc(assocs, func(a assocRec) bool { return a.user == u.name && a.account == *ch.defAcct }) {
				regret = append(regret, u.name)
			}
		}
		if len(regret) > 0 {
			c.fail()
			c.out(" Can't modify because these users aren't associated with new default account '%s'...\n", *ch.defAcct)
			cluster := c.clusterName()
			for _, u := range regret {
				c.out("  U = %s C = %s\n", u, cluster)
			}
			return
		}
	}
	c.commitAndSend(func() {
		for _, u := range changed {
			c.out("  %s\n", u.name)
		}
	}, func() bool { return c.sent(c.postUsers(changed)) })
}

func (c *cmd) deleteUsers(argv []string) {
	var q userCond
	condSet := readWords(argv, func(argv []string, i int) (int, int) { return c.userCondWords(argv, i, &q, false) })
	if len(q.assoc.clusters) > 0 {
		condSet |= setAssoc
	}
	if !c.deletable(condSet != 0) {
		return
	}
	if condSet&setAssoc != 0 {
		c.deleteAssocs(&q.assoc, "user")
		return
	}
	users, err := c.getUsers()
	if c.requestFailed(err) {
		return
	}
	c.deleteNamed("user", namesOf(users, q.matches, userName), c.deleteUser)
}
