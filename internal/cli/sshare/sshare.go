// Package sshare is the drop-in `sshare` command: the fair-share tree
// from GET /shares, laid out as Slurm's sshare lays it out. Until
// accounting brings accounts, the tree is the root account and one
// association per user under it.
package sshare

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/getopt"
	"github.com/droverhq/drover/internal/cli/readmodel"
)

var longOptions = []string{"accounts", "all", "noheader", "long", "partition", "parsable", "parsable2",
	"users", "Users", "verbose", "version", "help", "usage", "cluster", "clusters", "format", "json", "yaml"}

type options struct {
	all, noHeader, long, usersOnly bool
	parsable, parsable2            bool
	users, accounts                []string
	format                         string
	json                           bool
	// argv is the command line, for the JSON meta block.
	argv []string
}

// column is one column of the report.
type column struct {
	title string
	width int
	left  bool
	cell  func(r *row) string
}

// field is a column -o can name: its default width (negative: left
// aligned), as sshare's print fields have them.
type field struct {
	name  string
	width int
	cell  func(r *row) string
}

// row is one line: an account (User empty) or a user's association.
type row struct {
	depth                   int
	id                      int32
	account, user, cluster  string
	shares                  string
	norm, usage, normUsage  float64
	effective, fairshare    float64
	level                   float64
	isUser, hasFS, hasShare bool
	// hasLevel: a LevelFS to show (every association but root).
	hasLevel bool
	// tresRaw, tresRun and tresLimit are the TRES columns: usage, the
	// minutes running jobs have left, and group limits, "name=value,...".
	tresRaw, tresRun, tresLimit string
}

// Run is the sshare command.
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	prog := env.Prog
	if prog == "" {
		prog = "sshare"
	}
	o, code, done := parse(prog, env, args)
	if done {
		return code
	}
	me := env.User.Name
	if o.json {
		return printJSON(ctx, env, prog, &o, me)
	}
	ans, err := readmodel.GetShares(ctx, env.Client)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, readmodel.ClientError(err))
		return 1
	}
	if ans.Failed() {
		fmt.Fprintf(env.Stderr, "%s: error: Problem with shares request\n", prog)
		return 1
	}
	rows := rowsOf(ans.Records)
	cols := columns(o.long)
	if o.format != "" {
		if cols, err = formatColumns(o.format); err != nil {
			fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
			return 1
		}
	}
	w := env.Stdout
	if !o.noHeader {
		printRow(w, cols, &o, nil)
	}
	for i := range rows {
		rw := &rows[i]
		if !o.keeps(rw.isUser, rw.user, rw.account, me) {
			continue
		}
		printRow(w, cols, &o, rw)
	}
	return 0
}

// keeps reports whether a row is shown: users as -u and -a decide, else
// the caller's own (root's too: sshare asks for the caller's user when
// neither is given), accounts unless -U, either within -A.
func (o *options) keeps(isUser bool, user, account, me string) bool {
	if isUser {
		switch {
		case len(o.users) > 0:
			if !slices.Contains(o.users, user) {
				return false
			}
		case !o.all && user != me:
			return false
		}
	} else if o.usersOnly {
		return false
	}
	return len(o.accounts) == 0 || slices.Contains(o.accounts, account)
}

func parse(prog string, env *clienv.Env, args []string) (options, int, bool) {
	var o options
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var accounts, users, clusters, format, partition, jsonArg, yamlArg string
	var help, usage, version bool
	var verbose int
	fs.StringVarP(&accounts, "accounts", "A", "", "")
	fs.BoolVarP(&o.all, "all", "a", false, "")
	fs.BoolVarP(&o.noHeader, "noheader", "n", false, "")
	fs.BoolVarP(&o.long, "long", "l", false, "")
	fs.StringVarP(&clusters, "cluster", "M", "", "")
	fs.StringVar(&clusters, "clusters", "", "")
	fs.StringVarP(&format, "format", "o", "", "")
	fs.StringVar(&partition, "partition", "", "")
	fs.BoolVarP(&o.parsable, "parsable", "p", false, "")
	fs.BoolVarP(&o.parsable2, "parsable2", "P", false, "")
	fs.StringVarP(&users, "users", "u", "", "")
	fs.BoolVarP(&o.usersOnly, "Users", "U", false, "")
	fs.CountVarP(&verbose, "verbose", "v", "")
	fs.BoolVarP(&version, "version", "V", false, "")
	fs.BoolVar(&help, "help", false, "")
	fs.BoolVar(&usage, "usage", false, "")
	fs.StringVar(&jsonArg, "json", "", "")
	fs.Lookup("json").NoOptDefVal = " "
	fs.StringVar(&yamlArg, "yaml", "", "")
	fs.Lookup("yaml").NoOptDefVal = " "
	argv, err := getopt.ExpandLong(args, longOptions, map[string]string{"clusters": "cluster"})
	if err == nil {
		err = fs.Parse(argv)
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, getopt.Message(prog, err))
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", prog)
		return o, 1, true
	}
	switch {
	case help, usage:
		fmt.Fprintf(env.Stdout, "Usage: %s [-A accounts] [-a] [-l] [-n] [-p|-P] [-u users] [-U] [-v] [-V]\n", prog)
		return o, 0, true
	case version:
		fmt.Fprintln(env.Stdout, "slurm "+clienv.SlurmVersion)
		return o, 0, true
	case yamlArg != "":
		fmt.Fprintf(env.Stderr, "%s: error: YAML output is not supported\n", prog)
		return o, 1, true
	case jsonArg != "" && jsonArg != " " && jsonArg != "v0.0.44" && jsonArg != "data_parser/v0.0.44":
		fmt.Fprintf(env.Stderr, "%s: error: JSON output is only available with data parser v0.0.44, not %s\n", prog, jsonArg)
		return o, 1, true
	}
	o.format, o.json, o.argv = format, jsonArg != "", args
	o.users, o.accounts = getopt.SplitList(users), getopt.SplitList(accounts)
	return o, 0, false
}

// rowsOf orders the tree depth first from root, accounts before users.
// Each account's children are listed once: an answer whose parents make
// a loop prints the loop's accounts once instead of recursing forever.
func rowsOf(shares []readmodel.Share) []row {
	var out []row
	walked := map[string]bool{}
	var walk func(parent string, depth int)
	walk = func(parent string, depth int) {
		if walked[parent] {
			return
		}
		walked[parent] = true
		for i := range shares {
			s := &shares[i]
			if s.Parent != parent || (parent == "" && s.Name != "root") {
				continue
			}
			r := row{depth: depth, id: s.ID, cluster: s.Cluster, account: s.Name, norm: s.NormShares, usage: float64(s.Usage),
				normUsage: s.NormUsage, effective: s.EffectiveUsage, isUser: s.User}
			r.tresRaw, r.tresRun, r.tresLimit = tresColumns(s)
			// Root's shares are not shown, nor unset or infinite ones.
			if s.RawShares != readmodel.NoVal && s.RawShares != readmodel.Infinite && parent != "" {
				r.shares, r.hasShare = strconv.FormatUint(uint64(s.RawShares), 10), true
			}
			if s.User {
				r.account, r.user = parent, s.Name
				r.fairshare, r.hasFS = s.FairShare, true
			}
			if parent != "" {
				// LevelFS: S/U among its siblings; an answer without it
				// (an older controller) gives S/U over all usage.
				r.hasLevel = true
				if s.LevelSet {
					r.level = s.Level
				} else {
					r.level = math.Inf(1)
					if r.normUsage > 0 {
						r.level = r.norm / r.normUsage
					}
				}
			}
			if parent == "" {
				r.norm = 0
			}
			out = append(out, r)
			if !s.User {
				walk(s.Name, depth+1)
			}
		}
	}
	walk("", 0)
	return out
}

// tresColumns writes an association's TRES lists as sshare does: usage
// and running minutes for every TRES, limits only where set.
func tresColumns(s *readmodel.Share) (raw, run, limit string) {
	var r, m, l []string
	for _, u := range s.TRESUsage {
		r = append(r, u.Name+"="+strconv.FormatInt(int64(u.Value), 10))
	}
	for _, t := range s.TRESRunSecs {
		m = append(m, t.Name+"="+strconv.FormatInt(t.Count/60, 10))
	}
	for _, g := range s.TRESGroupMins {
		if g.Limit != readmodel.NoVal64 && g.Limit != readmodel.Infinite64 {
			l = append(l, g.Name+"="+strconv.FormatUint(g.Limit, 10))
		}
	}
	return strings.Join(r, ","), strings.Join(m, ","), strings.Join(l, ",")
}

// fields are the columns -o can name, in the order sshare matches a
// prefix against them.
var fields = func() []field {
	f6 := func(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }
	blank := func(*row) string { return "" }
	return []field{
		{"Account", -20, func(r *row) string { return strings.Repeat(" ", r.depth) + r.account }},
		{"Cluster", 10, func(r *row) string { return r.cluster }},
		{"EffectvUsage", 13, func(r *row) string { return f6(r.effective) }},
		{"FairShare", 10, func(r *row) string {
			if !r.hasFS {
				return ""
			}
			return f6(r.fairshare)
		}},
		{"GrpTRESMins", 30, func(r *row) string { return r.tresLimit }},
		{"GrpTRESRaw", 30, func(r *row) string { return r.tresRaw }},
		{"ID", 6, func(r *row) string { return strconv.Itoa(int(r.id)) }},
		{"LevelFS", 10, func(r *row) string {
			if !r.hasLevel {
				return ""
			}
			if math.IsInf(r.level, 1) {
				return "inf"
			}
			return f6(r.level)
		}},
		{"NormShares", 11, func(r *row) string { return f6(r.norm) }},
		{"NormUsage", 11, func(r *row) string {
			if r.depth == 0 {
				return ""
			}
			return f6(r.normUsage)
		}},
		{"Partition", 12, blank},
		{"RawShares", 10, func(r *row) string { return r.shares }},
		{"RawUsage", 11, func(r *row) string { return strconv.FormatInt(int64(r.usage), 10) }},
		{"TRESRunMins", 30, func(r *row) string { return r.tresRun }},
		{"User", 10, func(r *row) string { return r.user }},
	}
}()

// fieldNamed finds a field by a case-blind prefix of its name, the first
// in fields' order winning, as sshare does.
func fieldNamed(name string) (field, bool) {
	if name == "" {
		return field{}, false
	}
	for _, f := range fields {
		if len(name) <= len(f.name) && strings.EqualFold(f.name[:len(name)], name) {
			return f, true
		}
	}
	return field{}, false
}

func columnOf(f field, width int) column {
	return column{title: f.name, width: max(width, -width), left: width < 0, cell: f.cell}
}

func columns(long bool) []column {
	names := []string{"Account", "User", "RawShares", "NormShares", "RawUsage", "EffectvUsage", "FairShare"}
	if long {
		names = []string{"Account", "User", "RawShares", "NormShares", "RawUsage", "NormUsage", "EffectvUsage", "FairShare", "LevelFS", "GrpTRESMins", "TRESRunMins"}
	}
	var cols []column
	for _, n := range names {
		f, _ := fieldNamed(n)
		cols = append(cols, columnOf(f, f.width))
	}
	return cols
}

// formatColumns reads -o: fields by name or prefix, each with an
// optional %width (negative: left aligned) that replaces its default.
func formatColumns(format string) ([]column, error) {
	var cols []column
	for _, spec := range strings.Split(format, ",") {
		name, width, hasWidth := strings.Cut(spec, "%")
		f, ok := fieldNamed(name)
		if !ok {
			return nil, fmt.Errorf("Invalid field requested: \"%s\"", strings.ToLower(name))
		}
		w := f.width
		if hasWidth {
			// atoi: anything that is not a number keeps the default (and so
			// does a width past any screen).
			if n, err := strconv.Atoi(width); err == nil && n != 0 && n >= -1024 && n <= 1024 {
				w = n
			}
		}
		cols = append(cols, columnOf(f, w))
	}
	return cols, nil
}

// printRow prints a row (nil: the header and its rule) as sshare does:
// fixed widths and a space after each column, or '|' between them with
// -P ('|' after each with -p).
func printRow(w io.Writer, cols []column, o *options, r *row) {
	var b strings.Builder
	cells := make([]string, len(cols))
	for i, c := range cols {
		if r == nil {
			cells[i] = c.title
		} else {
			cells[i] = c.cell(r)
		}
	}
	if o.parsable || o.parsable2 {
		b.WriteString(strings.Join(cells, "|"))
		if o.parsable {
			b.WriteString("|")
		}
		fmt.Fprintln(w, b.String())
		return
	}
	for i, c := range cols {
		s := cells[i]
		switch {
		case len(s) <= c.width:
		case r == nil:
			// Titles are cut; values end in '+' to show they were.
			s = s[:c.width]
		default:
			s = s[:c.width-1] + "+"
		}
		pad := strings.Repeat(" ", c.width-len(s))
		if c.left {
			b.WriteString(s + pad + " ")
		} else {
			b.WriteString(pad + s + " ")
		}
	}
	fmt.Fprintln(w, b.String())
	if r == nil {
		b.Reset()
		for _, c := range cols {
			b.WriteString(strings.Repeat("-", c.width) + " ")
		}
		fmt.Fprintln(w, b.String())
	}
}
