package priority

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// shareTreeBuilder builds an association tree under root and its usage.
type shareTreeBuilder struct {
	assocs []ShareAssoc
	usage  Usage
}

func shareTree() *shareTreeBuilder {
	return &shareTreeBuilder{assocs: []ShareAssoc{{Account: "root"}}, usage: Usage{}}
}

func (b *shareTreeBuilder) Account(name, parent string, shares uint32) *shareTreeBuilder {
	b.assocs = append(b.assocs, ShareAssoc{Account: name, Parent: parent, Shares: shares})
	return b
}

func (b *shareTreeBuilder) User(account, user string, shares uint32, usage float64) *shareTreeBuilder {
	b.assocs = append(b.assocs, ShareAssoc{Account: account, User: user, Parent: account, Shares: shares})
	if usage != 0 {
		b.usage[AssocKey(account, user)] = usage
	}
	return b
}

func (b *shareTreeBuilder) Shares(fairTree bool) []ShareRow {
	return TreeShares(b.assocs, b.usage, fairTree)
}

// sshareLine prints a row as `sshare -l -P` does, up to FairShare
// (classic) or LevelFS (Fair Tree), each field followed by "|": what
// sshare leaves blank is blank, RawUsage is truncated, +Inf is "inf".
func sshareLine(r ShareRow, fairTree bool) string {
	root := r.User == "" && r.Parent == ""
	num := func(v float64, blank bool) string {
		switch {
		case blank:
			return ""
		case math.IsInf(v, 1):
			return "inf"
		}
		return fmt.Sprintf("%f", v)
	}
	raw := fmt.Sprint(r.RawShares)
	switch {
	case root:
		raw = ""
	case r.RawShares == SharesParent:
		raw = "parent"
	}
	f := []string{
		r.Account, r.User, raw, num(r.NormShares, false), fmt.Sprint(uint64(r.RawUsage)),
		num(r.NormUsage, root), num(r.EffectvUsage, false), num(r.FairShare, r.User == ""),
	}
	if fairTree {
		f = append(f, num(r.LevelFS, root || r.RawShares == SharesParent))
	}
	return strings.Join(f, "|") + "|"
}

// slurmTest24_1 is the tree of Slurm's testsuite/expect/test24.1.prog.c,
// which is also the worked example of classic_fair_share.shtml (Figure 3)
// with AccountG (no shares) taking the rest of the machine's usage.
func slurmTest24_1() *shareTreeBuilder {
	return shareTree().
		Account("AccountA", "root", 40).
		Account("AccountB", "AccountA", 30).User("AccountB", "User1", 1, 20).
		Account("AccountC", "AccountA", 10).User("AccountC", "User2", 1, 25).User("AccountC", "User3", 1, 0).
		Account("AccountD", "root", 60).
		Account("AccountE", "AccountD", 25).User("AccountE", "User4", 1, 25).
		Account("AccountF", "AccountD", 35).User("AccountF", "User5", 1, 0).
		Account("AccountG", "root", 0).User("AccountG", "User6", 0, 30)
}

// slurmTest130_2 is testsuite/python/scripts/prio_multifactor.c (used by
// test_130_2.py): test24.1's tree plus AccountH, whose sub-account and
// users use Fairshare=parent.
func slurmTest130_2() *shareTreeBuilder {
	return slurmTest24_1().
		Account("AccountH", "root", 50).
		Account("AccountHTA", "AccountH", SharesParent).
		User("AccountHTA", "UHTAStd1", SharesParent, 10).
		User("AccountHTA", "UHTAStd2", 30, 10).
		User("AccountHTA", "UHTAStd3", 50, 25).
		User("AccountH", "UHRA1", SharesParent, 20).
		User("AccountH", "UHRA2", 40, 20).
		User("AccountH", "UHRA3", 50, 25)
}

// slurmTest24_4 is testsuite/expect/test24.4.prog.c, Fair Tree's worked
// tree: general cases (aA, aB, aC), Fairshare=parent (aD), ties (aE, aF,
// u1, aG). Usage the program sets on accounts is dropped: slurmctld sums
// it from the users, as sshare's RawUsage there shows.
func slurmTest24_4() *shareTreeBuilder {
	return shareTree().
		Account("aA", "root", 40).
		Account("aAA", "aA", 30).User("aAA", "uAA1", 1, 20).
		Account("aAB", "aA", 10).User("aAB", "uAB1", 1, 25).User("aAB", "uAB2", 1, 0).
		Account("aB", "root", 60).
		Account("aBA", "aB", 25).User("aBA", "uBA1", 1, 25).
		Account("aBB", "aB", 35).User("aBB", "uBB1", 1, 0).
		Account("aC", "root", 0).User("aC", "uC1", 0, 30).
		Account("aD", "root", 50).
		Account("aDA", "aD", SharesParent).
		User("aDA", "uDA1", SharesParent, 10).User("aDA", "uDA2", 30, 10).User("aDA", "uDA3", 50, 25).
		User("aD", "uD1", SharesParent, 20).User("aD", "uD2", 40, 20).User("aD", "uD3", 50, 25).
		Account("aE", "root", 10).User("aE", "aE1", 10, 0).User("aE", "aE2", 10, 0).
		User("root", "u1", 10, 0).
		Account("aF", "root", 20).User("aF", "uF1", 10, 0).User("aF", "uF2", 20, 0).
		Account("aG", "root", 8).User("aG", "uG1", 10, 10).
		Account("aGA", "aG", 10).User("aGA", "uGA1", 20, 4).User("aGA", "uGA2", 20, 6).
		User("root", "u2", 10, 10)
}

// TestTreeSharesSlurmTests reproduces the lines Slurm's own regression
// tests expect from sshare -l -P, verbatim. Slurm's lines go on past our
// columns with GrpTRESMins (blank) and TRESRunMins ("cpu=0"); suffix is
// that tail.
func TestTreeSharesSlurmTests(t *testing.T) {
	for name, tc := range map[string]struct {
		tree     *shareTreeBuilder
		fairTree bool
		suffix   string
		want     []string
		ordered  bool // want is every row, in sshare's order
	}{
		// test24.1 (classic; expect matches these as prefixes).
		"test24.1": {
			tree: slurmTest24_1(),
			want: []string{
				"AccountB|User1|1|0.300000|20|0.200000|0.387500|0.408479|",
				"AccountC|User2|1|0.050000|25|0.250000|0.275000|0.022097|",
				"AccountC|User3|1|0.050000|0|0.000000|0.150000|0.125000|",
				"AccountE|User4|1|0.250000|25|0.250000|0.250000|0.500000|",
				"AccountF|User5|1|0.350000|0|0.000000|0.145833|0.749154|",
				"AccountG|User6|0|",
			},
		},
		// test_130_2.py (classic with Fairshare=parent).
		"test_130_2": {
			tree:   slurmTest130_2(),
			suffix: "|cpu=0|",
			want: []string{
				"AccountB|User1|1|0.200000|20|0.095238|0.184524|0.527550||cpu=0|",
				"AccountC|User2|1|0.033333|25|0.119048|0.130952|0.065672||cpu=0|",
				"AccountC|User3|1|0.033333|0|0.000000|0.071429|0.226431||cpu=0|",
				"AccountE|User4|1|0.166667|25|0.119048|0.119048|0.609507||cpu=0|",
				"AccountF|User5|1|0.233333|0|0.000000|0.069444|0.813594||cpu=0|",
				"AccountG|User6|0|0.000000|30|0.142857|0.142857|0.000000||cpu=0|",
				"AccountH|UHRA1|parent|0.333333|20|0.095238|0.523810|0.336475||cpu=0|",
				"AccountH|UHRA2|40|0.078431|20|0.095238|0.196078|0.176777||cpu=0|",
				"AccountH|UHRA3|50|0.098039|25|0.119048|0.238095|0.185749||cpu=0|",
				"AccountHTA|UHTAStd1|parent|0.333333|10|0.047619|0.523810|0.336475||cpu=0|",
				"AccountHTA|UHTAStd2|30|0.058824|10|0.047619|0.131653|0.211966||cpu=0|",
				"AccountHTA|UHTAStd3|50|0.098039|25|0.119048|0.238095|0.185749||cpu=0|",
			},
		},
		// test24.4 (Fair Tree): all 35 lines, in sshare's order.
		"test24.4": {
			tree: slurmTest24_4(), fairTree: true, suffix: "|cpu=0|", ordered: true,
			want: []string{
				"root|||0.000000|240||1.000000||||cpu=0|",
				"root|u1|10|0.048077|0|0.000000|0.000000|1.000000|inf||cpu=0|",
				"root|u2|10|0.048077|10|0.041667|0.041667|0.666667|1.153846||cpu=0|",
				"aA||40|0.192308|45|0.187500|0.187500||1.025641||cpu=0|",
				"aAA||30|0.750000|20|0.083333|0.444444||1.687500||cpu=0|",
				"aAA|uAA1|1|1.000000|20|0.083333|1.000000|0.619048|1.000000||cpu=0|",
				"aAB||10|0.250000|25|0.104167|0.555556||0.450000||cpu=0|",
				"aAB|uAB1|1|0.500000|25|0.104167|1.000000|0.523810|0.500000||cpu=0|",
				"aAB|uAB2|1|0.500000|0|0.000000|0.000000|0.571429|inf||cpu=0|",
				"aB||60|0.288462|25|0.104167|0.104167||2.769231||cpu=0|",
				"aBA||25|0.416667|25|0.104167|1.000000||0.416667||cpu=0|",
				"aBA|uBA1|1|1.000000|25|0.104167|1.000000|0.714286|1.000000||cpu=0|",
				"aBB||35|0.583333|0|0.000000|0.000000||inf||cpu=0|",
				"aBB|uBB1|1|1.000000|0|0.000000|0.000000|0.761905|inf||cpu=0|",
				"aC||0|0.000000|30|0.125000|0.125000||0.000000||cpu=0|",
				"aC|uC1|0|0.000000|30|0.125000|1.000000|0.047619|0.000000||cpu=0|",
				"aD||50|0.240385|110|0.458333|0.458333||0.524476||cpu=0|",
				"aD|uD1|parent|0.240385|20|0.083333|0.181818|0.476190|||cpu=0|",
				"aD|uD2|40|0.235294|20|0.083333|0.181818|0.238095|1.294118||cpu=0|",
				"aD|uD3|50|0.294118|25|0.104167|0.227273|0.333333|1.294118||cpu=0|",
				"aDA||parent|0.240385|45|0.187500|0.409091||||cpu=0|",
				"aDA|uDA1|parent|0.240385|10|0.041667|0.090909|0.476190|||cpu=0|",
				"aDA|uDA2|30|0.176471|10|0.041667|0.090909|0.380952|1.941176||cpu=0|",
				"aDA|uDA3|50|0.294118|25|0.104167|0.227273|0.333333|1.294118||cpu=0|",
				"aE||10|0.048077|0|0.000000|0.000000||inf||cpu=0|",
				"aE|aE1|10|0.500000|0|0.000000|0.000000|1.000000|inf||cpu=0|",
				"aE|aE2|10|0.500000|0|0.000000|0.000000|1.000000|inf||cpu=0|",
				"aF||20|0.096154|0|0.000000|0.000000||inf||cpu=0|",
				"aF|uF1|10|0.333333|0|0.000000|0.000000|1.000000|inf||cpu=0|",
				"aF|uF2|20|0.666667|0|0.000000|0.000000|1.000000|inf||cpu=0|",
				"aG||8|0.038462|20|0.083333|0.083333||0.461538||cpu=0|",
				"aG|uG1|10|0.500000|10|0.041667|0.500000|0.190476|1.000000||cpu=0|",
				"aGA||10|0.500000|10|0.041667|0.500000||1.000000||cpu=0|",
				"aGA|uGA1|20|0.500000|4|0.016667|0.400000|0.190476|1.250000||cpu=0|",
				"aGA|uGA2|20|0.500000|6|0.025000|0.600000|0.095238|0.833333||cpu=0|",
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			rows := tc.tree.Shares(tc.fairTree)
			byKey := map[string]string{}
			var all []string
			for _, r := range rows {
				line := sshareLine(r, tc.fairTree) + tc.suffix
				byKey[r.Account+"|"+r.User] = line
				all = append(all, line)
			}
			if tc.ordered {
				if diff := cmp.Diff(tc.want, all); diff != "" {
					t.Errorf("sshare -l -P (-want +got):\n%s", diff)
				}
				return
			}
			for _, w := range tc.want {
				f := strings.SplitN(w, "|", 3)
				if got := byKey[f[0]+"|"+f[1]]; !strings.HasPrefix(got, w) {
					t.Errorf("got  %s\nwant %s", got, w)
				}
			}
		})
	}
}

// TestTreeSharesClassicDocExample checks the intermediate figures of
// classic_fair_share.shtml's example: normalised shares and effective
// usage of accounts and users.
func TestTreeSharesClassicDocExample(t *testing.T) {
	type fig struct{ NormShares, EffectvUsage float64 }
	got := map[string]fig{}
	for _, r := range slurmTest24_1().Shares(false) {
		got[r.Account+"|"+r.User] = fig{r.NormShares, r.EffectvUsage}
	}
	want := map[string]fig{
		"root|":          {1, 1},
		"AccountA|":      {0.4, 0.45},
		"AccountD|":      {0.6, 0.25},
		"AccountG|":      {0, 0.3},
		"AccountB|":      {0.3, 0.2 + (0.45-0.2)*30/40},
		"AccountC|":      {0.1, 0.25 + (0.45-0.25)*10/40},
		"AccountE|":      {0.25, 0.25},
		"AccountF|":      {0.35, 0.25 * 35 / 60},
		"AccountB|User1": {0.3, 0.3875},
		"AccountC|User2": {0.05, 0.275},
		"AccountC|User3": {0.05, 0.15},
		"AccountE|User4": {0.25, 0.25},
		"AccountF|User5": {0.35, 0.25 * 35 / 60},
		"AccountG|User6": {0, 0.3},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func factors(rows []ShareRow) map[string]float64 {
	out := map[string]float64{}
	for _, r := range rows {
		if r.User != "" {
			out[AssocKey(r.Account, r.User)] = r.FairShare
		}
	}
	return out
}

// TestTreeSharesFairTreeTies follows fair_tree.c where fair_tree.shtml
// says otherwise: accounts with equal LevelFS are not merged.
func TestTreeSharesFairTreeTies(t *testing.T) {
	for name, tc := range map[string]struct {
		tree *shareTreeBuilder
		want map[string]float64
	}{
		// X and Y tie at LF 1. Merged children (the docs) would rank y1,
		// x1, x2, y2. The code walks X, then Y, whose best user shares the
		// rank of X's last: x1 4, x2 3, y1 3, y2 1.
		"tied accounts walked in turn": {
			tree: shareTree().
				Account("X", "root", 1).User("X", "x1", 1, 2).User("X", "x2", 1, 8).
				Account("Y", "root", 1).User("Y", "y1", 1, 1).User("Y", "y2", 1, 9),
			want: map[string]float64{"X/x1": 1, "X/x2": 0.75, "Y/y1": 0.75, "Y/y2": 0.25},
		},
		// Sibling users with equal LF share a rank; the next one down
		// takes the rank it would have had without the tie.
		"tied users": {
			tree: shareTree().User("root", "a", 1, 5).User("root", "b", 1, 5).User("root", "c", 1, 0).User("root", "d", 1, 10),
			want: map[string]float64{"root/c": 1, "root/a": 0.75, "root/b": 0.75, "root/d": 0.25},
		},
		// A user tied with a sibling account: the account's best user
		// shares the user's rank (the user sorts first).
		"user tied with account": {
			tree: shareTree().
				User("root", "u", 1, 10).
				Account("A", "root", 1).User("A", "a1", 1, 2).User("A", "a2", 1, 8),
			want: map[string]float64{"root/u": 1, "A/a1": 1, "A/a2": 1.0 / 3},
		},
		// E ranks no user; Q ties with it, so q keeps the last rank given,
		// a's, though a's LevelFS (1.5) is above P's (0.5).
		"empty account passes a tie on": {
			tree: shareTree().
				User("root", "a", 3, 10).
				Account("P", "root", 1).User("P", "p", 1, 10).
				Account("E", "P", 1).
				Account("Q", "P", 1).User("Q", "q", 1, 0),
			want: map[string]float64{"root/a": 1, "Q/q": 1, "P/p": 1.0 / 3},
		},
		// S/U of a and b are equal on paper; slurmctld computes them in
		// x86-64 long double, where here b's is the higher (in double they
		// would tie) ...
		"long double apart": {
			tree: shareTree().User("root", "a", 1, 2).User("root", "b", 3, 6).User("root", "c", 0, 7),
			want: map[string]float64{"root/b": 1, "root/a": 2.0 / 3, "root/c": 1.0 / 3},
		},
		// ... and here they tie (in double a's would be the higher).
		"long double tie": {
			tree: shareTree().User("root", "a", 1, 6).User("root", "b", 3, 18).User("root", "c", 0, 7),
			want: map[string]float64{"root/a": 1, "root/b": 1, "root/c": 1.0 / 3},
		},
		"no usage at all": {
			tree: shareTree().Account("A", "root", 3).User("A", "a", 1, 0).User("root", "u", 1, 0),
			want: map[string]float64{"A/a": 1, "root/u": 1},
		},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, factors(tc.tree.Shares(true)), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestTreeSharesFlat checks that a flat tree, every user under root with
// one share, gives FairShare's factors.
func TestTreeSharesFlat(t *testing.T) {
	usage := Usage{"a": 100, "b": 300, "d": 100, "e": 7, "f": 1e6}
	users := []string{"a", "b", "c", "d", "e", "f"}
	tree := shareTree()
	for _, u := range users {
		tree.User("root", u, 1, usage[u])
	}
	for _, fairTree := range []bool{false, true} {
		want := map[string]float64{}
		for u, f := range FairShare(usage, users, fairTree) {
			want[AssocKey("root", u)] = f
		}
		if diff := cmp.Diff(want, factors(tree.Shares(fairTree)), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("fairTree=%v (-FairShare +TreeShares):\n%s", fairTree, diff)
		}
	}
}

// TestTreeSharesEdges: degenerate trees give finite figures.
func TestTreeSharesEdges(t *testing.T) {
	type fig struct {
		Parent               string
		NormShares, Efctv, F float64
	}
	deep := shareTree()
	parent := "root"
	for i := range 200 {
		name := fmt.Sprintf("d%d", i)
		deep.Account(name, parent, 2)
		parent = name
	}
	deep.User(parent, "deep", 1, 5).User("root", "top", 1, 5)

	for name, tc := range map[string]struct {
		assocs   []ShareAssoc
		usage    Usage
		fairTree bool
		want     map[string]fig // by AssocKey; checked where given
		rows     int
	}{
		"nothing": {
			rows: 1, want: map[string]fig{"root/": {"", 0, 1, 0}}, fairTree: true,
		},
		"single user classic": {
			assocs: shareTree().User("root", "u", 1, 5).assocs, usage: Usage{"root/u": 5},
			rows: 2, want: map[string]fig{"root/u": {"root", 1, 1, 0.5}},
		},
		"single user fair tree": {
			assocs: shareTree().User("root", "u", 1, 5).assocs, usage: Usage{"root/u": 5}, fairTree: true,
			rows: 2, want: map[string]fig{"root/u": {"root", 1, 1, 1}},
		},
		"account without users": {
			assocs: shareTree().Account("empty", "root", 5).User("root", "u", 1, 0).assocs, fairTree: true,
			rows: 3, want: map[string]fig{"empty/": {"root", 5.0 / 6, 0, 0}, "root/u": {"root", 1.0 / 6, 0, 1}},
		},
		"zero shares classic": {
			assocs: shareTree().Account("A", "root", 0).User("A", "u", 0, 1).assocs, usage: Usage{"A/u": 1},
			rows: 3, want: map[string]fig{"A/u": {"A", 0, 1, 0}},
		},
		"zero shares fair tree": {
			assocs: shareTree().Account("A", "root", 0).User("A", "u", 0, 1).User("root", "v", 0, 0).assocs, usage: Usage{"A/u": 1}, fairTree: true,
			rows: 4, want: map[string]fig{"A/u": {"A", 0, 1, 1}, "root/v": {"root", 0, 0, 1}},
		},
		"deep classic": {
			assocs: deep.assocs, usage: deep.usage, rows: 203,
			want: map[string]fig{"root/top": {"root", 1.0 / 3, 0.5, math.Exp2(-1.5)}},
		},
		"deep fair tree": {
			assocs: deep.assocs, usage: deep.usage, fairTree: true, rows: 203,
			want: map[string]fig{"d199/deep": {"d199", 1, 1, 1}, "root/top": {"root", 1.0 / 3, 0.5, 0.5}},
		},
		// Classic takes a Fairshare=parent user's figures from its
		// parent; root's effective usage is 1, so even without usage such
		// a user under root gets 2^-1, as slurmctld gives it.
		"parent shares under root classic": {
			assocs: shareTree().User("root", "p", SharesParent, 0).User("root", "u", 1, 0).assocs,
			rows:   3, want: map[string]fig{"root/p": {"root", 1, 0, 0.5}, "root/u": {"root", 1, 0, 1}},
		},
		// Missing parents, loops and repeats: everything still hangs
		// from root, once.
		"broken tree": {
			assocs: []ShareAssoc{
				{Account: "A", Parent: "B", Shares: 1}, {Account: "B", Parent: "A", Shares: 1},
				{Account: "C", Parent: "nowhere", Shares: 1}, {Account: "C", Parent: "A", Shares: 9},
				{Account: "S", Parent: "S", Shares: 1},
				{Account: "gone", User: "u", Shares: 1}, {Account: "A", User: "a", Shares: 1},
				{Account: "A", User: "a", Shares: 7},
			},
			usage: Usage{"gone/u": math.NaN(), "A/a": math.Inf(1)}, fairTree: true, rows: 7,
			want: map[string]fig{
				"root/":  {"", 0, 1, 0},
				"B/":     {"root", 0.25, 0, 0},
				"A/":     {"B", 1, 0, 0},
				"C/":     {"root", 0.25, 0, 0},
				"S/":     {"root", 0.25, 0, 0},
				"gone/u": {"root", 0.25, 0, 1},
				"A/a":    {"A", 1, 0, 1},
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			rows := TreeShares(tc.assocs, tc.usage, tc.fairTree)
			checkRows(t, rows, tc.fairTree)
			if len(rows) != tc.rows {
				t.Errorf("%d rows, want %d", len(rows), tc.rows)
			}
			got := map[string]fig{}
			for _, r := range rows {
				if k := AssocKey(r.Account, r.User); hasKey(tc.want, k) {
					got[k] = fig{r.Parent, r.NormShares, r.EffectvUsage, r.FairShare}
				}
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}

// checkRows: every figure finite (LevelFS may be +Inf), factors in [0,1],
// and in (0,1] for Fair Tree's users; accounts have none.
func checkRows(t *testing.T, rows []ShareRow, fairTree bool) {
	t.Helper()
	for _, r := range rows {
		for _, v := range []float64{r.NormShares, r.RawUsage, r.NormUsage, r.EffectvUsage, r.FairShare} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("not finite: %+v", r)
			}
		}
		if math.IsNaN(r.LevelFS) || math.IsInf(r.LevelFS, -1) || r.LevelFS < 0 {
			t.Fatalf("LevelFS: %+v", r)
		}
		if r.FairShare < 0 || r.FairShare > 1 || (r.User == "" && r.FairShare != 0) || (fairTree && r.User != "" && r.FairShare <= 0) {
			t.Fatalf("FairShare: %+v", r)
		}
		if r.NormShares < 0 || r.NormShares > 1 || r.NormUsage < 0 || r.NormUsage > 1 || r.RawUsage < 0 || r.EffectvUsage < 0 {
			t.Fatalf("out of range: %+v", r)
		}
	}
	if len(rows) == 0 || rows[0].Parent != "" || rows[0].User != "" {
		t.Fatalf("root is not first: %+v", rows)
	}
}

// randomShareTree makes a well-formed tree of up to 30 associations with
// shares 1..100 (or Fairshare=parent, when parentShares) and usage that is
// often 0.
func randomShareTree(r *rand.Rand, parentShares bool) ([]ShareAssoc, Usage) {
	tree := shareTree()
	accounts := []string{"root"}
	for i := range r.IntN(30) {
		shares := uint32(1 + r.IntN(100))
		if parentShares && r.IntN(5) == 0 {
			shares = SharesParent
		}
		at := accounts[r.IntN(len(accounts))]
		if r.IntN(3) == 0 {
			name := fmt.Sprintf("a%d", i)
			tree.Account(name, at, shares)
			accounts = append(accounts, name)
			continue
		}
		usage := 0.0
		if r.IntN(3) != 0 {
			usage = math.Floor(r.Float64() * 1e6)
		}
		tree.User(at, fmt.Sprintf("u%d", i), shares, usage)
	}
	return tree.assocs, tree.usage
}

func TestTreeSharesProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		assocs, usage := randomShareTree(r, i%2 == 1)
		for _, fairTree := range []bool{false, true} {
			rows := TreeShares(assocs, usage, fairTree)
			checkRows(t, rows, fairTree)
			if len(rows) != len(assocs) {
				t.Fatalf("%d rows of %d associations", len(rows), len(assocs))
			}
			if !fairTree && i%2 == 0 {
				for _, row := range TreeShares(assocs, nil, false) {
					if row.User != "" && row.FairShare != 1 {
						t.Fatalf("no usage, classic: %+v", row)
					}
				}
			}
			if fairTree && i%2 == 0 {
				checkFairTreeOrder(t, rows)
			}
		}
	}
}

// checkFairTreeOrder: for users u and v under a common ancestor, where
// u's ancestor (or u) just below it has a higher LevelFS than v's, u's
// factor is not below v's. Not always above: fair_tree.c lets an account
// tied with a sibling before it that ranked no user (an empty account)
// hand its best user the last rank given, whoever had it (see
// TestTreeSharesFairTreeTies).
func checkFairTreeOrder(t *testing.T, rows []ShareRow) {
	t.Helper()
	byKey := map[string]ShareRow{}
	for _, r := range rows {
		byKey[AssocKey(r.Account, r.User)] = r
	}
	// path lists a row's ancestors from just below root down to itself.
	path := func(r ShareRow) []ShareRow {
		var p []ShareRow
		for r.Parent != "" {
			p = append([]ShareRow{r}, p...)
			r = byKey[AssocKey(r.Parent, "")]
		}
		return p
	}
	for _, u := range rows {
		for _, v := range rows {
			if u.User == "" || v.User == "" || u == v {
				continue
			}
			pu, pv := path(u), path(v)
			i := 0
			for i < len(pu) && i < len(pv) && pu[i] == pv[i] {
				i++
			}
			if pu[i].LevelFS > pv[i].LevelFS && u.FairShare < v.FairShare {
				t.Fatalf("%s/%s (%v, below %s LevelFS %v) not above %s/%s (%v, below %s LevelFS %v)",
					u.Account, u.User, u.FairShare, pu[i].Account, pu[i].LevelFS,
					v.Account, v.User, v.FairShare, pv[i].Account, pv[i].LevelFS)
			}
		}
	}
}

func FuzzTreeShares(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x05\x00\x01\x01\x10\x01\x02\x00\x40\x11\x00\x01\x02\x20"))
	f.Add([]byte("\x08\x00\x02\x01\xff\x00\x01\x00\xff\x01\x01\x03\x05\xfe\x01\x02\x04\x00\xff\x00\x03\x01\x09\xfd"))
	f.Add([]byte("\x1e\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\x01\x01\x01\x01\x01\x01\x02\x02\x02\x02\x02\x02\xfc\xfb"))
	f.Fuzz(func(t *testing.T, data []byte) {
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		accounts := []string{"root", "a0", "a1", "a2", "a3", "a4", "", "nowhere"}
		shares := func(b byte) uint32 {
			switch b {
			case 0xff:
				return SharesParent
			case 0xfe:
				return math.MaxUint32
			}
			return uint32(b)
		}
		assocs := []ShareAssoc{{Account: "root"}}
		if next()%4 == 0 {
			assocs = nil // no root: one is made
		}
		usage := Usage{}
		for range int(next()) % 31 {
			kind, at, sh, u := next(), next(), next(), next()
			if kind%3 == 0 {
				assocs = append(assocs, ShareAssoc{Account: accounts[kind/3%6], Parent: accounts[at%8], Shares: shares(sh)})
				continue
			}
			a := ShareAssoc{Account: accounts[at%8], User: fmt.Sprintf("u%d", kind%5), Shares: shares(sh)}
			a.Parent = a.Account
			assocs = append(assocs, a)
			v := float64(u) * float64(u) * 1e3
			switch u {
			case 0xff:
				v = math.NaN()
			case 0xfe:
				v = math.Inf(1)
			case 0xfd:
				v = math.MaxFloat64
			case 0xfc:
				v = -1
			case 0xfb:
				v = math.SmallestNonzeroFloat64
			}
			usage[AssocKey(a.Account, a.User)] = v
		}
		for _, fairTree := range []bool{false, true} {
			rows := TreeShares(assocs, usage, fairTree)
			checkRows(t, rows, fairTree)
			// Every association given appears once.
			seen := map[string]int{}
			for _, r := range rows {
				seen[AssocKey(r.Account, r.User)]++
			}
			for _, a := range assocs {
				if n := seen[AssocKey(a.Account, a.User)]; n != 1 {
					t.Fatalf("%+v appears %d times in %+v", a, n, rows)
				}
			}
		}
	})
}
