// Package assoc is the accounting model slurmdbd keeps: QOS, accounts,
// users and the association tree that ties them together, with the rules
// slurmdbd applies when sacctmgr changes them. It is pure: no I/O and no
// wire types. A Model never changes once built; Apply returns a new one.
package assoc

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// AdminLevel is a user's administrative level, as sacctmgr's AdminLevel=.
type AdminLevel int

// Admin levels in Slurm's order (slurmdb_admin_level_t without NOTSET).
const (
	AdminNone AdminLevel = iota
	AdminOperator
	AdminAdministrator
)

// String returns the level as sacctmgr and slurmrestd print it.
func (a AdminLevel) String() string {
	switch a {
	case AdminNone:
		return "None"
	case AdminOperator:
		return "Operator"
	case AdminAdministrator:
		return "Administrator"
	}
	return "Unknown"
}

// ParseAdminLevel reads an AdminLevel= value the way sacctmgr does
// (str_2_slurmdb_admin_level): only the first letter counts, in any case:
// N(one), O(perator), and A(dmin, Administrator) or S(uperUser).
func ParseAdminLevel(s string) (AdminLevel, error) {
	if s != "" {
		switch s[0] | 0x20 {
		case 'n':
			return AdminNone, nil
		case 'o':
			return AdminOperator, nil
		case 'a', 's':
			return AdminAdministrator, nil
		}
	}
	return AdminNone, fmt.Errorf("invalid AdminLevel %q: expected None, Operator or Administrator", s)
}

// QOS is a quality of service record (sacctmgr show qos).
type QOS struct {
	ID          uint32   `json:"id"`
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Priority    uint32   `json:"priority,omitempty"`
	Preempt     []string `json:"preempt,omitempty"`      // names of QOS this one may preempt, sorted
	PreemptMode string   `json:"preempt_mode,omitempty"` // "" (cluster's PreemptMode), "OFF", "CANCEL", "REQUEUE", "SUSPEND"
	UsageFactor float64  `json:"usage_factor"`           // 1 by default
	GraceTime   uint32   `json:"grace_time,omitempty"`   // seconds
	Limits      Limits   `json:"limits,omitzero"`
	// Flags are the QOS's flags by sacctmgr's names, in QOSFlagNames'
	// order.
	Flags []string `json:"flags,omitempty"`
}

// QOS flags Drover acts on.
const (
	// FlagDenyOnLimit refuses at submission a job that breaks a limit of
	// its QOS or association as a job alone, instead of holding it.
	FlagDenyOnLimit = "DenyOnLimit"
	// FlagNoDecay keeps the QOS's usage (GrpTRESMins, GrpWall) from
	// decaying or being reset.
	FlagNoDecay = "NoDecay"
	// FlagOverPartQOS lets the job's QOS's limits override its
	// partition's QOS's.
	FlagOverPartQOS = "OverPartQOS"
)

// QOSFlagNames are Slurm's QOS flags in the order sacctmgr prints them.
var QOSFlagNames = []string{FlagDenyOnLimit, "EnforceUsageThreshold", "NoReserve", "PartitionMaxNodes",
	"PartitionMinNodes", FlagOverPartQOS, "PartitionTimeLimit", "RequiresReservation", FlagNoDecay, "UsageFactorSafe"}

// QOSFlagKept says Drover acts on a QOS flag; the others are refused.
func QOSFlagKept(name string) bool {
	return name == FlagDenyOnLimit || name == FlagNoDecay || name == FlagOverPartQOS
}

// HasFlag says the QOS has a flag.
func (q QOS) HasFlag(name string) bool { return slices.Contains(q.Flags, name) }

// Account is an account record (sacctmgr show account).
type Account struct {
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	Organization string `json:"organization,omitempty"`
}

// User is a user record (sacctmgr show user).
type User struct {
	Name           string     `json:"name"`
	DefaultAccount string     `json:"default_account,omitempty"`
	AdminLevel     AdminLevel `json:"admin_level,omitempty"`
}

// Association is a node of slurmdbd's association tree. User "" is an
// account's own association (a node of the tree); a user association is a
// leaf under its Account.
type Association struct {
	ID            uint32   `json:"id"`
	Account       string   `json:"account"`
	User          string   `json:"user,omitempty"`
	Partition     string   `json:"partition,omitempty"`
	ParentAccount string   `json:"parent_account,omitempty"` // for an account association: its parent account ("" only for root). For a user association: equal to Account (set by Apply).
	Shares        uint32   `json:"shares"`                   // Fairshare=N, 1 by default
	Priority      uint32   `json:"priority,omitempty"`
	PrioritySet   bool     `json:"priority_set,omitempty"` // false: inherited from the parent
	QOS           []string `json:"qos,omitempty"`          // empty: inherited
	DefaultQOS    string   `json:"default_qos,omitempty"`  // "": inherited
	Limits        Limits   `json:"limits,omitzero"`
}

// String names the association the way slurmdbd's error lists do
// ("A = acct U = user P = part"), for error details.
func (a Association) String() string {
	s := "A = " + a.Account
	if a.User != "" {
		s += " U = " + a.User
	}
	if a.Partition != "" {
		s += " P = " + a.Partition
	}
	return s
}

// Effective is the QOS list, default QOS and priority an association has
// after inheritance down the tree, as slurmdbd fills them in from the
// parents when an association leaves them unset.
type Effective struct {
	QOS        []string
	DefaultQOS string
	Priority   uint32
}

// RootAccount is the account at the top of every tree.
const RootAccount = "root"

// key identifies an association: account, user, partition.
type key struct{ account, user, partition string }

func keyOf(a Association) key { return key{a.Account, a.User, a.Partition} }

// Model is the accounting state: QOS, accounts, users and associations.
// A Model is never changed once built (Apply returns a new one), so it may
// be shared between goroutines.
type Model struct {
	qos         map[string]QOS
	accounts    map[string]Account
	users       map[string]User
	assocs      map[key]Association
	nextQOSID   uint32
	nextAssocID uint32

	// Derived by derive; a Model is immutable, so they stay true.
	order        []key
	maxQOSPrio   uint32
	maxAssocPrio uint32
}

// New returns what slurmdbd starts a cluster with: QOS normal, account
// root, user root (Administrator, default account root), root's account
// association (QOS normal) and root's user association under it.
func New() *Model {
	m := empty()
	m.qos["normal"] = QOS{ID: 1, Name: "normal", Description: "Normal QOS default", UsageFactor: 1}
	m.accounts[RootAccount] = Account{Name: RootAccount, Description: "default root account", Organization: "root"}
	m.users["root"] = User{Name: "root", DefaultAccount: RootAccount, AdminLevel: AdminAdministrator}
	root := Association{ID: 1, Account: RootAccount, Shares: 1, QOS: []string{"normal"}}
	m.assocs[keyOf(root)] = root
	rootUser := Association{ID: 2, Account: RootAccount, User: "root", ParentAccount: RootAccount, Shares: 1}
	m.assocs[keyOf(rootUser)] = rootUser
	m.nextQOSID, m.nextAssocID = 2, 3
	m.derive()
	return m
}

func empty() *Model {
	return &Model{
		qos:         map[string]QOS{},
		accounts:    map[string]Account{},
		users:       map[string]User{},
		assocs:      map[key]Association{},
		nextQOSID:   1,
		nextAssocID: 1,
	}
}

// Clone returns a deep copy of m.
func (m *Model) Clone() *Model {
	n := &Model{
		qos:          make(map[string]QOS, len(m.qos)),
		accounts:     make(map[string]Account, len(m.accounts)),
		users:        make(map[string]User, len(m.users)),
		assocs:       make(map[key]Association, len(m.assocs)),
		nextQOSID:    m.nextQOSID,
		nextAssocID:  m.nextAssocID,
		order:        slices.Clone(m.order),
		maxQOSPrio:   m.maxQOSPrio,
		maxAssocPrio: m.maxAssocPrio,
	}
	for k, q := range m.qos {
		n.qos[k] = cloneQOS(q)
	}
	for k, a := range m.accounts {
		n.accounts[k] = a
	}
	for k, u := range m.users {
		n.users[k] = u
	}
	for k, a := range m.assocs {
		n.assocs[k] = cloneAssoc(a)
	}
	return n
}

func cloneQOS(q QOS) QOS {
	q.Preempt = slices.Clone(q.Preempt)
	q.Flags = slices.Clone(q.Flags)
	q.Limits = q.Limits.Clone()
	return q
}

func cloneAssoc(a Association) Association {
	a.QOS = slices.Clone(a.QOS)
	a.Limits = a.Limits.Clone()
	return a
}

// QOS returns the QOS called name.
func (m *Model) QOS(name string) (QOS, bool) {
	q, ok := m.qos[name]
	return cloneQOS(q), ok
}

// QOSList returns every QOS by id, as sacctmgr show qos lists them.
func (m *Model) QOSList() []QOS {
	out := make([]QOS, 0, len(m.qos))
	for _, q := range m.qos {
		out = append(out, cloneQOS(q))
	}
	slices.SortFunc(out, func(a, b QOS) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Account returns the account called name.
func (m *Model) Account(name string) (Account, bool) {
	a, ok := m.accounts[name]
	return a, ok
}

// Accounts returns every account by name.
func (m *Model) Accounts() []Account {
	out := make([]Account, 0, len(m.accounts))
	for _, a := range m.accounts {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b Account) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// User returns the user called name.
func (m *Model) User(name string) (User, bool) {
	u, ok := m.users[name]
	return u, ok
}

// Users returns every user by name.
func (m *Model) Users() []User {
	out := make([]User, 0, len(m.users))
	for _, u := range m.users {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b User) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Associations returns every association in tree order, as sacctmgr show
// assoc tree lists them: root first, then depth first, each account's
// children ordered as Slurm orders the lineage ("/parent/0-user/",
// "/parent/0-user/partition/", "/parent/account/"), so that for ordinary
// names a node's users come before its sub-accounts, each alphabetically.
func (m *Model) Associations() []Association {
	out := make([]Association, 0, len(m.order))
	for _, k := range m.order {
		out = append(out, cloneAssoc(m.assocs[k]))
	}
	return out
}

// Assoc returns the association with exactly this account, user and
// partition (user "" for an account's own association).
func (m *Model) Assoc(account, user, partition string) (Association, bool) {
	a, ok := m.assocs[key{account, user, partition}]
	return cloneAssoc(a), ok
}

// parent returns the association a inherits from: the account
// association of a user association's account, or the account
// association of an account's parent. Root has none.
func (m *Model) parent(a Association) (Association, bool) {
	var p Association
	var ok bool
	switch {
	case a.User != "":
		p, ok = m.assocs[key{account: a.Account}]
	case a.ParentAccount != "" && a.Account != RootAccount:
		p, ok = m.assocs[key{account: a.ParentAccount}]
	}
	return p, ok
}

// Effective returns what a has after inheritance: each of QOS, DefaultQOS
// and Priority comes from a when a sets it, otherwise from the nearest
// ancestor that does (Priority 0 when none does).
func (m *Model) Effective(a Association) Effective {
	var e Effective
	var haveQOS, haveDef, havePrio bool
	// A tree has no path longer than it has associations; the bound keeps
	// a malformed model (only ever seen inside Apply) from looping.
	for range len(m.assocs) + 2 {
		if !haveQOS && len(a.QOS) > 0 {
			e.QOS, haveQOS = slices.Clone(a.QOS), true
		}
		if !haveDef && a.DefaultQOS != "" {
			e.DefaultQOS, haveDef = a.DefaultQOS, true
		}
		if !havePrio && a.PrioritySet {
			e.Priority, havePrio = a.Priority, true
		}
		if haveQOS && haveDef && havePrio {
			break
		}
		p, ok := m.parent(a)
		if !ok {
			break
		}
		a = p
	}
	return e
}

// Resolve finds the association a job of user runs under, as the
// association manager does for slurmctld: account "" means the user's
// DefaultAccount; an association for the partition wins over the one for
// all partitions. ok is false when none.
func (m *Model) Resolve(user, account, partition string) (Association, bool) {
	if user == "" {
		return Association{}, false
	}
	if account == "" {
		u, ok := m.users[user]
		if !ok || u.DefaultAccount == "" {
			return Association{}, false
		}
		account = u.DefaultAccount
	}
	if partition != "" {
		if a, ok := m.assocs[key{account, user, partition}]; ok {
			return cloneAssoc(a), true
		}
	}
	a, ok := m.assocs[key{account, user, ""}]
	return cloneAssoc(a), ok
}

// MaxQOSPriority returns the largest QOS priority, the divisor of the
// multifactor QOS factor.
func (m *Model) MaxQOSPriority() uint32 { return m.maxQOSPrio }

// MaxAssocPriority returns the largest effective priority over user
// associations, the divisor of the multifactor association factor.
func (m *Model) MaxAssocPriority() uint32 { return m.maxAssocPrio }

// Removed returns the associations m has and next lacks (by account, user
// and partition), in m's tree order: what a change from m to next deletes,
// cascades included, for a caller that must refuse removing an association
// jobs still run under.
func (m *Model) Removed(next *Model) []Association {
	var out []Association
	for _, k := range m.order {
		if _, ok := next.assocs[k]; !ok {
			out = append(out, cloneAssoc(m.assocs[k]))
		}
	}
	return out
}

// derive recomputes the tree order and the priority maxima.
func (m *Model) derive() {
	m.maxQOSPrio = 0
	for _, q := range m.qos {
		m.maxQOSPrio = max(m.maxQOSPrio, q.Priority)
	}
	m.order = m.treeOrder()
	m.maxAssocPrio = 0
	for _, a := range m.assocs {
		if a.User != "" {
			m.maxAssocPrio = max(m.maxAssocPrio, m.Effective(a).Priority)
		}
	}
}

// lineageStep is what an association adds to its parent's lineage in
// slurmdbd ("0-user/", "0-user/partition/" or "account/"); siblings sort
// by it, as slurmdb_sort_hierarchical_assoc_list sorts by lineage.
func lineageStep(a Association) string {
	if a.User == "" {
		return a.Account + "/"
	}
	if a.Partition != "" {
		return "0-" + a.User + "/" + a.Partition + "/"
	}
	return "0-" + a.User + "/"
}

// children returns the associations directly under account's
// association: its users' associations and its sub-accounts'.
func (m *Model) children() map[string][]Association {
	kids := map[string][]Association{}
	for _, a := range m.assocs {
		switch {
		case a.User != "":
			kids[a.Account] = append(kids[a.Account], a)
		case a.Account != RootAccount && a.ParentAccount != "":
			kids[a.ParentAccount] = append(kids[a.ParentAccount], a)
		}
	}
	for _, list := range kids {
		slices.SortFunc(list, func(a, b Association) int {
			return cmp.Or(strings.Compare(lineageStep(a), lineageStep(b)), cmp.Compare(a.ID, b.ID))
		})
	}
	return kids
}

// treeOrder walks the tree from root depth first. Associations the walk
// cannot reach (never in a model Apply returned) follow by id.
func (m *Model) treeOrder() []key {
	order, seen := m.walk()
	if len(order) < len(m.assocs) {
		var rest []Association
		for k, a := range m.assocs {
			if !seen[k] {
				rest = append(rest, a)
			}
		}
		slices.SortFunc(rest, func(a, b Association) int { return cmp.Compare(a.ID, b.ID) })
		for _, a := range rest {
			order = append(order, keyOf(a))
		}
	}
	return order
}

// walk returns the associations reachable from root, depth first.
func (m *Model) walk() ([]key, map[key]bool) {
	kids := m.children()
	order := make([]key, 0, len(m.assocs))
	seen := make(map[key]bool, len(m.assocs))
	var walk func(a Association)
	walk = func(a Association) {
		k := keyOf(a)
		if seen[k] {
			return
		}
		seen[k] = true
		order = append(order, k)
		if a.User == "" {
			for _, c := range kids[a.Account] {
				walk(c)
			}
		}
	}
	if root, ok := m.assocs[key{account: RootAccount}]; ok {
		walk(root)
	}
	return order, seen
}
