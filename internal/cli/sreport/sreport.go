// Package sreport is the drop-in `sreport` command: reports of how a
// cluster was used over a period, from the job accounting records (GET
// /drover/v1/accounting/usage) and the association tree (GET
// /slurmdb/v0.0.44/associations). It has sreport's cluster Utilization
// and AccountUtilizationByUser, user TopUsage and job SizesByAccount
// reports, with -t units, -p/-P, -n, -M and their options (start=, end=,
// format=, TopCount=, Group, Grouping=, PrintJobCount, FlatView, Tree,
// accounts=, users=).
package sreport

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/getopt"
	"github.com/droverhq/drover/internal/reportproto"
	"github.com/droverhq/drover/internal/timefmt"
)

var longOptions = []string{"all_clusters", "cluster", "help", "noheader", "parsable", "parsable2", "quiet", "time", "tres",
	"usage", "verbose", "version", "local"}

// opts are the command-line options every report shares.
type opts struct {
	clusters  []string
	noHeader  bool
	parsable  bool
	parsable2 bool
	units     units
}

// Run is the sreport command: one report from the arguments, or, with
// none, a report per line read from standard input (sreport's
// interactive mode, up to "quit" or "exit").
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	o, rest, rc, done := parse(env, args)
	if done {
		return rc
	}
	if len(rest) > 0 {
		return o.report(ctx, env, rest)
	}
	rc = 0
	sc := bufio.NewScanner(env.Stdin)
	for sc.Scan() {
		words := strings.Fields(sc.Text())
		if len(words) == 0 {
			continue
		}
		if w := strings.ToLower(words[0]); w == "quit" || w == "exit" {
			break
		}
		if r := o.report(ctx, env, words); r != 0 {
			rc = r
		}
	}
	return rc
}

func parse(env *clienv.Env, args []string) (opts, []string, int, bool) {
	var o opts
	fs := pflag.NewFlagSet("sreport", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(false)
	var clusters, timeArg, tres string
	var all, help, usage, version, quiet, local bool
	var verbose int
	fs.BoolVarP(&all, "all_clusters", "a", false, "")
	fs.StringVarP(&clusters, "cluster", "M", "", "")
	fs.BoolVarP(&help, "help", "h", false, "")
	fs.BoolVarP(&o.noHeader, "noheader", "n", false, "")
	fs.BoolVarP(&o.parsable, "parsable", "p", false, "")
	fs.BoolVarP(&o.parsable2, "parsable2", "P", false, "")
	fs.BoolVarP(&quiet, "quiet", "Q", false, "")
	fs.StringVarP(&timeArg, "time", "t", "", "")
	fs.StringVarP(&tres, "tres", "T", "", "")
	fs.BoolVar(&usage, "usage", false, "")
	fs.CountVarP(&verbose, "verbose", "v", "")
	fs.BoolVarP(&version, "version", "V", false, "")
	fs.BoolVar(&local, "local", false, "")
	argv, err := getopt.ExpandLong(args, longOptions, nil)
	if err == nil {
		err = fs.Parse(argv)
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, getopt.Message("sreport", err))
		fmt.Fprintln(env.Stderr, `Try "sreport --help" for more information`)
		return o, nil, 1, true
	}
	switch {
	case help || usage:
		io.WriteString(env.Stdout, usageText)
		return o, nil, 0, true
	case version:
		fmt.Fprintln(env.Stdout, "slurm "+clienv.SlurmVersion)
		return o, nil, 0, true
	}
	if o.units, err = parseUnits(timeArg); err != nil {
		fmt.Fprintln(env.Stderr, err)
		return o, nil, 1, true
	}
	for _, t := range getopt.SplitList(tres) {
		if !strings.EqualFold(t, "cpu") {
			fmt.Fprintf(env.Stderr, "TRES '%s' is not reported here: only cpu is\n", t)
			return o, nil, 1, true
		}
	}
	o.clusters = getopt.SplitList(clusters)
	if all {
		o.clusters = []string{"all"}
	}
	return o, fs.Args(), 0, false
}

const usageText = `sreport [<OPTION>] [<COMMAND>]
    Valid <OPTION> values are:
     -a or --all_clusters: Use all clusters instead of current
     -M or --cluster: Use the given clusters instead of the current
     -h or --help: equivalent to "help" command
     -n or --noheader: equivalent to "noheader" command
     -p or --parsable: output will be '|' delimited with a '|' at the end
     -P or --parsable2: output will be '|' delimited without a '|' at the end
     -t <time_format>: Second, Minute, Hour, Percent, SecPer, MinPer, HourPer
     -T or --tres: comma separated list of TRES (only cpu)
     -v or --verbose: equivalent to "verbose" command
     -V or --version: equivalent to "version" command

  <keyword> may be omitted from the execute line and sreport will execute
  in interactive mode. It will process commands as entered until explicitly
  terminated.

    Valid <COMMAND> values are:
     cluster - AccountUtilizationByUser, Utilization
     job     - SizesByAccount
     user    - TopUsage

     Options for all reports: Clusters=, End=, Format=, Start=
     cluster AccountUtilizationByUser: Accounts=, Tree, Users=
     job SizesByAccount: Accounts=, FlatView, Grouping=, PrintJobCount, Users=
     user TopUsage: Accounts=, Group, TopCount=, Users=
`

// report runs one report: words are its type, its name and its options.
func (o *opts) report(ctx context.Context, env *clienv.Env, words []string) int {
	if len(words) < 2 {
		fmt.Fprintf(env.Stderr, "Invalid keyword: %s\n", strings.Join(words, " "))
		return 1
	}
	kind, name := strings.ToLower(words[0]), strings.ToLower(words[1])
	var run func(context.Context, *clienv.Env, *request) int
	switch {
	case prefixOf(kind, "cluster", 2) && prefixOf(name, "utilization", 2):
		run = o.clusterUtilization
	case prefixOf(kind, "cluster", 2) && prefixOf(name, "accountutilizationbyuser", 1):
		run = o.accountByUser
	case prefixOf(kind, "cluster", 2):
		fmt.Fprintf(env.Stderr, "Not valid report %s\nValid cluster reports are, \"AccountUtilizationByUser\" and \"Utilization\"\n", words[1])
		return 1
	case prefixOf(kind, "user", 1) && prefixOf(name, "topusage", 1):
		run = o.topUsage
	case prefixOf(kind, "user", 1):
		fmt.Fprintf(env.Stderr, "Not valid report %s\nValid user reports are, \"TopUsage\"\n", words[1])
		return 1
	case prefixOf(kind, "job", 1) && prefixOf(name, "sizesbyaccount", 1):
		run = o.jobSizes
	case prefixOf(kind, "job", 1):
		fmt.Fprintf(env.Stderr, "Not valid report %s\nValid job reports are, \"SizesByAccount\"\n", words[1])
		return 1
	default:
		fmt.Fprintf(env.Stderr, "Invalid keyword: %s\n", words[0])
		return 1
	}
	now := time.Now()
	if env.Now != nil {
		now = env.Now()
	}
	req, err := parseRequest(words[2:], now)
	if err != nil {
		fmt.Fprintln(env.Stderr, err)
		return 1
	}
	if len(req.clusters) == 0 {
		req.clusters = o.clusters
	}
	return run(ctx, env, req)
}

// prefixOf says word abbreviates full (at least min letters), as
// sreport's commands may be.
func prefixOf(word, full string, min int) bool {
	return len(word) >= min && strings.HasPrefix(full, word)
}

// request is a report's options.
type request struct {
	start, end    time.Time
	clusters      []string
	accounts      []string
	users         []string
	format        string
	topCount      int
	group         bool
	grouping      []uint32
	printJobCount bool
	flatView      bool
	tree          bool
}

// parseRequest reads a report's KEY=VALUE options and sets its period
// as sreport does: from 00:00 yesterday to 00:00 today by default, both
// ends on the hour (usage is counted by the hour), never past the
// current hour.
func parseRequest(words []string, now time.Time) (*request, error) {
	r := &request{topCount: 10, grouping: []uint32{50, 250, 500, 1000}}
	var start, end string
	for _, w := range words {
		k, v, _ := strings.Cut(w, "=")
		switch k = strings.ToLower(k); {
		case prefixOf(k, "start", 1):
			start = v
		case prefixOf(k, "end", 1):
			end = v
		case prefixOf(k, "clusters", 1):
			r.clusters = getopt.SplitList(v)
		case prefixOf(k, "accounts", 3):
			r.accounts = getopt.SplitList(v)
		case prefixOf(k, "users", 1):
			r.users = getopt.SplitList(v)
		case prefixOf(k, "format", 1):
			r.format = v
		case prefixOf(k, "topcount", 4):
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("Invalid TopCount value: %s", v)
			}
			r.topCount = n
		case k == "group":
			r.group = true
		case prefixOf(k, "grouping", 6):
			r.grouping = nil
			for _, s := range getopt.SplitList(v) {
				n, err := strconv.ParseUint(s, 10, 32)
				if err != nil || n == 0 || (len(r.grouping) > 0 && uint32(n) <= r.grouping[len(r.grouping)-1]) {
					return nil, fmt.Errorf("Invalid Grouping value: %s", v)
				}
				r.grouping = append(r.grouping, uint32(n))
			}
			if len(r.grouping) == 0 {
				return nil, fmt.Errorf("Invalid Grouping value: %s", v)
			}
		case prefixOf(k, "printjobcount", 2):
			r.printJobCount = true
		case prefixOf(k, "flatview", 2):
			r.flatView = true
		case prefixOf(k, "tree", 2):
			r.tree = true
		default:
			return nil, fmt.Errorf(" Unknown condition: %s\n Use keyword set to modify value", w)
		}
	}
	// Whole hours of the local clock (time.Truncate counts from UTC).
	hour := func(t time.Time) time.Time {
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), 0, 0, 0, t.Location())
	}
	y, m, d := now.Date()
	midnight := time.Date(y, m, d, 0, 0, 0, 0, now.Location())
	r.end = midnight
	if end != "" {
		t, err := timefmt.ParseTime(end, now)
		if err != nil {
			return nil, fmt.Errorf("Invalid time specification (pos=0): %s", end)
		}
		r.end = t
	}
	if r.end.After(now) {
		r.end = now
	}
	r.end = hour(r.end)
	r.start = r.end.AddDate(0, 0, -1)
	if end == "" {
		r.start = midnight.AddDate(0, 0, -1)
	}
	if start != "" {
		t, err := timefmt.ParseTimePast(start, now)
		if err != nil {
			return nil, fmt.Errorf("Invalid time specification (pos=0): %s", start)
		}
		r.start = hour(t)
	}
	if !r.start.Before(r.end) {
		r.start = r.end.Add(-time.Hour)
	}
	return r, nil
}

// fetch asks for the usage of the request's period and clusters.
func fetch(ctx context.Context, env *clienv.Env, r *request) (*reportproto.Usage, error) {
	v := url.Values{}
	v.Set("start", strconv.FormatInt(r.start.Unix(), 10))
	v.Set("end", strconv.FormatInt(r.end.Unix(), 10))
	if len(r.clusters) > 0 {
		v.Set("clusters", strings.Join(r.clusters, ","))
	}
	var u reportproto.Usage
	if err := env.Call(ctx, "GET", reportproto.PathUsage+"?"+v.Encode(), nil, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// period is the report's banner's time range ("... - 2026-12-05T23:59:59").
func (r *request) period() string {
	const layout = "2006-01-02T15:04:05"
	return r.start.Format(layout) + " - " + r.end.Add(-time.Second).Format(layout)
}

func (r *request) seconds() int64 { return int64(r.end.Sub(r.start).Seconds()) }
