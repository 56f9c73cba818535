package assoc

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/droverhq/drover/internal/slurmerr"
)

// Kind says which record an Item changes.
type Kind string

// The kinds of record a Change holds.
const (
	KindQOS     Kind = "qos"
	KindAccount Kind = "account"
	KindUser    Kind = "user"
	KindAssoc   Kind = "association"
)

// Item adds or replaces (upsert: QOS, accounts and users by name,
// associations by account, user and partition) or deletes one record.
// Only the record matching Kind is read; a delete reads only its name (or
// an association's account, user and partition).
type Item struct {
	Kind    Kind         `json:"kind"`
	Delete  bool         `json:"delete,omitempty"`
	QOS     *QOS         `json:"qos,omitempty"`
	Account *Account     `json:"account,omitempty"`
	User    *User        `json:"user,omitempty"`
	Assoc   *Association `json:"assoc,omitempty"`
}

// Change is a list of items applied in order, whole or not at all, as one
// sacctmgr command is committed or rolled back.
type Change []Item

// Apply applies every item in order to a copy of m and returns it, or
// returns an error and leaves m untouched: a change is applied whole or not
// at all.
//
// Items are applied one by one: an upsert of a record that exists keeps its
// id (an incoming ID is ignored), a new QOS or association gets the next
// id, never reused; deleting a user deletes its associations, deleting an
// account (or an account association) deletes every association below it,
// as slurmdbd removes by lineage. The relations between records are
// checked once, on the result: every problem is reported together (joined
// errors, each a *slurmerr.Error where Slurm has a number for it), and a
// change may add a user, its association and its default account in any
// order.
func (m *Model) Apply(c Change) (*Model, error) {
	n := m.Clone()
	for _, it := range c {
		if err := n.apply(it); err != nil {
			return nil, err
		}
	}
	if err := n.check(m); err != nil {
		return nil, err
	}
	n.derive()
	return n, nil
}

func (m *Model) apply(it Item) error {
	switch it.Kind {
	case KindQOS:
		if it.QOS == nil {
			return errors.New("qos item without a qos")
		}
		if it.Delete {
			return m.deleteQOS(it.QOS.Name)
		}
		return m.putQOS(*it.QOS)
	case KindAccount:
		if it.Account == nil {
			return errors.New("account item without an account")
		}
		if it.Delete {
			return m.deleteAccount(it.Account.Name)
		}
		return m.putAccount(*it.Account)
	case KindUser:
		if it.User == nil {
			return errors.New("user item without a user")
		}
		if it.Delete {
			return m.deleteUser(it.User.Name)
		}
		return m.putUser(*it.User)
	case KindAssoc:
		if it.Assoc == nil {
			return errors.New("association item without an association")
		}
		if it.Delete {
			return m.deleteAssoc(keyOf(*it.Assoc))
		}
		return m.putAssoc(*it.Assoc)
	}
	return fmt.Errorf("unknown kind %q", it.Kind)
}

// checkName refuses names slurmdbd could not list back: empty, or holding
// white space or the commas that separate sacctmgr's lists.
func checkName(what, s string) error {
	if s == "" {
		return fmt.Errorf("%s name must not be empty", what)
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return fmt.Errorf("invalid %s name %q: no white space or commas allowed", what, s)
	}
	return nil
}

// sortedNames sorts and de-duplicates a name list; empty becomes nil.
func sortedNames(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}

var preemptModes = []string{"OFF", "CANCEL", "REQUEUE", "SUSPEND"}

// normQOS checks what a QOS record says by itself and puts it in its
// stored form.
func normQOS(q QOS) (QOS, error) {
	if err := checkName("qos", q.Name); err != nil {
		return q, slurmerr.New(slurmerr.InvalidQOS, "%v", err)
	}
	for _, p := range q.Preempt {
		if err := checkName("qos", p); err != nil {
			return q, slurmerr.New(slurmerr.InvalidQOS, "qos %s: preempt: %v", q.Name, err)
		}
	}
	q.Preempt = sortedNames(q.Preempt)
	if q.PreemptMode != "" {
		mode := strings.ToUpper(q.PreemptMode)
		if !slices.Contains(preemptModes, mode) {
			return q, fmt.Errorf("qos %s: invalid PreemptMode %q: expected OFF, CANCEL, REQUEUE or SUSPEND", q.Name, q.PreemptMode)
		}
		q.PreemptMode = mode
	}
	if q.UsageFactor < 0 || math.IsNaN(q.UsageFactor) || math.IsInf(q.UsageFactor, 0) {
		return q, fmt.Errorf("qos %s: invalid UsageFactor %v: must be 0 or more", q.Name, q.UsageFactor)
	}
	var flags []string
	for _, name := range QOSFlagNames {
		if slices.ContainsFunc(q.Flags, func(f string) bool { return strings.EqualFold(f, name) }) {
			flags = append(flags, name)
		}
	}
	for _, f := range q.Flags {
		i := slices.IndexFunc(QOSFlagNames, func(name string) bool { return strings.EqualFold(f, name) })
		switch {
		case i < 0:
			return q, slurmerr.New(slurmerr.InvalidQOS, "qos %s: unknown QOS flag %q", q.Name, f)
		case !QOSFlagKept(QOSFlagNames[i]):
			return q, slurmerr.New(slurmerr.InvalidQOS, "qos %s: QOS flag %s is not supported", q.Name, QOSFlagNames[i])
		}
	}
	q.Flags = flags
	return q, nil
}

// putQOS adds or replaces a QOS. A new QOS with UsageFactor 0 gets 1, the
// default sacctmgr add qos leaves; a replacement stores what it is given,
// so UsageFactor=0 (usage not counted) is reachable by a modify.
func (m *Model) putQOS(q QOS) error {
	q, err := normQOS(q)
	if err != nil {
		return err
	}
	if old, ok := m.qos[q.Name]; ok {
		q.ID = old.ID
	} else {
		q.ID = m.nextQOSID
		m.nextQOSID++
		if q.UsageFactor == 0 {
			q.UsageFactor = 1
		}
	}
	m.qos[q.Name] = q
	return nil
}

// deleteQOS removes a QOS; whatever still names it is refused by check.
func (m *Model) deleteQOS(name string) error {
	if _, ok := m.qos[name]; !ok {
		return slurmerr.New(slurmerr.InvalidQOS, "qos %s does not exist", name)
	}
	delete(m.qos, name)
	return nil
}

func (m *Model) putAccount(a Account) error {
	if err := checkName("account", a.Name); err != nil {
		return slurmerr.New(slurmerr.InvalidAccount, "%v", err)
	}
	m.accounts[a.Name] = a
	return nil
}

// deleteAccount removes an account with its association and, as slurmdbd
// removes by lineage, every association below it. Sub-accounts keep their
// account records. root is never removed (sacctmgr: "You are not allowed
// to remove the root account").
func (m *Model) deleteAccount(name string) error {
	if name == RootAccount {
		return errors.New("you are not allowed to remove the root account")
	}
	if _, ok := m.accounts[name]; !ok {
		return slurmerr.New(slurmerr.InvalidAccount, "account %s does not exist", name)
	}
	delete(m.accounts, name)
	for k := range m.subtree(name) {
		delete(m.assocs, k)
	}
	for k := range m.assocs {
		if k.account == name {
			delete(m.assocs, k)
		}
	}
	return nil
}

func (m *Model) putUser(u User) error {
	if err := checkName("user", u.Name); err != nil {
		return err
	}
	if u.DefaultAccount != "" {
		if err := checkName("account", u.DefaultAccount); err != nil {
			return slurmerr.New(slurmerr.InvalidAccount, "user %s: default account: %v", u.Name, err)
		}
	}
	if u.AdminLevel < AdminNone || u.AdminLevel > AdminAdministrator {
		return fmt.Errorf("user %s: invalid AdminLevel %d", u.Name, u.AdminLevel)
	}
	m.users[u.Name] = u
	return nil
}

// deleteUser removes a user and every association of theirs.
func (m *Model) deleteUser(name string) error {
	if _, ok := m.users[name]; !ok {
		return fmt.Errorf("user %s does not exist", name)
	}
	delete(m.users, name)
	for k := range m.assocs {
		if k.user == name {
			delete(m.assocs, k)
		}
	}
	return nil
}

// normAssoc checks what an association says by itself and puts it in its
// stored form; old is the association it replaces, if any.
func normAssoc(a Association, old *Association) (Association, error) {
	if err := checkName("account", a.Account); err != nil {
		return a, slurmerr.New(slurmerr.InvalidAccount, "%v", err)
	}
	if a.User != "" {
		if err := checkName("user", a.User); err != nil {
			return a, slurmerr.New(slurmerr.InvalidAssoc, "%v", err)
		}
	}
	if a.Partition != "" {
		if a.User == "" {
			return a, slurmerr.New(slurmerr.InvalidAccount, "account %s: only a user association may name a partition (%s)", a.Account, a.Partition)
		}
		if err := checkName("partition", a.Partition); err != nil {
			return a, slurmerr.New(slurmerr.InvalidAccount, "%v", err)
		}
	}
	switch {
	case a.User != "":
		a.ParentAccount = a.Account
	case a.Account == RootAccount:
		if a.ParentAccount != "" {
			return a, slurmerr.New(slurmerr.InvalidParentAccount, "account root can not have a parent (%s)", a.ParentAccount)
		}
	case a.ParentAccount == "" && old != nil:
		a.ParentAccount = old.ParentAccount
	case a.ParentAccount == "":
		a.ParentAccount = RootAccount
	case a.ParentAccount == a.Account:
		return a, slurmerr.New(slurmerr.InvalidParentAccount, "account %s can not be its own parent", a.Account)
	default:
		if err := checkName("account", a.ParentAccount); err != nil {
			return a, slurmerr.New(slurmerr.InvalidParentAccount, "account %s: parent: %v", a.Account, err)
		}
	}
	if a.Shares == 0 {
		a.Shares = 1
	}
	if a.Priority != 0 {
		a.PrioritySet = true
	}
	for _, q := range a.QOS {
		if err := checkName("qos", q); err != nil {
			return a, slurmerr.New(slurmerr.InvalidQOS, "%s: %v", a, err)
		}
	}
	a.QOS = sortedNames(a.QOS)
	if a.DefaultQOS != "" {
		if err := checkName("qos", a.DefaultQOS); err != nil {
			return a, slurmerr.New(slurmerr.InvalidQOS, "%s: default qos: %v", a, err)
		}
	}
	return a, nil
}

// putAssoc adds or replaces an association. An account association that
// names no parent keeps its parent when it exists, else goes under root
// (sacctmgr add account's default).
func (m *Model) putAssoc(a Association) error {
	old, exists := m.assocs[keyOf(a)]
	var oldp *Association
	if exists {
		oldp = &old
	}
	a, err := normAssoc(a, oldp)
	if err != nil {
		return err
	}
	if exists {
		a.ID = old.ID
	} else {
		a.ID = m.nextAssocID
		m.nextAssocID++
	}
	m.assocs[keyOf(a)] = a
	return nil
}

// deleteAssoc removes an association; an account association goes with
// everything below it. root's own association is never removed.
func (m *Model) deleteAssoc(k key) error {
	if _, ok := m.assocs[k]; !ok {
		return slurmerr.New(slurmerr.InvalidAssoc, "%s does not exist", Association{Account: k.account, User: k.user, Partition: k.partition})
	}
	if k.user != "" {
		delete(m.assocs, k)
		return nil
	}
	if k.account == RootAccount {
		return errors.New("you are not allowed to remove the root account association")
	}
	for sk := range m.subtree(k.account) {
		delete(m.assocs, sk)
	}
	return nil
}

// subtree returns the associations of account and of everything below it
// (slurmdbd's "lineage like '/.../account/%'").
func (m *Model) subtree(account string) map[key]bool {
	kids := m.children()
	out := map[key]bool{}
	seen := map[string]bool{}
	var walk func(acct string)
	walk = func(acct string) {
		if seen[acct] {
			return
		}
		seen[acct] = true
		if _, ok := m.assocs[key{account: acct}]; ok {
			out[key{account: acct}] = true
		}
		for _, c := range kids[acct] {
			out[keyOf(c)] = true
			if c.User == "" {
				walk(c.Account)
			}
		}
	}
	walk(account)
	return out
}

// check verifies the relations between records on the result of a change
// (before is the model the change started from, for wording) and returns
// every problem found, joined.
func (m *Model) check(before *Model) error {
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	had := func(qos string) bool {
		if before == nil {
			return false
		}
		_, ok := before.qos[qos]
		return ok
	}

	if _, ok := m.accounts[RootAccount]; !ok {
		add(slurmerr.New(slurmerr.InvalidAccount, "account root does not exist"))
	}
	if _, ok := m.assocs[key{account: RootAccount}]; !ok {
		add(slurmerr.New(slurmerr.InvalidAssoc, "the root account association does not exist"))
	}

	qosList := m.QOSList()
	for _, q := range qosList {
		for _, p := range q.Preempt {
			switch _, ok := m.qos[p]; {
			case p == q.Name:
				add(slurmerr.New(slurmerr.QOSPreemptionLoop, "qos %s can not preempt itself", q.Name))
			case !ok && had(p):
				add(slurmerr.New(slurmerr.InvalidQOS, "can not remove qos %s: qos %s preempts it", p, q.Name))
			case !ok:
				add(slurmerr.New(slurmerr.InvalidQOS, "qos %s: preempted qos %s does not exist", q.Name, p))
			}
		}
	}
	if loop := m.preemptLoop(qosList); loop != nil {
		add(slurmerr.New(slurmerr.QOSPreemptionLoop, "qos %s", strings.Join(loop, " preempts ")))
	}

	assocs := make([]Association, 0, len(m.assocs))
	for _, a := range m.assocs {
		assocs = append(assocs, a)
	}
	slices.SortFunc(assocs, func(a, b Association) int { return cmp.Compare(a.ID, b.ID) })
	treeOK := true
	for _, a := range assocs {
		if _, ok := m.accounts[a.Account]; !ok {
			add(slurmerr.New(slurmerr.InvalidAccount, "%s: account %s does not exist", a, a.Account))
			treeOK = false
		}
		if a.User != "" {
			if _, ok := m.users[a.User]; !ok {
				add(slurmerr.New(slurmerr.InvalidAssoc, "%s: user %s does not exist", a, a.User))
			}
			if _, ok := m.assocs[key{account: a.Account}]; !ok {
				add(slurmerr.New(slurmerr.InvalidAccount, "%s: account %s has no association", a, a.Account))
				treeOK = false
			}
		} else if a.Account != RootAccount {
			if _, ok := m.assocs[key{account: a.ParentAccount}]; !ok {
				add(slurmerr.New(slurmerr.InvalidParentAccount, "%s: parent account %s has no association", a, a.ParentAccount))
				treeOK = false
			}
		}
		for _, q := range a.QOS {
			if _, ok := m.qos[q]; !ok {
				if had(q) {
					add(slurmerr.New(slurmerr.InvalidQOS, "can not remove qos %s: %s has it", q, a))
				} else {
					add(slurmerr.New(slurmerr.InvalidQOS, "%s: qos %s does not exist", a, q))
				}
			}
		}
		if a.DefaultQOS != "" {
			if _, ok := m.qos[a.DefaultQOS]; !ok {
				if had(a.DefaultQOS) {
					add(slurmerr.New(slurmerr.NoRemoveDefaultQOS, "can not remove qos %s: %s has it as its default", a.DefaultQOS, a))
				} else {
					add(slurmerr.New(slurmerr.InvalidQOS, "%s: default qos %s does not exist", a, a.DefaultQOS))
				}
			}
		}
	}
	if treeOK {
		_, reached := m.walk()
		for _, a := range assocs {
			// A user association below a loop is reported through its
			// account's.
			if !reached[keyOf(a)] && a.User == "" {
				// Every parent exists, so an association the walk from
				// root misses sits on a loop of parents.
				add(slurmerr.New(slurmerr.InvalidParentAccount, "%s: account %s would be below itself", a, a.Account))
				treeOK = false
			}
		}
	}
	if treeOK {
		for _, a := range assocs {
			e := m.Effective(a)
			if e.DefaultQOS != "" && !slices.Contains(e.QOS, e.DefaultQOS) {
				add(slurmerr.New(slurmerr.NoRemoveDefaultQOS, "%s: default qos %s is not in its qos list (%s)", a, e.DefaultQOS, strings.Join(e.QOS, ",")))
			}
		}
	}

	member := make(map[[2]string]bool, len(m.assocs))
	for k := range m.assocs {
		member[[2]string{k.user, k.account}] = true
	}
	for _, u := range m.Users() {
		if u.DefaultAccount == "" || member[[2]string{u.Name, u.DefaultAccount}] {
			continue
		}
		if before != nil {
			if bu, ok := before.users[u.Name]; ok && bu.DefaultAccount == u.DefaultAccount && before.hasAccount(u.Name, u.DefaultAccount) {
				add(slurmerr.New(slurmerr.NoRemoveDefaultAccount, "user %s: default account %s", u.Name, u.DefaultAccount))
				continue
			}
		}
		add(slurmerr.New(slurmerr.InvalidAccount, "user %s: no association with default account %s", u.Name, u.DefaultAccount))
	}
	return errors.Join(errs...)
}

// hasAccount reports whether user has an association with account, for
// any partition.
func (m *Model) hasAccount(user, account string) bool {
	if _, ok := m.assocs[key{account, user, ""}]; ok {
		return true
	}
	for k := range m.assocs {
		if k.user == user && k.account == account {
			return true
		}
	}
	return false
}

// preemptLoop returns a cycle of preemption (A, B, ..., A) among QOS that
// exist, or nil, as slurmdbd's _preemption_loop refuses one.
func (m *Model) preemptLoop(qosList []QOS) []string {
	const (
		unseen = iota
		active
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(name string) []string
	visit = func(name string) []string {
		state[name] = active
		path = append(path, name)
		for _, p := range m.qos[name].Preempt {
			if _, ok := m.qos[p]; !ok || p == name {
				continue // reported on their own
			}
			switch state[p] {
			case active:
				i := slices.Index(path, p)
				return append(slices.Clone(path[i:]), p)
			case unseen:
				if loop := visit(p); loop != nil {
					return loop
				}
			}
		}
		path = path[:len(path)-1]
		state[name] = done
		return nil
	}
	for _, q := range qosList {
		if state[q.Name] == unseen {
			if loop := visit(q.Name); loop != nil {
				return loop
			}
		}
	}
	return nil
}
