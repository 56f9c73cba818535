package squeue

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/getopt"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/cstrconv"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/timefmt"
)

// jobSel is one -j/--jobs entry: a job id and, for "123_4", a task id.
type jobSel struct {
	jobID uint32
	task  uint32 // readmodel.NoVal when no task was given
}

// userSel is one -u/--user entry. Names are matched against the user name
// the controller reports: the command has no password database of its own.
type userSel struct {
	uid    uint32
	hasUID bool
	name   string
}

// options are squeue's parameters (Slurm's struct squeue_parameters).
type options struct {
	accounts    []string
	all         bool
	array       bool
	expand      bool
	format      *string
	formatLong  *string
	iterate     int
	jobFlag     bool
	jobs        []jobSel
	jobsText    string
	long        bool
	licenses    []string
	names       []string
	noConvert   bool
	nodes       []string
	noHeader    bool
	notMe       bool
	onlyState   bool
	partitions  []string
	priority    bool
	qos         []string
	reservation string
	runOver     int64
	runUnder    int64
	sort        *string
	start       bool
	stepFlag    bool
	steps       []string // -s's list: job ids or job.step ids
	states      []readmodel.State
	statesText  string
	allStates   bool
	users       []userSel
	usersText   string
	verbose     int
	json        bool
	// yaml writes the --json document as YAML (--yaml).
	yaml         bool
	formatEnvSet bool // -o, -O, -l, -s or --start given: SQUEUE_FORMAT* ignored
	// argv is the command line as given, for --json's meta block.
	argv []string
	// Raw option values, for -v's dump.
	licensesText, namesText, partitionsText string
}

// exitError ends the command with code after its message (if any) was
// printed.
type exitError struct{ code int }

func (e *exitError) Error() string { return "exit " + strconv.Itoa(e.code) }

// optionAliases maps alternative long names to the flag that handles them.
var optionAliases = map[string]string{
	"cluster": "clusters",
	"node":    "nodelist",
	"nodes":   "nodelist",
	"users":   "user",
	"sib":     "sibling",
}

// parseOptions reads the environment and args as squeue's
// parse_command_line does. Help-like options print and return an
// exitError; so do invalid ones after printing Slurm's message.
func parseOptions(env *clienv.Env, args []string) (*options, error) {
	o := &options{argv: args}
	getenv := env.Getenv
	prog := env.Prog
	errorf := func(format string, a ...any) {
		fmt.Fprintf(env.Stderr, "%s: error: "+format+"\n", append([]any{prog}, a...)...)
	}
	fatalf := func(format string, a ...any) error {
		fmt.Fprintf(env.Stderr, "%s: fatal: "+format+"\n", append([]any{prog}, a...)...)
		return &exitError{1}
	}

	if getenv("SQUEUE_ALL") != "" {
		o.all = true
	}
	if getenv("SQUEUE_ARRAY") != "" {
		o.array = true
	}
	if v := getenv("SQUEUE_SORT"); v != "" {
		o.sort = &v
	}
	if getenv("SQUEUE_PRIORITY") != "" {
		o.priority = true
	}

	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	fs.SetInterspersed(true)
	str := func(name, short string, fn func(string) error) {
		fs.FuncP(name, short, "", fn)
	}
	optional := func(name, short string, fn func(string) error) {
		fs.FuncP(name, short, "", fn)
		fs.Lookup(name).NoOptDefVal = getopt.OptionalArg
	}
	flag := func(name, short string, fn func()) {
		fs.BoolFuncP(name, short, "", func(string) error { fn(); return nil })
	}
	show := func(name, short string, fn func(io.Writer)) {
		fs.BoolFuncP(name, short, "", func(string) error { fn(env.Stdout); return &exitError{0} })
	}

	str("accounts", "A", func(v string) error { o.accounts = splitList(v); return nil })
	// -U is an old spelling of -A with no long form.
	str("accounts-U", "U", func(v string) error { o.accounts = splitList(v); return nil })
	getopt.MarkShortOnly(fs, "accounts-U")
	flag("all", "a", func() { o.all = true })
	flag("array", "r", func() { o.array = true })
	flag("expand-patterns", "", func() { o.expand = true })
	str("Format", "O", func(v string) error {
		if o.format != nil {
			errorf("-O (--Format) is incompatible with -o (--format)")
			return &exitError{1}
		}
		o.formatLong, o.formatEnvSet = &v, true
		return nil
	})
	str("format", "o", func(v string) error {
		if o.formatLong != nil {
			errorf("-o (--format) is incompatible with -O (--Format)")
			return &exitError{1}
		}
		o.format, o.formatEnvSet = &v, true
		return nil
	})
	flag("federation", "", func() {})
	show("help", "", func(w io.Writer) { io.WriteString(w, helpText) })
	show("helpstate", "", func(w io.Writer) {
		for _, n := range readmodel.StateNames() {
			fmt.Fprintln(w, n)
		}
	})
	show("helpformat", "", printLetters)
	show("helpFormat", "", printNames)
	flag("hide", "", func() { o.all = false })
	str("iterate", "i", func(v string) error {
		n, _ := atoi(v)
		if n <= 0 {
			errorf("--iterate=%s\n", v)
			return &exitError{1}
		}
		o.iterate = n
		return nil
	})
	optional("jobs", "j", func(v string) error {
		if v != getopt.OptionalArg {
			jobs, bad := parseJobList(v)
			if bad != "" {
				errorf("Invalid job id: %s", bad)
				return &exitError{1}
			}
			o.jobs, o.jobsText = jobs, v
		}
		o.jobFlag = true
		return nil
	})
	flag("local", "", func() {})
	flag("long", "l", func() { o.long, o.formatEnvSet = true, true })
	str("licenses", "L", func(v string) error { o.licensesText, o.licenses = v, splitList(v); return nil })
	// A Drover controller is one cluster: -M names nothing else to ask.
	str("clusters", "M", func(string) error { return nil })
	flag("me", "", func() {
		o.usersText = utoa(env.User.UID)
		o.users = []userSel{{uid: env.User.UID, hasUID: true}}
	})
	str("name", "n", func(v string) error { o.namesText, o.names = v, splitList(v); return nil })
	flag("noconvert", "", func() { o.noConvert = true })
	str("nodelist", "w", func(v string) error {
		names, err := hostlist.Expand(v)
		if err != nil {
			errorf("'%s' invalid entry for --nodelist", v)
			return &exitError{1}
		}
		o.nodes = names
		return nil
	})
	flag("noheader", "h", func() { o.noHeader = true })
	flag("notme", "", func() { o.notMe = true })
	flag("only-job-state", "", func() { o.onlyState = true })
	str("partitions", "p", func(v string) error {
		o.partitionsText, o.partitions = v, splitList(v)
		o.all = true
		return nil
	})
	flag("priority", "P", func() { o.priority = true })
	str("qos", "q", func(v string) error { o.qos = splitList(v); return nil })
	str("reservation", "R", func(v string) error { o.reservation = v; return nil })
	str("running-over", "", func(v string) error {
		n, err := runningLimit(v)
		if err != nil {
			return fatalf("Invalid time limit specification")
		}
		o.runOver = n
		return nil
	})
	str("running-under", "", func(v string) error {
		n, err := runningLimit(v)
		if err != nil {
			return fatalf("Invalid time limit specification")
		}
		o.runUnder = n
		return nil
	})
	flag("sibling", "", func() {})
	str("sort", "S", func(v string) error { o.sort = &v; return nil })
	flag("start", "", func() { o.start, o.formatEnvSet = true, true })
	optional("steps", "s", func(v string) error {
		o.stepFlag, o.formatEnvSet = true, true
		if v != getopt.OptionalArg {
			o.steps = splitList(v)
		}
		return nil
	})
	str("states", "t", func(v string) error {
		if err := o.setStates(v, errorf); err != nil {
			return err
		}
		return nil
	})
	show("usage", "", func(w io.Writer) { io.WriteString(w, usageText) })
	str("user", "u", func(v string) error { o.usersText, o.users = v, parseUsers(v); return nil })
	flag("verbose", "v", func() { o.verbose++ })
	show("version", "V", func(w io.Writer) { fmt.Fprintln(w, "slurm "+clienv.SlurmVersion) })
	optional("json", "", func(v string) error {
		o.json = true
		if v != getopt.OptionalArg && v != "v0.0.44" && v != "data_parser/v0.0.44" {
			errorf("JSON output is only available with data parser v0.0.44, not %s", v)
			return &exitError{1}
		}
		return nil
	})
	optional("yaml", "", func(v string) error {
		o.json, o.yaml = true, true
		if v != getopt.OptionalArg && v != "v0.0.44" && v != "data_parser/v0.0.44" {
			errorf("YAML output is only available with data parser v0.0.44, not %s", v)
			return &exitError{1}
		}
		return nil
	})
	getopt.DefineAliases(fs, optionAliases)

	tokens, operands, gerr := getopt.Normalize(fs, args, optionAliases)
	if err := fs.Parse(tokens); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return nil, ee
		}
		return nil, fmt.Errorf("parse options: %w", err)
	}
	if gerr != nil {
		fmt.Fprintln(env.Stderr, getopt.Message(prog, gerr))
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", prog)
		return nil, &exitError{1}
	}

	if o.long && o.format != nil {
		return nil, fatalf("Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.")
	}
	if !o.formatEnvSet {
		if v := getenv("SQUEUE_FORMAT"); v != "" {
			o.format = &v
		} else if v := getenv("SQUEUE_FORMAT2"); v != "" {
			o.formatLong = &v
		}
	}
	if len(operands) > 0 {
		if o.jobFlag {
			jobs, bad := parseJobList(operands[0])
			if bad != "" {
				errorf("Invalid job id: %s", bad)
				return nil, &exitError{1}
			}
			o.jobs, o.jobsText = jobs, operands[0]
			operands = operands[1:]
		} else if o.stepFlag {
			o.steps = splitList(operands[0])
			operands = operands[1:]
		}
		if len(operands) > 0 {
			errorf("Unrecognized option: %s", operands[0])
			io.WriteString(env.Stdout, usageText)
			return nil, &exitError{1}
		}
	}
	if o.accounts == nil {
		if v := getenv("SQUEUE_ACCOUNT"); v != "" {
			o.accounts = splitList(v)
		}
	}
	if o.names == nil {
		if v := getenv("SQUEUE_NAMES"); v != "" {
			o.namesText, o.names = v, splitList(v)
		}
	}
	if o.licenses == nil {
		if v := getenv("SQUEUE_LICENSES"); v != "" {
			o.licensesText, o.licenses = v, splitList(v)
		}
	}
	if o.partitions == nil {
		if v := getenv("SQUEUE_PARTITION"); v != "" {
			o.partitionsText, o.partitions = v, splitList(v)
			o.all = true
		}
	}
	if o.qos == nil {
		if v := getenv("SQUEUE_QOS"); v != "" {
			o.qos = splitList(v)
		}
	}
	if o.statesText == "" {
		if v := getenv("SQUEUE_STATES"); v != "" {
			if err := o.setStates(v, errorf); err != nil {
				return nil, err
			}
		}
	}
	if o.users == nil {
		if v := getenv("SQUEUE_USERS"); v != "" {
			o.usersText, o.users = v, parseUsers(v)
		}
	}
	if o.start {
		if o.format == nil {
			f := "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
			o.format = &f
		}
		if o.sort == nil {
			s := "S"
			o.sort = &s
		}
		if o.statesText == "" {
			o.statesText = "PD"
			o.states = []readmodel.State{readmodel.StatePending}
		}
	}
	if o.runOver != 0 && o.runUnder != 0 && o.runOver > o.runUnder {
		return nil, fatalf("--running-over=%s and --running-under=%s will return 0 jobs.",
			timefmt.FormatDurationPadded(o.runOver), timefmt.FormatDurationPadded(o.runUnder))
	}
	if o.verbose > 0 {
		o.dump(env.Stdout)
	}
	return o, nil
}

// dump prints the parameters as squeue -v does before anything else.
func (o *options) dump(w io.Writer) {
	orNull := func(s string) string {
		if s == "" {
			return "(null)"
		}
		return s
	}
	b01 := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	format := "(null)"
	if o.format != nil {
		format = *o.format
	}
	sort := "(null)"
	if o.sort != nil {
		sort = *o.sort
	}
	nodes := ""
	if o.nodes != nil {
		nodes = hostlist.CompressSorted(o.nodes)
	}
	fmt.Fprintf(w, "-----------------------------\n")
	fmt.Fprintf(w, "all         = %t\n", o.all)
	fmt.Fprintf(w, "array       = %t\n", o.array)
	fmt.Fprintf(w, "federation  = false\n")
	fmt.Fprintf(w, "format      = %s\n", format)
	fmt.Fprintf(w, "iterate     = %d\n", o.iterate)
	fmt.Fprintf(w, "job_flag    = %d\n", b01(o.jobFlag))
	fmt.Fprintf(w, "jobs        = %s\n", orNull(o.jobsText))
	fmt.Fprintf(w, "licenses    = %s\n", orNull(o.licensesText))
	fmt.Fprintf(w, "local       = false\n")
	fmt.Fprintf(w, "names       = %s\n", orNull(o.namesText))
	fmt.Fprintf(w, "nodes       = %s\n", nodes)
	fmt.Fprintf(w, "only_job_state = %t\n", o.onlyState)
	fmt.Fprintf(w, "partitions  = %s\n", orNull(o.partitionsText))
	fmt.Fprintf(w, "priority    = %t\n", o.priority)
	fmt.Fprintf(w, "reservation = %s\n", orNull(o.reservation))
	fmt.Fprintf(w, "sibling      = false\n")
	fmt.Fprintf(w, "sort        = %s\n", sort)
	fmt.Fprintf(w, "start_flag  = %d\n", b01(o.start))
	fmt.Fprintf(w, "states      = %s\n", orNull(o.statesText))
	fmt.Fprintf(w, "step_flag   = %d\n", b01(o.stepFlag))
	fmt.Fprintf(w, "steps       = (null)\n")
	fmt.Fprintf(w, "users       = %s\n", orNull(o.usersText))
	fmt.Fprintf(w, "verbose     = %d\n", o.verbose)
	fmt.Fprintf(w, "-----------------------------\n\n\n")
}

// setStates parses a -t/--states list; "all" (any case) selects every
// state.
func (o *options) setStates(v string, errorf func(string, ...any)) error {
	o.statesText = v
	if strings.EqualFold(v, "all") {
		o.allStates, o.states = true, nil
		return nil
	}
	o.allStates = false
	o.states = nil
	for _, name := range splitList(v) {
		s, ok := readmodel.ParseState(name)
		if !ok {
			errorf("Invalid job state specified: %s", name)
			errorf("Valid job states include: %s\n", strings.Join(readmodel.StateNames(), ","))
			return &exitError{1}
		}
		o.states = append(o.states, s)
	}
	return nil
}

// parseJobList reads a -j list as squeue's _build_job_list does:
// comma-separated ids, each with an optional "_task"; numbers are read as
// strtol(3) reads them, ignoring trailing text. bad is the first entry
// whose job id is not positive.
func parseJobList(v string) (jobs []jobSel, bad string) {
	for _, tok := range splitList(v) {
		id, rest := cstrconv.Strtol(tok)
		sel := jobSel{task: readmodel.NoVal}
		if strings.HasPrefix(rest, "_") {
			t, _ := cstrconv.Strtol(rest[1:])
			sel.task = uint32(t)
		}
		if id <= 0 {
			return nil, tok
		}
		sel.jobID = uint32(id)
		jobs = append(jobs, sel)
	}
	return jobs, ""
}

// parseUsers reads a -u list: numeric entries are uids, others names.
func parseUsers(v string) []userSel {
	users := []userSel{}
	for _, tok := range splitList(v) {
		if n, err := strconv.ParseUint(tok, 10, 32); err == nil {
			users = append(users, userSel{uid: uint32(n), hasUID: true, name: tok})
			continue
		}
		users = append(users, userSel{name: tok})
	}
	return users
}

// runningLimit reads a --running-over/--running-under time as
// time_str2secs does; zero and negative times are refused.
func runningLimit(v string) (int64, error) {
	secs, inf, err := timefmt.ParseSeconds(v)
	if err != nil {
		return 0, fmt.Errorf("running time %q: %w", v, err)
	}
	if inf {
		return int64(readmodel.Infinite), nil
	}
	if secs <= 0 {
		return 0, fmt.Errorf("running time %q: not positive", v)
	}
	return secs, nil
}

// splitList splits on commas as strtok(3) does: empty items vanish.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' })
}

// atoi reads a number as atoi(3) does (0 when there is none).
func atoi(s string) (int, string) {
	n, rest := cstrconv.Strtol(s)
	if n > 1<<31-1 {
		n = 1<<31 - 1
	}
	return int(n), rest
}

func utoa(v uint32) string { return strconv.FormatUint(uint64(v), 10) }
