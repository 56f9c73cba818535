package priority

import (
	"math"
	"math/big"
	"slices"
	"strings"
)

// SharesParent is Fairshare=parent (Slurm's SLURMDB_FS_USE_PARENT): the
// association gives up a place of its own in the fair-share tree and
// competes, with its children, as part of its parent. sshare prints its
// RawShares as "parent" and its LevelFS blank.
const SharesParent uint32 = 0x7fffffff

// A ShareAssoc is one association of the tree: User "" for an account's
// own association (Parent is its parent account, "" only for root); a user
// association has Parent == Account.
type ShareAssoc struct {
	Account, User, Parent string
	// Shares is Fairshare=, or SharesParent. 0 stays 0, as in Slurm: the
	// association has no share, so its classic factor is 0 and Fair Tree
	// ranks it last among its siblings.
	Shares uint32
}

// A ShareRow is one line of sshare: the association and its figures.
//
// sshare prints some of them blank, and a row carries 0 there: RawShares
// and LevelFS of root, LevelFS of a Fairshare=parent account, FairShare of
// every account. It also blanks LevelFS of a Fairshare=parent user (whose
// RawShares it prints as "parent"), which carries the +Inf Fair Tree
// ranks it by.
type ShareRow struct {
	// Parent is the account the association hangs from: its Account for a
	// user, "" for root. An association whose parent is missing, or which
	// closes a loop of parents, hangs from root and says so here.
	Account, User, Parent string
	RawShares             uint32
	// NormShares is sshare's NormShares. Fair Tree: the shares over those
	// of the association and its siblings (a Fairshare=parent association
	// shows its parent's; root 0). Classic: that fraction multiplied by the
	// same fraction of every ancestor below root, the share of the whole
	// machine (root 1), as assoc_mgr normalises it without FAIR_TREE.
	NormShares float64
	// RawUsage is the decayed usage: a user's as given, an account's the
	// sum of its subtree, root's the cluster's.
	RawUsage float64
	// NormUsage is RawUsage over root's (sshare -l's NormUsage, which it
	// prints blank for root).
	NormUsage float64
	// EffectvUsage is sshare's EffectvUsage (root 1). Fair Tree: the
	// usage over the parent's (the nearest not Fairshare=parent). Classic: the dampened usage,
	// UE = UA + (UE_parent - UA) * S/S_siblings, equal to NormUsage just
	// below root.
	EffectvUsage float64
	// LevelFS is Fair Tree's S/U at the association's level, +Inf when it
	// has no usage (sshare prints "inf"), 0 when it has no shares; 0 under
	// classic.
	LevelFS float64
	// FairShare is a user's fair-share factor; 0 for accounts, which
	// sshare prints blank.
	FairShare float64
}

// AssocKey is the key of a user association's usage in Usage.
func AssocKey(account, user string) string { return account + "/" + user }

// ldPrec is the mantissa of x86-64's long double, in which slurmctld
// computes Fair Tree's usage ratios and level fair-shares. Ranks compare
// those values exactly, so ties (and near-ties that double precision would
// turn round) come out as slurmctld's do.
const ldPrec = 64

// noVal is Slurm's NO_VAL as a level fair-share: the placeholder of root
// and of Fairshare=parent accounts, and the "previous" value each level of
// Fair Tree's walk starts from.
var noVal = big.NewFloat(4294967294)

type shareNode struct {
	ShareAssoc
	user     bool
	parent   *shareNode // the direct parent; nil for root
	fsParent *shareNode // the nearest ancestor not Fairshare=parent, or root
	kids     []*shareNode
	fsKids   []*shareNode // those whose fsParent it is, in sshare's order
	mark     uint8        // while placing accounts: 1 on the path, 2 placed

	levelShares uint64     // shares of its fsParent's children, Fairshare=parent aside
	usage       *big.Float // raw usage, long double
	lf          *big.Float // Fair Tree's level fair-share

	normShares, normUsage, efctv, fs float64
}

func (n *shareNode) sortKey() string {
	// sshare lists associations by lineage: an account adds "acct/", a
	// user "0-user/", so users come before sub-accounts (as a rule).
	if n.user {
		return "0-" + n.User + "/"
	}
	return n.Account + "/"
}

func ld(x float64) *big.Float { return new(big.Float).SetPrec(ldPrec).SetFloat64(x) }

func toFloat(x *big.Float) float64 {
	f, _ := x.Float64()
	return min(f, math.MaxFloat64)
}

// ratio is a/b in long double, 0 when b is.
func ratio(a, b *big.Float) *big.Float {
	if b.Sign() == 0 {
		return ld(0)
	}
	return new(big.Float).SetPrec(ldPrec).Quo(a, b)
}

// TreeShares computes every association's figures. usage holds user
// associations' decayed usage keyed AssocKey(account, user); accounts'
// usage is derived by summing (usage that is negative or not finite counts
// as none). Rows come in sshare's order (root first, then depth first as
// sshare -a prints it: an account's users by name, then its sub-accounts
// by name).
//
// The first association with User and Parent "" is root (one named
// "root" is made when there is none); another account without a parent,
// or with one not given, hangs from root, and so do users of an account
// not given. Of associations given twice the first counts.
// With fairTree false it is the classic algorithm (PriorityFlags=
// NO_FAIR_TREE) with FairShareDampeningFactor=1.
func TreeShares(assocs []ShareAssoc, usage Usage, fairTree bool) []ShareRow {
	root, order, users := buildShareTree(assocs, usage)
	for _, n := range order {
		// Capped as slurmctld caps it (a changed half-life can leave an
		// association more usage than root).
		n.normUsage = min(toFloat(ratio(n.usage, root.usage)), 1)
	}
	if fairTree {
		fairTreeShares(root, order[1:], users)
	} else {
		classicShares(root, order[1:])
	}
	rows := make([]ShareRow, len(order))
	for i, n := range order {
		r := ShareRow{
			Account: n.Account, User: n.User, RawShares: n.Shares,
			NormShares: n.normShares, RawUsage: toFloat(n.usage), NormUsage: n.normUsage,
			EffectvUsage: n.efctv, FairShare: n.fs,
		}
		if n.parent != nil {
			r.Parent = n.parent.Account
		} else {
			r.RawShares = 0
		}
		if n.lf != nil && (n.user || n.Shares != SharesParent) {
			r.LevelFS, _ = n.lf.Float64()
		}
		rows[i] = r
	}
	return rows
}

// buildShareTree links the associations and returns root, every node in
// sshare's order (root first) and the number of user associations.
func buildShareTree(assocs []ShareAssoc, usage Usage) (*shareNode, []*shareNode, int) {
	var root *shareNode
	for _, a := range assocs {
		if a.User == "" && a.Parent == "" {
			root = &shareNode{ShareAssoc: a}
			break
		}
	}
	if root == nil {
		root = &shareNode{ShareAssoc: ShareAssoc{Account: "root", Shares: 1}}
	}
	accounts := map[string]*shareNode{root.Account: root}
	var accts, users []*shareNode
	seen := map[string]bool{}
	for _, a := range assocs {
		if a.User == "" {
			if accounts[a.Account] == nil {
				n := &shareNode{ShareAssoc: a}
				accounts[a.Account] = n
				accts = append(accts, n)
			}
			continue
		}
		if k := AssocKey(a.Account, a.User); !seen[k] {
			seen[k] = true
			a.Parent = a.Account
			users = append(users, &shareNode{ShareAssoc: a, user: true})
		}
	}
	for _, n := range accts {
		n.parent = accounts[n.Parent]
		if n.parent == nil || n.parent == n {
			n.parent = root
		}
	}
	// An account whose parents loop back to it would never reach root:
	// the one closing the loop hangs from root instead.
	for _, n := range accts {
		var path []*shareNode
		for cur := n; cur != root && cur.mark != 2; cur = cur.parent {
			if cur.mark == 1 {
				path[len(path)-1].parent = root
				break
			}
			cur.mark = 1
			path = append(path, cur)
		}
		for _, p := range path {
			p.mark = 2
		}
	}
	for _, n := range users {
		if n.parent = accounts[n.Account]; n.parent == nil {
			n.parent = root
		}
		v := usage[AssocKey(n.Account, n.User)]
		if !(v > 0) || math.IsInf(v, 1) {
			v = 0
		}
		n.usage = ld(v)
	}
	for _, n := range accts {
		n.parent.kids = append(n.parent.kids, n)
	}
	for _, n := range users {
		n.parent.kids = append(n.parent.kids, n)
	}

	order := []*shareNode{root}
	var visit func(n *shareNode)
	visit = func(n *shareNode) {
		slices.SortStableFunc(n.kids, func(a, b *shareNode) int { return strings.Compare(a.sortKey(), b.sortKey()) })
		for _, k := range n.kids {
			order = append(order, k)
			visit(k)
		}
	}
	visit(root)

	// Fairshare=parent: the association and its children compete among
	// the nearest ancestor's children that is not Fairshare=parent itself,
	// so the children of such an account have it as fsParent and the
	// account has no fsKids. Appending in sshare's order is the order of
	// assoc_mgr's children lists, which slurmdbd hands over by lineage.
	for _, n := range order[1:] {
		p := n.parent
		for p != root && p.Shares == SharesParent {
			p = p.parent
		}
		n.fsParent = p
		p.fsKids = append(p.fsKids, n)
	}
	for _, n := range order {
		var sum uint64 // Slurm sums in 32 bits, which can wrap; this cannot
		for _, k := range n.fsKids {
			if k.Shares != SharesParent {
				sum += uint64(k.Shares)
			}
		}
		for _, k := range n.fsKids {
			k.levelShares = sum
		}
	}
	// Accounts' usage: each subtree's sum, children before parents.
	for _, n := range order {
		if !n.user {
			n.usage = ld(0)
		}
	}
	for i := len(order) - 1; i > 0; i-- {
		n := order[i]
		n.parent.usage.Add(n.parent.usage, n.usage)
	}
	return root, order, len(users)
}

// levelShare is S of Fair Tree: the shares over those of the level (a
// Fairshare=parent association takes its fsParent's); 0 without shares.
func levelShare(n *shareNode) float64 {
	if n.Shares == SharesParent {
		n = n.fsParent
	}
	if n.levelShares == 0 {
		return 0
	}
	return float64(n.Shares) / float64(n.levelShares)
}

// fairTreeShares is fair_tree.c: each association's LF = S/U among its
// siblings, then a depth-first walk of the tree, siblings in LF order,
// that ranks users from users down to 1.
func fairTreeShares(root *shareNode, nodes []*shareNode, users int) {
	root.efctv = 1 // as slurmctld sets it at start; root has no level
	for _, n := range nodes {
		s := levelShare(n)
		u := ratio(n.usage, n.fsParent.usage)
		n.normShares, n.efctv = s, toFloat(u)
		switch {
		case n.Shares == SharesParent && n.user:
			// Ranks first in its account, subject to ties.
			n.lf = new(big.Float).SetInf(false)
		case n.Shares == SharesParent:
			n.lf = noVal
		case s == 0:
			n.lf = ld(0)
		case u.Sign() == 0:
			n.lf = new(big.Float).SetInf(false)
		default:
			n.lf = new(big.Float).SetPrec(ldPrec).Quo(ld(s), u)
		}
	}
	if users == 0 {
		return
	}
	rank, next := users, users // next: the rank were there no ties
	var walk func(sib []*shareNode, accountTied bool)
	walk = func(sib []*shareNode, accountTied bool) {
		// Highest LF first; at equal LF users before accounts. qsort is
		// not stable; this keeps sshare's order among equals.
		slices.SortStableFunc(sib, func(a, b *shareNode) int {
			if c := b.lf.Cmp(a.lf); c != 0 {
				return c
			}
			switch {
			case a.user && !b.user:
				return -1
			case !a.user && b.user:
				return 1
			}
			return 0
		})
		prev := noVal
		for i, n := range sib {
			// A user tied with the sibling before it keeps the rank last
			// given; so does the first user under an account tied with
			// the sibling before it.
			tied := prev.Cmp(n.lf) == 0
			if i == 0 && accountTied {
				tied = true
			}
			if n.user {
				if !tied {
					rank = next
				}
				n.fs = float64(rank) / float64(users)
				next--
			} else {
				// fair_tree.shtml says sibling accounts with equal LF have
				// their children merged before descending. In fair_tree.c,
				// _count_tied_accounts stops at the first following sibling
				// that is an account, and at equal LF every user sorts
				// before every account, so it always counts 0 and no merge
				// ever happens: each tied account is walked on its own, in
				// turn, its best user sharing the rank of the user ranked
				// just before (the previous account's last). We follow the
				// code.
				walk(n.fsKids, tied)
			}
			prev = n.lf
		}
	}
	walk(root.fsKids, false)
}

// classicShares is priority/multifactor without FAIR_TREE: shares
// normalised down the whole tree, the dampened effective usage, and
// F = 2^(-UE/S).
func classicShares(root *shareNode, nodes []*shareNode) {
	root.normShares, root.efctv = 1, 1
	// nodes come parents first, so an fsParent is always done.
	for _, n := range nodes {
		if n.Shares == SharesParent {
			n.normShares = n.fsParent.normShares
		} else {
			s := 1.0
			for a := n; a != root; a = a.parent {
				if a.Shares == SharesParent {
					continue
				}
				if a.levelShares == 0 {
					s = 0
				} else {
					s *= float64(a.Shares) / float64(a.levelShares)
				}
			}
			n.normShares = s
		}
		p := n.fsParent
		switch {
		case p == root:
			n.efctv = n.normUsage
		case n.Shares == SharesParent, n.levelShares == 0:
			n.efctv = p.efctv
		default:
			ua := n.normUsage
			n.efctv = ua + (p.efctv-ua)*(float64(n.Shares)/float64(n.levelShares))
		}
	}
	for _, n := range nodes {
		if !n.user {
			continue
		}
		fa := n
		if n.Shares == SharesParent {
			fa = n.fsParent
		}
		if fa.normShares > 0 {
			n.fs = math.Exp2(-fa.efctv / fa.normShares)
		}
	}
}
