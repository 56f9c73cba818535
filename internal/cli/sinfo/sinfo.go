// Package sinfo is the drop-in `sinfo` command: it reports partitions and
// nodes grouped the way Slurm's sinfo groups them, with its formats (-o,
// -O), filters (-p, -n, -t, -d, -r), views (-N, -l, -s, -R, -T) and --json,
// reaching the controller only through the slurmrestd v0.0.44 client of
// clienv.Env.
//
// Partition flags (Default=YES, Hidden, RootOnly...) are not part of the
// v0.0.44 partition record, so they are read from the local slurm.conf
// (SLURM_CONF or /etc/slurm/slurm.conf), as Slurm's commands read it too.
package sinfo

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/getopt"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/cli/slurmjson"
	"github.com/droverhq/drover/internal/cli/wireval"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/timefmt"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Default formats, as sinfo's parse_command_line sets them.
const (
	formatDefault     = "partition:9 ,available:.5 ,time:.10 ,nodes:.6 ,statecompact:.6 ,nodelist:0"
	formatLong        = "partition:9 ,available:.5 ,time:.10 ,size:.10 ,root:.4 ,oversubscribe:.8 ,groups:.10 ,nodes:.6 ,statelong:.11 ,reservation:.11 ,nodelist:0"
	formatSummarize   = "partition:9 ,available:.5 ,time:.10 ,nodeaiot:.16 ,nodelist:0"
	formatNode        = "nodelist:0 ,nodes:.6 ,partition:.9 ,statecompact:6"
	formatNodeLong    = "nodelist:0 ,nodes:.6 ,partition:.9 ,statelong:.11 ,cpus:4 ,socketcorethread:.8 ,memory:.6 ,disk:.8 ,weight:.6 ,features:.8 ,reason:20"
	formatReasons     = "reason:20 ,user:9 ,timestamp:19 ,nodelist:0"
	formatReasonsLong = "reason:20 ,userlong:12 ,timestamp:19 ,statecompact:6 ,nodelist:0"
)

// minFieldSize is the smallest width of the partition and node list
// columns whose width follows the data (MIN_PART_FIELD_SIZE).
const minFieldSize = 9

// options are sinfo's parsed command line.
type options struct {
	all, dead, exact, future, noHeader, long   bool
	nodeFlag, responding, listReasons, summary bool
	reservation, json                          bool
	// yaml writes the --json document as YAML (--yaml).
	yaml                 bool
	iterate              int
	nodes                string
	nodeNames            map[string]bool
	partitions           []string
	sort                 string
	states               []stateFilter
	statesAnd            bool
	fmt                  format
	partField, nodeField bool
	command              []string
}

// longOptions lists sinfo's long options for getopt-style abbreviation.
var longOptions = []string{
	"all", "dead", "exact", "federation", "future", "help", "helpformat",
	"helpFormat", "helpstate", "hide", "iterate", "local", "long", "cluster",
	"clusters", "nodes", "noconvert", "noheader", "Node", "format", "Format",
	"partition", "responding", "list-reasons", "summarize", "sort", "states",
	"reservation", "usage", "verbose", "version", "json", "yaml",
}

// aliases are long options that are one option under two names.
var aliases = map[string]string{"clusters": "cluster"}

// Run is the sinfo command.
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	c := &cmd{env: env, prog: env.Prog}
	if c.prog == "" {
		c.prog = "sinfo"
	}
	return c.main(ctx, args)
}

type cmd struct {
	env  *clienv.Env
	prog string
	conf *slurmconf.Config
}

func (c *cmd) getenv(k string) string {
	if c.env.Getenv == nil {
		return ""
	}
	return c.env.Getenv(k)
}

func (c *cmd) now() time.Time {
	if c.env.Now != nil {
		return c.env.Now()
	}
	return time.Now()
}

func (c *cmd) errorf(format string, args ...any) {
	fmt.Fprintf(c.env.Stderr, "%s: error: %s\n", c.prog, fmt.Sprintf(format, args...))
}

func (c *cmd) main(ctx context.Context, args []string) int {
	opts, code, done := c.parse(args)
	if done {
		return code
	}
	c.conf, _ = slurmconf.LoadShared(c.env.SlurmConfPath())
	for {
		if !opts.noHeader && !opts.json && (opts.iterate > 0 || opts.long) {
			// print_date: ctime(3) of the command's clock.
			fmt.Fprintln(c.env.Stdout, c.now().Format("Mon Jan _2 15:04:05 2006"))
		}
		if !c.report(ctx, opts) {
			code = 1
		}
		if opts.iterate <= 0 {
			return code
		}
		fmt.Fprintln(c.env.Stdout)
		select {
		case <-ctx.Done():
			return code
		case <-time.After(time.Duration(opts.iterate) * time.Second):
		}
	}
}

// parse reads the command line. done is set when sinfo must stop with
// code (help, version, errors).
func (c *cmd) parse(args []string) (opts options, code int, done bool) {
	fs := pflag.NewFlagSet(c.prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		partition, format, longFormat, states, sortSpec, nodes string
		clusters, jsonArg, yamlArg                             string
		help, usage, helpFormat, helpFormat2, helpState        bool
		hide, local, federation, noConvert, version            bool
		verbose                                                int
	)
	fs.BoolVarP(&opts.all, "all", "a", false, "")
	fs.BoolVarP(&opts.dead, "dead", "d", false, "")
	fs.BoolVarP(&opts.exact, "exact", "e", false, "")
	fs.BoolVar(&federation, "federation", false, "")
	fs.BoolVarP(&opts.future, "future", "F", false, "")
	fs.BoolVar(&help, "help", false, "")
	fs.BoolVar(&helpFormat, "helpformat", false, "")
	fs.BoolVar(&helpFormat2, "helpFormat", false, "")
	fs.BoolVar(&helpState, "helpstate", false, "")
	fs.BoolVar(&hide, "hide", false, "")
	iterate := fs.StringP("iterate", "i", "", "")
	fs.BoolVar(&local, "local", false, "")
	fs.BoolVarP(&opts.long, "long", "l", false, "")
	fs.StringVarP(&clusters, "cluster", "M", "", "")
	fs.StringVar(&clusters, "clusters", "", "")
	fs.StringVarP(&nodes, "nodes", "n", "", "")
	fs.BoolVar(&noConvert, "noconvert", false, "")
	fs.BoolVarP(&opts.noHeader, "noheader", "h", false, "")
	fs.BoolVarP(&opts.nodeFlag, "Node", "N", false, "")
	fs.StringVarP(&format, "format", "o", "", "")
	fs.StringVarP(&longFormat, "Format", "O", "", "")
	fs.StringVarP(&partition, "partition", "p", "", "")
	fs.BoolVarP(&opts.responding, "responding", "r", false, "")
	fs.BoolVarP(&opts.listReasons, "list-reasons", "R", false, "")
	fs.BoolVarP(&opts.summary, "summarize", "s", false, "")
	fs.StringVarP(&sortSpec, "sort", "S", "", "")
	fs.StringVarP(&states, "states", "t", "", "")
	fs.BoolVarP(&opts.reservation, "reservation", "T", false, "")
	fs.BoolVar(&usage, "usage", false, "")
	fs.CountVarP(&verbose, "verbose", "v", "")
	fs.BoolVarP(&version, "version", "V", false, "")
	fs.StringVar(&jsonArg, "json", "", "")
	fs.Lookup("json").NoOptDefVal = " "
	fs.StringVar(&yamlArg, "yaml", "", "")
	fs.Lookup("yaml").NoOptDefVal = " "

	argv, err := getopt.ExpandLong(args, longOptions, aliases)
	if err == nil {
		err = fs.Parse(argv)
	}
	if err != nil {
		fmt.Fprintln(c.env.Stderr, getopt.Message(c.prog, err))
		fmt.Fprintf(c.env.Stderr, "Try \"%s --help\" for more information\n", c.prog)
		return opts, 1, true
	}
	switch {
	case version:
		fmt.Fprintf(c.env.Stdout, "slurm %s\n", clienv.SlurmVersion)
		return opts, 0, true
	case help:
		c.help()
		return opts, 0, true
	case usage:
		fmt.Fprintf(c.env.Stdout, "Usage: %s [OPTIONS]\n", c.prog)
		return opts, 0, true
	case helpFormat:
		c.helpFormat()
		return opts, 0, true
	case helpFormat2:
		c.helpFormat2()
		return opts, 0, true
	case helpState:
		fmt.Fprintln(c.env.Stdout, strings.ReplaceAll(validStates, ",", "\n"))
		return opts, 0, true
	}
	opts.json = jsonArg != "" || yamlArg != ""
	opts.yaml = jsonArg == "" && yamlArg != ""
	opts.command = []string{c.prog}
	for _, a := range args {
		if a != "--json" && !strings.HasPrefix(a, "--json=") && a != "--yaml" && !strings.HasPrefix(a, "--yaml=") {
			opts.command = append(opts.command, a)
		}
	}

	envAll := c.getenv("SINFO_ALL") != ""
	envPart := c.getenv("SINFO_PARTITION")
	if envAll && envPart != "" {
		c.errorf("Conflicting options, SINFO_ALL and SINFO_PARTITION, specified. Please choose one or the other.")
		return opts, 1, true
	}
	if envAll {
		opts.all = true
	}
	if envPart != "" {
		opts.partitions = splitList(envPart)
		opts.all = true
	}
	if c.getenv("SINFO_FUTURE") != "" {
		opts.future = true
	}
	if s := c.getenv("SINFO_SORT"); s != "" {
		opts.sort = s
	}
	if fs.Changed("all") && fs.Changed("partition") {
		c.errorf("Conflicting options, -a and -p, specified. Please choose one or the other.")
		return opts, 1, true
	}
	if fs.Changed("partition") {
		opts.partitions = splitList(partition)
		opts.all = true
	}
	if hide {
		opts.all = false
	}
	if fs.Changed("iterate") {
		n, _ := strconv.Atoi(strings.TrimSpace(*iterate))
		if n <= 0 {
			c.errorf("Error: invalid entry for --iterate=%s", *iterate)
			return opts, 1, true
		}
		opts.iterate = n
	}
	if fs.Changed("nodes") {
		names, err := hostlist.Expand(nodes)
		if err != nil || len(names) == 0 {
			c.errorf("'%s' invalid entry for --nodes", nodes)
			return opts, 1, true
		}
		opts.nodeNames = map[string]bool{}
		for _, n := range names {
			opts.nodeNames[n] = true
		}
	}
	if fs.Changed("sort") {
		opts.sort = sortSpec
	}
	if fs.Changed("states") {
		opts.states, opts.statesAnd, err = parseStates(states)
		if err != nil {
			c.errorf("%v", err)
			c.errorf("valid states: %s", validStates)
			return opts, 1, true
		}
	}
	formatGiven := fs.Changed("format") || fs.Changed("Format")
	if opts.long && formatGiven {
		fmt.Fprintf(c.env.Stderr, "%s: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.\n", c.prog)
		return opts, 1, true
	}

	var errs []string
	isLong := true
	spec := ""
	switch {
	case fs.Changed("Format"):
		spec = longFormat
	case fs.Changed("format"):
		spec, isLong = format, false
	case opts.summary:
		spec, opts.partField = formatSummarize, true
	case opts.nodeFlag:
		opts.nodeField, opts.partField = true, true
		spec = formatNode
		if opts.long {
			spec = formatNodeLong
		}
	case opts.listReasons:
		spec = formatReasons
		if opts.long {
			spec = formatReasonsLong
		}
	case c.getenv("SINFO_FORMAT") != "":
		spec, isLong = c.getenv("SINFO_FORMAT"), false
	default:
		spec, opts.partField = formatDefault, true
		if opts.long {
			spec = formatLong
		}
	}
	if isLong {
		opts.fmt, errs = parseLong(spec)
		for _, e := range errs {
			c.errorf("%s", e)
		}
	} else {
		opts.fmt, errs = parseShort(spec)
		for _, e := range errs {
			fmt.Fprintln(c.env.Stderr, e)
		}
	}
	if opts.json {
		opts.fmt.flags |= matchGresUsed
	}
	if opts.listReasons && opts.states == nil {
		opts.states, _, _ = parseStates("down,fail,drain")
	}
	if opts.sort == "" {
		opts.sort = "#P,-t"
		if opts.nodeFlag {
			opts.sort = "N"
		}
	}
	return opts, 0, false
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (c *cmd) help() {
	fmt.Fprintf(c.env.Stdout, `Usage: %s [OPTIONS]
  -a, --all                  show all partitions (including hidden and those
                             not accessible)
  -d, --dead                 show only non-responding nodes
  -e, --exact                group nodes only on exact match of configuration
  -F, --future               Report future nodes
  -h, --noheader             no headers on output
  --hide                     do not show hidden or non-accessible partitions
  -i, --iterate=seconds      specify an iteration period
      --json                 Produce JSON output
  -l, --long                 long output - displays more information
  -M, --clusters=names       clusters to issue commands to.
  -n, --nodes=NODES          report on specific node(s)
  --noconvert                don't convert units from their original type
                             (e.g. 2048M won't be converted to 2G).
  -N, --Node                 Node-centric format
  -o, --format=format        format specification
  -O, --Format=format        long format specification
  -p, --partition=PARTITION  report on specific partition
  -r, --responding           report only responding nodes
  -R, --list-reasons         list reason nodes are down or drained
  -s, --summarize            report state summary only
  -S, --sort=fields          comma separated list of fields to sort on
  -t, --states=node_state    specify the what states of nodes to view
  -T, --reservation          show only reservation information
  -v, --verbose              verbosity level
  -V, --version              output version information and exit

Help options:
  --help                     show this help message
  --helpformat               list available format options for -o/--format
  --helpFormat               list available format options for -O/--Format
  --helpstate                list available node states for -t/--states
  --usage                    display brief usage message
`, c.prog)
}

// helpFormat lists the -o letters, eight to a line (_help_format).
func (c *cmd) helpFormat() {
	var b strings.Builder
	n := 0
	for _, f := range fields {
		if f.letter == 0 || f.hidden {
			continue
		}
		if n&8 != 0 {
			n = 0
			b.WriteString("\n")
		}
		n++
		fmt.Fprintf(&b, "%%%-5c", f.letter)
	}
	b.WriteString("\n")
	fmt.Fprint(c.env.Stdout, b.String())
}

// helpFormat2 lists the -O names, four to a line (_help_format2).
func (c *cmd) helpFormat2() {
	var b strings.Builder
	n := 0
	for _, f := range fields {
		if f.hidden {
			continue
		}
		if n&4 != 0 {
			n = 0
			b.WriteString("\n")
		}
		n++
		fmt.Fprintf(&b, "%-20s", f.name)
	}
	b.WriteString("\n")
	fmt.Fprint(c.env.Stdout, b.String())
}

// report runs one sinfo report; false when the controller failed.
func (c *cmd) report(ctx context.Context, opts options) bool {
	if opts.reservation {
		return c.reservations(ctx, opts)
	}
	if opts.json {
		return c.jsonReport(ctx, opts)
	}
	parts, err := readmodel.GetPartitions(ctx, c.env.Client, opts.all)
	if err != nil {
		err = &restError{msg: connectFailure}
	} else {
		err = answerError(parts.Errors, parts.Failed())
	}
	if err != nil {
		fmt.Fprintf(c.env.Stderr, "slurm_load_partitions: %s\n", err.Error())
		return false
	}
	// The node list streams into the model (readmodel.GetNodes): a
	// machine's worth of wire records is never held at once.
	nodes, err := readmodel.GetNodes(ctx, c.env.Client, nodeFlags(opts))
	if err != nil {
		err = &restError{msg: connectFailure}
	} else {
		err = answerError(nodes.Errors, nodes.Failed())
	}
	if err != nil {
		fmt.Fprintf(c.env.Stderr, "slurm_load_node: %s\n", err.Error())
		return false
	}
	recs := build(opts, parts.Records, nodes.Records, c.conf)
	sortRecords(recs, opts.sort)
	fmt.Fprint(c.env.Stdout, c.render(opts, recs))
	return true
}

// jsonReport is sinfo --json/--yaml, which prints the wire records
// beside the report's own.
func (c *cmd) jsonReport(ctx context.Context, opts options) bool {
	parts, partMeta, err := c.loadPartitions(ctx, opts)
	if err != nil {
		fmt.Fprintf(c.env.Stderr, "slurm_load_partitions: %s\n", err.Error())
		return false
	}
	nodes, nodeMeta, err := c.loadNodes(ctx, opts)
	if err != nil {
		fmt.Fprintf(c.env.Stderr, "slurm_load_node: %s\n", err.Error())
		return false
	}
	recs := build(opts, readmodel.FromV0044Partitions(parts), readmodel.FromV0044Nodes(nodes), c.conf)
	sortRecords(recs, opts.sort)
	{
		meta := nodeMeta
		if !meta.Set {
			meta = partMeta
		}
		m := metaFrom(meta, clienv.SlurmVersion)
		m.command = opts.command
		text := sinfoJSON(recs, m, answers{parts: parts, nodes: nodes})
		if opts.yaml {
			var err error
			if text, err = slurmjson.YAML(text); err != nil {
				c.errorf("%v", err)
				return false
			}
		}
		fmt.Fprint(c.env.Stdout, text)
		return true
	}
}

// build is sinfo's _build_sinfo_data: one record per group of like nodes
// of each partition (every node its own with -N), empty partitions kept
// when the format shows partitions.
func build(opts options, allParts []readmodel.Partition, allNodes []readmodel.Node, conf *slurmconf.Config) []*record {
	b := &builder{flags: opts.fmt.flags, nodeFlag: opts.nodeFlag, exact: opts.exact, listReason: opts.listReasons}
	var parts []*partition
	for i := range allParts {
		p := newPartition(&allParts[i], i, conf)
		if p.hidden && !opts.all {
			continue
		}
		if len(opts.partitions) > 0 && !slices.Contains(opts.partitions, p.name) {
			continue
		}
		parts = append(parts, p)
	}
	if !opts.nodeFlag && b.flags&matchPartition != 0 {
		for _, p := range parts {
			b.records = append(b.records, &record{part: p, partInx: p.inx})
		}
	}
	var nodes []*node
	filtering := opts.dead || opts.nodeNames != nil || len(opts.partitions) > 0 || opts.responding || opts.states != nil
	for i := range allNodes {
		n := newNode(&allNodes[i], i)
		if n.name == "" || (filtering && filteredOut(opts, n)) {
			continue
		}
		nodes = append(nodes, n)
	}
	for _, p := range parts {
		for _, n := range nodes {
			if p.contains(n) {
				b.insert(p, n)
			}
		}
	}
	return b.records
}

// filteredOut is sinfo's _filter_out.
func filteredOut(opts options, n *node) bool {
	if opts.nodeNames != nil && !opts.nodeNames[n.name] {
		return true
	}
	if opts.dead && !n.state.Has(flagNoRespond) {
		return true
	}
	if opts.responding && n.state.Has(flagNoRespond) {
		return true
	}
	if opts.states == nil {
		return false
	}
	match := false
	for _, f := range opts.states {
		match = stateMatches(f.state, n.state, n.allocCPUs)
		if f.not {
			match = !match
		}
		if !opts.statesAnd && match {
			break
		}
		if opts.statesAnd && !match {
			break
		}
	}
	return !match
}

// render prints the records with the header, as print_sinfo_list does.
func (c *cmd) render(opts options, recs []*record) string {
	pc := &printCtx{
		timeStr: func(t int64) string {
			return timefmt.FormatEpoch(t, c.now(), c.getenv("SLURM_TIME_FORMAT"))
		},
		preemptMode: "OFF",
		usePartW:    opts.partField,
		useNodeW:    opts.nodeField,
		partWidth:   minFieldSize,
		nodeWidth:   minFieldSize,
	}
	if c.conf != nil {
		if v, ok := c.conf.Value("PreemptMode"); ok && v != "" {
			pc.preemptMode = v
		}
	}
	for _, r := range recs {
		if opts.nodeField {
			pc.nodeWidth = max(pc.nodeWidth, len(hostlistString(r.nodes)))
		}
		if opts.partField && r.part != nil {
			w := len(r.part.name)
			if r.part.isDefault {
				w++
			}
			pc.partWidth = max(pc.partWidth, w)
		}
	}
	var b strings.Builder
	line := func(r *record) {
		for _, col := range opts.fmt.columns {
			col.text(&b, r, pc)
		}
		b.WriteString("\n")
	}
	if !opts.noHeader {
		line(nil)
	}
	for _, r := range recs {
		line(r)
	}
	return b.String()
}

// restError is a failed controller request, worded as slurm_perror prints
// Slurm's message.
type restError struct{ msg string }

func (e *restError) Error() string { return e.msg }

// connectFailure is what Slurm's commands print when the controller cannot
// be reached.
const connectFailure = "Unable to contact slurm controller (connect failure)"

func errorsOf(errs v0044.V0044OpenapiErrors) error {
	ps := make([]readmodel.Problem, len(errs))
	for i, e := range errs {
		ps[i] = readmodel.Problem{Number: e.ErrorNumber.Or(0), Error: e.Error.Or("")}
	}
	return answerError(ps, false)
}

// answerError is a read's failure in Slurm's words, as errorsOf: the
// first numbered error of the answer, else "Unspecified error" for an
// answer other than the operation's success.
func answerError(errs []readmodel.Problem, failed bool) error {
	for _, e := range errs {
		if e.Number == 0 {
			continue
		}
		msg := e.Error
		if msg == "" {
			msg = fmt.Sprintf("Unknown error %d", e.Number)
		}
		return &restError{msg: msg}
	}
	if failed {
		return &restError{msg: "Unspecified error"}
	}
	return nil
}

// nodeFlags is what a report asks of the node list: slurmctld reports
// used GRES only with SHOW_DETAIL.
func nodeFlags(opts options) readmodel.NodeFlags {
	switch {
	case opts.fmt.flags&matchGresUsed != 0:
		return readmodel.NodesDetail
	case opts.future:
		return readmodel.NodesFuture
	case opts.all:
		return readmodel.NodesAll
	}
	return readmodel.NodesDefault
}

func (c *cmd) loadPartitions(ctx context.Context, opts options) (v0044.V0044PartitionInfoMsg, v0044.OptV0044OpenapiMeta, error) {
	params := v0044.SlurmV0044GetPartitionsParams{}
	if opts.all {
		params.Flags = v0044.NewOptSlurmV0044GetPartitionsFlags(v0044.SlurmV0044GetPartitionsFlagsALL)
	}
	res, err := c.env.Client.SlurmV0044GetPartitions(ctx, params)
	if err != nil {
		return nil, v0044.OptV0044OpenapiMeta{}, &restError{msg: connectFailure}
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiPartitionResp:
		return r.Partitions, r.Meta, errorsOf(r.Errors)
	case *v0044.V0044OpenapiPartitionRespStatusCode:
		if err := errorsOf(r.Response.Errors); err != nil {
			return nil, r.Response.Meta, err
		}
		return nil, r.Response.Meta, &restError{msg: "Unspecified error"}
	}
	return nil, v0044.OptV0044OpenapiMeta{}, &restError{msg: "Unspecified error"}
}

func (c *cmd) loadNodes(ctx context.Context, opts options) (v0044.V0044Nodes, v0044.OptV0044OpenapiMeta, error) {
	params := v0044.SlurmV0044GetNodesParams{}
	switch {
	case opts.fmt.flags&matchGresUsed != 0:
		// slurmctld reports used GRES only with SHOW_DETAIL.
		params.Flags = v0044.NewOptSlurmV0044GetNodesFlags(v0044.SlurmV0044GetNodesFlagsDETAIL)
	case opts.future:
		params.Flags = v0044.NewOptSlurmV0044GetNodesFlags(v0044.SlurmV0044GetNodesFlagsFUTURE)
	case opts.all:
		params.Flags = v0044.NewOptSlurmV0044GetNodesFlags(v0044.SlurmV0044GetNodesFlagsALL)
	}
	res, err := c.env.Client.SlurmV0044GetNodes(ctx, params)
	if err != nil {
		return nil, v0044.OptV0044OpenapiMeta{}, &restError{msg: connectFailure}
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiNodesResp:
		return r.Nodes, r.Meta, errorsOf(r.Errors)
	case *v0044.V0044OpenapiNodesRespStatusCode:
		if err := errorsOf(r.Response.Errors); err != nil {
			return nil, r.Response.Meta, err
		}
		return nil, r.Response.Meta, &restError{msg: "Unspecified error"}
	}
	return nil, v0044.OptV0044OpenapiMeta{}, &restError{msg: "Unspecified error"}
}

// reservations is sinfo -T: one line per reservation.
func (c *cmd) reservations(ctx context.Context, opts options) bool {
	res, err := c.env.Client.SlurmV0044GetReservations(ctx, v0044.SlurmV0044GetReservationsParams{})
	var resvs v0044.V0044ReservationInfoMsg
	switch r := res.(type) {
	case *v0044.V0044OpenapiReservationResp:
		resvs = r.Reservations
	default:
		if err == nil {
			err = &restError{msg: "Unspecified error"}
		}
	}
	if err != nil {
		fmt.Fprintf(c.env.Stderr, "slurm_load_reservations: %s\n", connectFailure)
		return false
	}
	if len(resvs) == 0 {
		fmt.Fprintln(c.env.Stdout, "No reservations in the system")
		return true
	}
	width := 9
	for _, r := range resvs {
		width = max(width, len(r.Name.Or("")))
	}
	var b strings.Builder
	lineFmt := fmt.Sprintf("%%-%ds  %%8s  %%19s  %%19s  %%11s  %%s\n", width)
	if !opts.noHeader {
		fmt.Fprintf(&b, lineFmt, "RESV_NAME", "STATE", "START_TIME", "END_TIME", "DURATION", "NODELIST")
	}
	now := c.now()
	ts := func(t int64) string { return timefmt.FormatEpoch(t, now, c.getenv("SLURM_TIME_FORMAT")) }
	for _, r := range resvs {
		start, end := int64(wireval.U64(r.StartTime)), int64(wireval.U64(r.EndTime))
		state := "INACTIVE"
		if start <= now.Unix() && end >= now.Unix() {
			state = "ACTIVE"
		}
		fmt.Fprintf(&b, lineFmt, r.Name.Or(""), state, ts(start), ts(end),
			timefmt.FormatDurationPadded(end-start), r.NodeList.Or(""))
	}
	fmt.Fprint(c.env.Stdout, b.String())
	return true
}
