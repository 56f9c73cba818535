package sacctmgr

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// assocCond is an association condition (slurmdb_assoc_cond_t): each list
// filters when given. users set but empty keeps every user's association
// and no account's, as slurmdbd reads an empty user list.
type assocCond struct {
	accounts, users, partitions, parents, qos, defQOS, ids, clusters []string
	hasUsers, onlyDefaults                                           bool
}

func (q *assocCond) matches(a assocRec) bool {
	in := func(list []string, v string) bool { return len(list) == 0 || slices.Contains(list, v) }
	if !in(q.accounts, a.account) || !in(q.partitions, a.partition) || !in(q.clusters, a.cluster) ||
		!in(q.ids, strconv.FormatUint(uint64(a.id), 10)) || !in(q.defQOS, a.defQOS) {
		return false
	}
	if q.hasUsers {
		if a.user == "" {
			return false
		}
		if len(q.users) > 0 && !slices.Contains(q.users, a.user) {
			return false
		}
	}
	if len(q.parents) > 0 && (a.user != "" || !slices.Contains(q.parents, a.parent)) {
		return false
	}
	if len(q.qos) > 0 && !slices.ContainsFunc(a.qos, func(s string) bool { return slices.Contains(q.qos, s) }) {
		return false
	}
	return !q.onlyDefaults || a.isDefault
}

// assocCondWord reads one option of sacctmgr_set_assoc_cond; false when
// it is not one of them.
func (c *cmd) assocCondWord(q *assocCond, o option) bool {
	v := o.value
	switch {
	case o.is("Accounts", 2) || o.is("Acct", 4):
		q.accounts = addToList(q.accounts, v, true)
		return len(q.accounts) > 0
	case o.is("Ids", 1) || o.is("Associations", 2):
		q.ids = append(q.ids, c.idList(v, "AssocId")...)
		return true
	case o.is("Clusters", 1):
		q.clusters = addToList(q.clusters, v, true)
		return len(q.clusters) > 0
	case o.is("DefaultQOS", 8):
		list, ok := c.qosList(v, 0)
		if !ok {
			c.fail()
			return false
		}
		q.defQOS = append(q.defQOS, list...)
		return len(list) > 0
	case o.is("Partitions", 3):
		q.partitions = addToList(q.partitions, v, true)
		return len(q.partitions) > 0
	case o.is("Parents", 4):
		q.parents = addToList(q.parents, v, true)
		return len(q.parents) > 0
	case o.is("QosLevel", 1):
		list, ok := c.qosList(v, 0)
		if !ok {
			return false
		}
		q.qos = append(q.qos, list...)
		return len(list) > 0
	case o.is("Users", 1):
		q.users, q.hasUsers = addToList(q.users, v, true), true
		return len(q.users) > 0
	}
	return false
}

// assocChange is what "set" (or add) gives an association.
type assocChange struct {
	shares      *uint32
	sharesClear bool
	prio        *uint32
	prioClear   bool
	parent      *string
	qos         []string
	hasQOS      bool
	defQOS      *string
	limits      limitChange
}

func (ch *assocChange) any() bool {
	return ch.shares != nil || ch.prio != nil || ch.parent != nil || ch.hasQOS || ch.defQOS != nil || ch.limits.any()
}

// assocOptions are sacctmgr_set_assoc_rec's options in its order; kind ""
// marks a limit Drover does not keep.
var assocOptions = []struct {
	name string
	min  int
	kind string
}{
	{"Comment", 2, ""}, {"DefaultQOS", 8, "defqos"}, {"FairShare", 1, "share"}, {"Shares", 1, "share"},
	{"GrpCPUMins", 7, ""}, {"GrpCPURunMins", 7, ""}, {"GrpCpus", 7, ""}, {"GrpJobs", 4, ""},
	{"GrpJobsAccrue", 8, ""}, {"GrpMemory", 4, ""}, {"GrpNodes", 4, ""}, {"GrpSubmitJobs", 4, ""},
	{"GrpTRES", 7, ""}, {"GrpTRESMins", 8, ""}, {"GrpTRESRunMins", 8, ""}, {"GrpWall", 4, ""},
	{"MaxCPUMinsPerJob", 7, ""}, {"MaxCPURunMins", 7, ""}, {"MaxCpusPerJob", 7, ""}, {"MaxJobs", 4, ""},
	{"MaxJobsAccrue", 8, ""}, {"MaxNodesPerJob", 4, ""}, {"MinPrioThresh", 4, ""}, {"MaxSubmitJobs", 4, ""},
	{"MaxTRES", 7, ""}, {"MaxTRESPJ", 9, ""}, {"MaxTRESPerJob", 11, ""}, {"MaxTRESPerNode", 11, ""},
	{"MaxTRESPN", 9, ""}, {"MaxTRESMinsPerJob", 8, ""}, {"MaxTRESMinsPJ", 13, ""}, {"MaxTRESRunMins", 8, ""},
	{"MaxWallDurationPerJob", 4, ""}, {"Parent", 2, "parent"}, {"Priority", 2, "prio"}, {"QosLevel", 1, "qos"},
}

// setAssoc applies one option of sacctmgr_set_assoc_rec; handled says
// whether it was one (set: and set something).
func (c *cmd) setAssoc(ch *assocChange, o option, allow *bool) (set, handled bool) {
	for _, opt := range assocOptions {
		if !o.is(opt.name, opt.min) {
			continue
		}
		switch opt.kind {
		case "defqos":
			v := stripQuotes(o.value, true)
			if atoi(v) == -1 {
				v = ""
			} else if list, err := c.getQOS(); err == nil {
				found := ""
				for _, q := range list {
					if strings.EqualFold(q.name, v) {
						found = q.name
					}
				}
				if found == "" {
					c.fail()
					c.errf("You gave a bad default qos '%s'.  Use 'list qos' to get complete list.\n", o.value)
				}
				v = found
			}
			ch.defQOS = &v
			return true, true
		case "share":
			if strings.HasPrefix(strings.ToLower(o.value), "parent") {
				c.notSupported(o.word)
				return false, true
			}
			n, clear, ok := c.uintValue(o, "FairShare")
			if !ok {
				return false, true
			}
			ch.shares, ch.sharesClear = &n, clear
			return true, true
		case "parent":
			p := stripQuotes(o.value, true)
			ch.parent = &p
			return true, true
		case "prio":
			n, clear, ok := c.uintValue(o, "Priority")
			if !ok {
				return false, true
			}
			ch.prio, ch.prioClear = &n, clear
			return true, true
		case "qos":
			*allow = true
			list, ok := c.qosList(o.value, o.op)
			if !ok {
				return false, false
			}
			ch.qos, ch.hasQOS = list, true
			return true, true
		}
		if k, ok := assocLimitOptions[opt.name]; ok {
			return c.setLimit(&ch.limits, k, o), true
		}
		c.notSupported(o.word)
		return false, true
	}
	return false, false
}

// apply gives a what ch sets; effective is a's QOS list as inherited,
// which +qos and -qos start from when a has none of its own.
func (ch *assocChange) apply(a *assocRec, effective []string) {
	if ch.shares != nil {
		a.shares = *ch.shares
		if ch.sharesClear {
			a.shares = 1
		}
	}
	if ch.prio != nil {
		a.prio, a.prioSet = *ch.prio, !ch.prioClear
		if ch.prioClear {
			a.prio = 0
		}
	}
	if ch.parent != nil && a.user == "" {
		a.parent = *ch.parent
	}
	if ch.hasQOS {
		cur := a.qos
		if len(cur) == 0 {
			cur = effective
		}
		a.qos = applyList(cur, ch.qos)
	}
	if ch.defQOS != nil {
		a.defQOS = *ch.defQOS
	}
	ch.limits.apply(&a.limits)
}

// recSet is the association options of an add request.
func (ch *assocChange) recSet() v0044.V0044AssocRecSet {
	r := v0044.V0044AssocRecSet{Qoslevel: v0044.V0044QosStringIDList{}}
	if ch.shares != nil && !ch.sharesClear {
		r.Fairshare = v0044.NewOptInt32(int32(*ch.shares))
	}
	if ch.prio != nil && !ch.prioClear {
		r.Priority = v0044.NewOptV0044Uint32NoValStruct(u32(*ch.prio))
	}
	if ch.parent != nil {
		r.Parent = v0044.NewOptString(*ch.parent)
	}
	if ch.hasQOS {
		for _, q := range ch.qos {
			r.Qoslevel = append(r.Qoslevel, strings.TrimLeft(q, "+-"))
		}
	}
	if ch.defQOS != nil {
		r.Defaultqos = v0044.NewOptString(*ch.defQOS)
	}
	return r
}

// printLimits prints what an add sets on its associations, as
// sacctmgr_print_assoc_limits.
func (c *cmd) printLimits(ch *assocChange) {
	c.outLimit("Fairshare     ", ch.shares, ch.sharesClear)
	if ch.parent != nil {
		c.out("  Parent        = %s\n", *ch.parent)
	}
	c.outLimit("Priority      ", ch.prio, ch.prioClear)
	if ch.hasQOS {
		c.outSorted("QOS           ", ch.qos)
	}
	if ch.defQOS != nil {
		c.out("  DefQOS        = %s\n", *ch.defQOS)
	}
}

// outLimit prints a number an add sets, after its label (padded as
// sacctmgr pads it): NONE when cleared, nothing when not set.
func (c *cmd) outLimit(label string, n *uint32, clear bool) {
	switch {
	case n == nil:
	case clear:
		c.out("  %s= NONE\n", label)
	default:
		c.out("  %s= %d\n", label, *n)
	}
}

// outSorted prints a list an add sets, sorted, after its label; nothing
// when it is empty.
func (c *cmd) outSorted(label string, list []string) {
	if len(list) == 0 {
		return
	}
	list = slices.Clone(list)
	slices.Sort(list)
	c.out("  %s= %s\n", label, strings.Join(list, ","))
}

// sortTree orders associations as slurmdb_sort_hierarchical_assoc_list:
// depth first from root, each account's users (by name) before its
// sub-accounts (by name).
func sortTree(list []assocRec) []assocRec {
	kids := map[string][]assocRec{}
	var roots []assocRec
	for _, a := range list {
		switch {
		case a.user != "":
			kids[a.account] = append(kids[a.account], a)
		case a.parent == "":
			roots = append(roots, a)
		default:
			kids[a.parent] = append(kids[a.parent], a)
		}
	}
	order := func(s []assocRec) {
		slices.SortStableFunc(s, func(a, b assocRec) int {
			if (a.user != "") != (b.user != "") {
				if a.user != "" {
					return -1
				}
				return 1
			}
			na, nb := a.account, b.account
			if a.user != "" {
				na, nb = a.user, b.user
			}
			return strings.Compare(na, nb)
		})
	}
	var out []assocRec
	seen := map[string]bool{}
	var walk func(a assocRec)
	walk = func(a assocRec) {
		out = append(out, a)
		if a.user != "" || seen[a.account] {
			return
		}
		seen[a.account] = true
		k := kids[a.account]
		order(k)
		for _, x := range k {
			walk(x)
		}
	}
	order(roots)
	for _, r := range roots {
		walk(r)
	}
	// Anything the walk missed (a parent not listed) follows.
	for _, a := range list {
		if !slices.ContainsFunc(out, func(b assocRec) bool { return b.id == a.id }) {
			out = append(out, a)
		}
	}
	return out
}

// assocCell is a column of an association (sacctmgr_print_assoc_rec).
func assocCell(a assocRec, f field) cell {
	switch f.typ {
	case fAccount:
		return str(a.account)
	case fCluster:
		return str(a.cluster)
	case fComment:
		return nullStr()
	case fDefQOS:
		return str(a.defQOS)
	case fShare:
		return num(uint64(a.shares))
	case fFlags:
		return nullStr()
	case fID:
		return num(uint64(a.id))
	case fLineage:
		return str(a.lineage)
	case fParentName:
		if a.user != "" {
			return nullStr()
		}
		return strOrNull(a.parent)
	case fParentID:
		return unset()
	case fPartition:
		return strOrNull(a.partition)
	case fPriority:
		if !a.prioSet {
			return unset()
		}
		return num(uint64(a.prio))
	case fQOS:
		return str(strings.Join(a.qos, ","))
	case fQOSRaw:
		return strOrNull(strings.Join(a.qos, ","))
	case fUser:
		return strOrNull(a.user)
	case fLimit:
		return limitCell(a.limits, f)
	}
	return unset()
}

func (c *cmd) listAssocs(argv []string) {
	var q assocCond
	var format []string
	wopl, onlyDefs := false, false
	readWords(argv, func(argv []string, i int) (int, int) {
		for ; i < len(argv); i++ {
			o := parseOption(argv[i])
			if o.op != 0 {
				c.badOperator(o)
				continue
			}
			switch {
			case !o.eq && o.is("OnlyDefaults", 2):
				onlyDefs = true
			case !o.eq && (o.is("Tree", 4) || o.is("WithDeleted", 5) || o.is("WithRawQOSLevel", 5) ||
				o.is("WithSubAccounts", 5) || o.is("WOPInfo", 4)):
			case !o.eq && (o.is("WOPLimits", 4) || o.is("WOLimits", 3)):
				wopl = true
			case !o.eq && o.is("where", 5):
			case !o.eq || o.is("Ids", 1) || o.is("Associations", 2):
				q.ids = append(q.ids, c.idList(o.arg(), "AssocId")...)
			case o.is("Format", 1):
				format = addToList(format, o.value, true)
			default:
				if !c.assocCondWord(&q, o) || c.exitCode != 0 {
					c.fail()
					c.errf(" Unknown condition: %s\n", o.word)
				}
			}
		}
		return i, 0
	})
	if c.exitCode != 0 {
		return
	}
	q.onlyDefaults = onlyDefs
	format = columns(format, "Cluster,Account,User,Part", "Share,Priority,GrpJ,GrpTRES,GrpS,GrpWall,GrpTRESMins,MaxJ,"+
		"MaxTRES,MaxTRESPerN,MaxS,MaxW,MaxTRESMins,QOS,DefaultQOS,GrpTRESRunMins", !wopl)
	p, ok := c.printer(format)
	if !ok {
		return
	}
	list, err := c.getAssocs(wopl)
	if err != nil {
		c.errorWithRequest(err)
		return
	}
	p.header()
	for _, a := range sortTree(list) {
		if q.matches(a) {
			p.row(func(f field) cell { return assocCell(a, f) })
		}
	}
}

// modifiedName names a changed association as slurmdbd's modify list
// does.
func modifiedName(a assocRec) string { return assocName(a, 20) }

// removedName names a removed association as slurmdbd's remove list does.
func removedName(a assocRec) string { return assocName(a, 10) }

// assocName names an association as slurmdbd's lists do; a user's
// account is padded to width, which its modify and remove lists differ
// in.
func assocName(a assocRec, width int) string {
	switch {
	case a.partition != "":
		return fmt.Sprintf("C = %-10s A = %-*s U = %-9s P = %s", a.cluster, width, a.account, a.user, a.partition)
	case a.user != "":
		return fmt.Sprintf("C = %-10s A = %-*s U = %-9s", a.cluster, width, a.account, a.user)
	case a.parent != "":
		return fmt.Sprintf("C = %-10s A = %s of %s", a.cluster, a.account, a.parent)
	}
	return fmt.Sprintf("C = %-10s A = %s", a.cluster, a.account)
}

// modifyAssocs changes the associations q selects, as
// slurmdb_associations_modify: they are read raw, changed and posted back
// in one request. what names them in the report ("user", "account").
func (c *cmd) modifyAssocs(q matcher, ch *assocChange, what string) {
	raw, err := c.getAssocs(true)
	if c.requestFailed(err) {
		return
	}
	eff, err := c.getAssocs(false)
	if c.requestFailed(err) {
		return
	}
	effective := map[uint32]assocRec{}
	for _, a := range eff {
		effective[a.id] = a
	}
	var changed []assocRec
	var names []string
	for _, a := range sortTree(raw) {
		if !q.matches(a) {
			continue
		}
		if ch.parent != nil && a.user == "" && (a.account == *ch.parent || a.parent == *ch.parent) {
			// Its own parent, or where it is: nothing to do.
			if a.account == *ch.parent {
				c.slurmError("You can't make an account be a child of it's self")
			}
			continue
		}
		// slurmdbd names what it changes as it was (its old parent).
		names = append(names, modifiedName(a))
		ch.apply(&a, effective[a.id].qos)
		changed = append(changed, a)
	}
	c.out(" Modified %s associations...\n", what)
	if c.nothingModified(len(changed)) {
		return
	}
	c.commitAndSend(func() { c.outNames(names) }, func() bool {
		err := c.postAssocs(changed)
		if err != nil && what == "account" && ch.parent != nil && strings.Contains(err.Error(), "parent") {
			c.fail()
			c.errf(" Parent Account %s doesn't exist.\n", *ch.parent)
			return false
		}
		return c.sent(err)
	})
}
