package sreport

import (
	"cmp"
	"context"
	"fmt"
	"os/user"
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/coltable"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/reportproto"
)

const rule = "--------------------------------------------------------------------------------"

// field is a column of a report's rows R.
type field[R any] struct {
	name  string
	width int
	cell  func(*R) string
}

// table prints a report: its banner (unless -n), then the columns
// format= names (or def) of every row.
func table[R any](o *opts, env *clienv.Env, banner []string, fields []field[R], def []string, format string, rows []R) int {
	lookup := func(name string) (field[R], int, bool) {
		for _, f := range fields {
			if strings.EqualFold(strings.ReplaceAll(f.name, " ", ""), strings.ReplaceAll(name, " ", "")) {
				return f, f.width, true
			}
		}
		return field[R]{}, 0, false
	}
	var cols []coltable.Spec[field[R]]
	if format == "" {
		for _, name := range def {
			f, w, _ := lookup(name)
			cols = append(cols, coltable.Spec[field[R]]{Field: f, Width: w})
		}
	} else {
		var err error
		if cols, err = coltable.ParseFormat(format, lookup); err != nil {
			fmt.Fprintf(env.Stderr, "%v\n", err)
			return 1
		}
	}
	if !o.noHeader {
		fmt.Fprintln(env.Stdout, rule)
		for _, l := range banner {
			fmt.Fprintln(env.Stdout, l)
		}
		fmt.Fprintln(env.Stdout, rule)
	}
	cc := make([]coltable.Column, len(cols))
	for i, c := range cols {
		cc[i] = coltable.Column{Name: c.Field.name, Width: c.Width}
	}
	cells := make([][]string, len(rows))
	for i := range rows {
		cells[i] = make([]string, len(cols))
		for k, c := range cols {
			cells[i][k] = c.Field.cell(&rows[i])
		}
	}
	coltable.Print(env.Stdout, cc, cells, coltable.Style{NoHeader: o.noHeader, Parsable: o.parsable, Parsable2: o.parsable2,
		Delimiter: "|", CutHeaders: true})
	return 0
}

// usageOrFail fetches the usage, or says why not.
func usageOrFail(ctx context.Context, env *clienv.Env, r *request) (*reportproto.Usage, bool) {
	u, err := fetch(ctx, env, r)
	if err != nil {
		fmt.Fprintf(env.Stderr, "sreport: error: Problem with cluster query: %v\n", err)
		return nil, false
	}
	return u, true
}

type utilRow struct {
	c reportproto.Cluster
	u units
}

func (o *opts) clusterUtilization(ctx context.Context, env *clienv.Env, r *request) int {
	usage, ok := usageOrFail(ctx, env, r)
	if !ok {
		return 1
	}
	val := func(get func(*reportproto.Cluster) float64) func(*utilRow) string {
		return func(row *utilRow) string { return row.u.format(get(&row.c), row.c.Reported) }
	}
	w := o.units.width(8)
	fields := []field[utilRow]{
		{"Cluster", 9, func(row *utilRow) string { return row.c.Name }},
		{"Allocated", w, val(func(c *reportproto.Cluster) float64 { return c.Allocated })},
		{"Down", w, val(func(c *reportproto.Cluster) float64 { return c.Down })},
		{"PLND Down", w, val(func(*reportproto.Cluster) float64 { return 0 })},
		{"Idle", w, val(func(c *reportproto.Cluster) float64 { return c.Idle })},
		{"Planned", w, val(func(c *reportproto.Cluster) float64 { return c.Planned })},
		{"Reported", w, val(func(c *reportproto.Cluster) float64 { return c.Reported })},
		{"Energy", w, func(*utilRow) string { return "0" }},
	}
	var rows []utilRow
	for _, c := range usage.Clusters {
		rows = append(rows, utilRow{c: c, u: o.units})
	}
	banner := []string{"Cluster Utilization " + r.period(), "Usage reported in " + o.units.title("CPU ")}
	return table(o, env, banner, fields, []string{"Cluster", "Allocated", "Down", "PLND Down", "Idle", "Planned", "Reported"}, r.format, rows)
}

// assocRow is a line of AccountUtilizationByUser or TopUsage.
type assocRow struct {
	cluster, account, login string
	used, total             float64
	u                       units
}

func properName(login string) string {
	if login == "" {
		return ""
	}
	if u, err := user.Lookup(login); err == nil {
		name, _, _ := strings.Cut(u.Name, ",")
		return name
	}
	return ""
}

func assocFields(w int) []field[assocRow] {
	return []field[assocRow]{
		{"Cluster", 9, func(a *assocRow) string { return a.cluster }},
		{"Account", 15, func(a *assocRow) string { return a.account }},
		{"Login", 9, func(a *assocRow) string { return a.login }},
		{"Proper Name", 15, func(a *assocRow) string { return properName(a.login) }},
		{"Used", w, func(a *assocRow) string { return a.u.format(a.used, a.total) }},
		{"Energy", w, func(*assocRow) string { return "0" }},
	}
}

// tree is a cluster's accounts: each account's parent, and the users
// under each.
type tree struct {
	parent   map[string]string
	children map[string][]string
	users    map[string][]string
}

// accountTree reads the cluster's associations, and adds what usage
// names that they lack (under root).
func accountTree(ctx context.Context, env *clienv.Env, cluster string, usage []reportproto.Assoc) *tree {
	t := &tree{parent: map[string]string{}, children: map[string][]string{}, users: map[string][]string{}}
	addAccount := func(a, parent string) {
		if _, ok := t.parent[a]; ok || a == "root" {
			return
		}
		t.parent[a] = parent
		t.children[parent] = append(t.children[parent], a)
	}
	addUser := func(a, u string) {
		if !slices.Contains(t.users[a], u) {
			t.users[a] = append(t.users[a], u)
		}
	}
	// Without the associations (no answer, or a failed one) the tree is
	// what usage names.
	if ans, err := readmodel.GetAssocs(ctx, env.Client); err == nil && !ans.Failed() {
		for _, a := range ans.Records {
			if a.Cluster != "" && a.Cluster != cluster {
				continue
			}
			if a.User == "" {
				addAccount(a.Account, cmp.Or(a.ParentAccount, "root"))
			} else {
				addUser(a.Account, a.User)
			}
		}
	}
	for _, u := range usage {
		addAccount(u.Account, "root")
		addUser(u.Account, u.User)
	}
	for _, l := range t.children {
		slices.Sort(l)
	}
	for _, l := range t.users {
		slices.Sort(l)
	}
	return t
}

// maxDepth bounds a walk up the account tree: an answer whose parents
// make a loop ends there instead of walking forever.
const maxDepth = 64

// under is true when account a is b or below it.
func (t *tree) under(a, b string) bool {
	for range maxDepth {
		if a == b {
			return true
		}
		p, ok := t.parent[a]
		if !ok {
			return false
		}
		a = p
	}
	return false
}

func (o *opts) accountByUser(ctx context.Context, env *clienv.Env, r *request) int {
	usage, ok := usageOrFail(ctx, env, r)
	if !ok {
		return 1
	}
	var rows []assocRow
	for _, c := range usage.Clusters {
		t := accountTree(ctx, env, c.Name, c.Assocs)
		used := map[[2]string]float64{}
		for _, a := range c.Assocs {
			used[[2]string{a.Account, a.User}] += a.CPUSeconds
		}
		subtree := func(acct string) float64 {
			var sum float64
			for k, v := range used {
				if t.under(k[0], acct) {
					sum += v
				}
			}
			return sum
		}
		var walk func(acct string, depth int)
		walk = func(acct string, depth int) {
			name := acct
			if r.tree {
				name = strings.Repeat(" ", depth) + acct
			}
			show := len(r.accounts) == 0 || slices.Contains(r.accounts, acct)
			if show {
				rows = append(rows, assocRow{cluster: c.Name, account: name, used: subtree(acct), total: c.Reported, u: o.units})
				for _, u := range t.users[acct] {
					if len(r.users) == 0 || slices.Contains(r.users, u) {
						rows = append(rows, assocRow{cluster: c.Name, account: name, login: u, used: used[[2]string{acct, u}], total: c.Reported, u: o.units})
					}
				}
			}
			for _, child := range t.children[acct] {
				walk(child, depth+1)
			}
		}
		walk("root", 0)
	}
	banner := []string{fmt.Sprintf("Cluster/Account/User Utilization %s (%d secs)", r.period(), r.seconds()),
		"Usage reported in " + o.units.title("CPU ")}
	fields := assocFields(o.units.width(10))
	if r.tree {
		for i := range fields {
			if fields[i].name == "Account" {
				fields[i].width = 20
			}
		}
	}
	return table(o, env, banner, fields, []string{"Cluster", "Account", "Login", "Proper Name", "Used", "Energy"}, r.format, rows)
}

func (o *opts) topUsage(ctx context.Context, env *clienv.Env, r *request) int {
	usage, ok := usageOrFail(ctx, env, r)
	if !ok {
		return 1
	}
	var rows []assocRow
	for _, c := range usage.Clusters {
		byUser := map[string][]reportproto.Assoc{}
		totals := map[string]float64{}
		for _, a := range c.Assocs {
			if (len(r.users) > 0 && !slices.Contains(r.users, a.User)) || (len(r.accounts) > 0 && !slices.Contains(r.accounts, a.Account)) {
				continue
			}
			byUser[a.User] = append(byUser[a.User], a)
			totals[a.User] += a.CPUSeconds
		}
		users := make([]string, 0, len(totals))
		for u := range totals {
			users = append(users, u)
		}
		slices.SortFunc(users, func(a, b string) int { return cmp.Or(cmp.Compare(totals[b], totals[a]), strings.Compare(a, b)) })
		users = users[:min(len(users), r.topCount)]
		for _, u := range users {
			list := byUser[u]
			slices.SortFunc(list, func(a, b reportproto.Assoc) int {
				return cmp.Or(cmp.Compare(b.CPUSeconds, a.CPUSeconds), strings.Compare(a.Account, b.Account))
			})
			if r.group {
				var names []string
				for _, a := range list {
					names = append(names, a.Account)
				}
				rows = append(rows, assocRow{cluster: c.Name, account: strings.Join(names, ","), login: u, used: totals[u], total: c.Reported, u: o.units})
				continue
			}
			for _, a := range list {
				rows = append(rows, assocRow{cluster: c.Name, account: a.Account, login: u, used: a.CPUSeconds, total: c.Reported, u: o.units})
			}
		}
	}
	banner := []string{fmt.Sprintf("Top %d Users %s (%d secs)", r.topCount, r.period(), r.seconds()),
		"Usage reported in " + o.units.title("CPU ")}
	return table(o, env, banner, assocFields(o.units.width(8)), []string{"Cluster", "Login", "Proper Name", "Account", "Used", "Energy"}, r.format, rows)
}

// sizeRow is a line of SizesByAccount: an account's jobs in each size
// bin.
type sizeRow struct {
	cluster, account string
	bins             []float64
	total, all       float64
}

func (o *opts) jobSizes(ctx context.Context, env *clienv.Env, r *request) int {
	usage, ok := usageOrFail(ctx, env, r)
	if !ok {
		return 1
	}
	nbins := len(r.grouping) + 1
	bin := func(cpus uint32) int {
		for i, g := range r.grouping {
			if cpus < g {
				return i
			}
		}
		return len(r.grouping)
	}
	var rows []sizeRow
	for _, c := range usage.Clusters {
		var assocs []reportproto.Assoc
		for _, z := range c.Sizes {
			assocs = append(assocs, reportproto.Assoc{Account: z.Account})
		}
		t := accountTree(ctx, env, c.Name, assocs)
		// The rows: the accounts asked for, else root's children (and
		// root for jobs charged to it), each with its sub-accounts'
		// jobs unless FlatView.
		names := r.accounts
		if len(names) == 0 {
			names = append([]string{"root"}, t.children["root"]...)
		}
		byName := map[string]*sizeRow{}
		var order []*sizeRow
		for _, n := range names {
			row := &sizeRow{cluster: c.Name, account: n, bins: make([]float64, nbins)}
			byName[n] = row
			order = append(order, row)
		}
		var all float64
		for _, z := range c.Sizes {
			target := z.Account
			if !r.flatView {
				a := z.Account
				for range maxDepth {
					if byName[a] != nil {
						target = a
						break
					}
					p, ok := t.parent[a]
					if !ok {
						break
					}
					a = p
				}
			}
			row := byName[target]
			if row == nil {
				if len(r.accounts) > 0 {
					continue
				}
				row = &sizeRow{cluster: c.Name, account: target, bins: make([]float64, nbins)}
				byName[target] = row
				order = append(order, row)
			}
			v := z.CPUSeconds
			if r.printJobCount {
				v = float64(z.Jobs)
			}
			row.bins[bin(z.CPUs)] += v
			row.total += v
			all += v
		}
		for _, row := range order {
			// An account row with nothing is left out; root only shows
			// when jobs were charged to it.
			if row.total == 0 && (row.account == "root" || len(r.accounts) == 0) {
				continue
			}
			row.all = all
			rows = append(rows, *row)
		}
	}
	cell := func(v, all float64) string {
		if r.printJobCount {
			return strconv.FormatInt(int64(v), 10)
		}
		return o.units.format(v, all)
	}
	fields := []field[sizeRow]{
		{"Cluster", 9, func(s *sizeRow) string { return s.cluster }},
		{"Account", 9, func(s *sizeRow) string { return s.account }},
	}
	def := []string{"Cluster", "Account"}
	for i := range nbins {
		var name string
		switch {
		case i == 0:
			name = fmt.Sprintf("0-%d CPUs", r.grouping[0]-1)
		case i == nbins-1:
			name = fmt.Sprintf(">= %d CPUs", r.grouping[i-1])
		default:
			name = fmt.Sprintf("%d-%d CPUs", r.grouping[i-1], r.grouping[i]-1)
		}
		fields = append(fields, field[sizeRow]{name, o.units.width(13), func(s *sizeRow) string { return cell(s.bins[i], s.all) }})
		def = append(def, name)
	}
	fields = append(fields, field[sizeRow]{"% of cluster", 12, func(s *sizeRow) string {
		if s.all == 0 {
			return "0.00%"
		}
		return fmt.Sprintf("%.2f%%", s.total/s.all*100)
	}})
	def = append(def, "% of cluster")
	unit := "Time reported in " + o.units.title("")
	if r.printJobCount {
		unit = "Units are in number of jobs ran"
	}
	banner := []string{fmt.Sprintf("Job Sizes %s (%d secs)", r.period(), r.seconds()), unit}
	return table(o, env, banner, fields, def, r.format, rows)
}
