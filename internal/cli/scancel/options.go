package scancel

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
	"github.com/droverhq/drover/internal/hostlist"
)

// options are scancel's parameters (Slurm's opt_t).
type options struct {
	account     string
	batch       bool
	ctld        bool
	cron        bool
	full        bool
	hurry       bool
	interactive bool
	jobName     string
	nodelist    []string
	nodeText    string
	partition   string
	qos         string
	reservation string
	// signal is 0 when none was given (scancel then sends SIGKILL).
	signal   uint16
	state    readmodel.State
	hasState bool
	user     string
	// verbose is -1 with -Q.
	verbose int
	wckey   string

	targets  []Target
	operands []string
}

// exitError ends the command with code after its message was printed.
type exitError struct{ code int }

func (e *exitError) Error() string { return "exit " + strconv.Itoa(e.code) }

// optionAliases maps alternative long names to the flag that handles them.
var optionAliases = map[string]string{
	"cluster": "clusters",
	"jobname": "name",
}

// parseOptions reads the environment and args as scancel's
// initialize_and_process_args does.
func parseOptions(env *clienv.Env, args []string) (*options, error) {
	o := &options{}
	prog := env.Prog
	errorf := func(format string, a ...any) {
		fmt.Fprintf(env.Stderr, "%s: error: "+format+"\n", append([]any{prog}, a...)...)
	}
	if err := o.fromEnv(env, errorf); err != nil {
		return nil, err
	}

	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	str := func(name, short string, fn func(string) error) { fs.FuncP(name, short, "", fn) }
	flag := func(name, short string, fn func()) {
		fs.BoolFuncP(name, short, "", func(string) error { fn(); return nil })
	}
	show := func(name, short string, fn func(io.Writer)) {
		fs.BoolFuncP(name, short, "", func(string) error { fn(env.Stdout); return &exitError{0} })
	}
	str("account", "A", func(v string) error { o.account = strings.ToLower(v); return nil })
	str("admin-comment", "", func(string) error {
		errorf("--admin-comment is not supported")
		return &exitError{1}
	})
	flag("batch", "b", func() { o.batch = true })
	flag("ctld", "", func() { o.ctld = true })
	flag("cron", "c", func() { o.cron = true })
	flag("full", "f", func() { o.full = true })
	show("help", "", func(w io.Writer) { io.WriteString(w, helpText) })
	flag("hurry", "H", func() { o.hurry = true })
	flag("interactive", "i", func() { o.interactive = true })
	// A Drover controller is one cluster: -M is accepted and, as in Slurm,
	// sends the request straight to the controller.
	str("clusters", "M", func(string) error { o.ctld = true; return nil })
	flag("me", "", func() { o.user = strconv.FormatUint(uint64(env.User.UID), 10) })
	str("name", "n", func(v string) error { o.jobName = v; return nil })
	str("nodelist", "w", func(v string) error {
		names, err := hostlist.Expand(v)
		if err != nil {
			errorf("Invalid node list: %s", v)
			return &exitError{1}
		}
		o.nodelist, o.nodeText = names, v
		return nil
	})
	str("partition", "p", func(v string) error { o.partition = v; return nil })
	str("qos", "q", func(v string) error { o.qos = strings.ToLower(v); return nil })
	flag("quiet", "Q", func() { o.verbose = -1 })
	str("reservation", "R", func(v string) error { o.reservation = v; return nil })
	str("sibling", "", func(string) error {
		errorf("--sibling is not supported: Drover has no federation")
		return &exitError{1}
	})
	str("signal", "s", func(v string) error {
		sig := SignalNumber(v)
		if sig == 0 {
			fmt.Fprintf(env.Stderr, "Unknown job signal: %s\n", v)
			return &exitError{1}
		}
		o.signal = sig
		return nil
	})
	str("state", "t", func(v string) error { return o.setState(env, v, false) })
	show("usage", "", func(w io.Writer) { io.WriteString(w, usageText) })
	str("user", "u", func(v string) error { o.user = v; return nil })
	flag("verbose", "v", func() { o.verbose++ })
	show("version", "V", func(w io.Writer) { fmt.Fprintln(w, "slurm "+clienv.SlurmVersion) })
	str("wckey", "", func(v string) error { o.wckey = v; return nil })
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
	if len(operands) > 0 {
		targets, ops, err := ParseTargets(operands)
		if err != nil {
			errorf("%v", err)
			return nil, &exitError{1}
		}
		o.targets, o.operands = targets, ops
	}
	if o.account == "" && len(o.targets) == 0 && o.jobName == "" && o.nodelist == nil &&
		o.partition == "" && o.qos == "" && o.reservation == "" && !o.hasState && o.user == "" && o.wckey == "" {
		errorf("No job identification provided")
		return nil, &exitError{1}
	}
	return o, nil
}

// fromEnv applies the SCANCEL_* variables.
func (o *options) fromEnv(env *clienv.Env, errorf func(string, ...any)) error {
	boolean := func(name string, dst *bool) {
		v := env.Getenv(name)
		switch {
		case v == "":
		case strings.EqualFold(v, "true") || strings.EqualFold(v, "T"):
			*dst = true
		case strings.EqualFold(v, "false") || strings.EqualFold(v, "F"):
			*dst = false
		default:
			errorf("Unrecognized %s value: %s", name, v)
		}
	}
	if v := env.Getenv("SCANCEL_ACCOUNT"); v != "" {
		o.account = strings.ToLower(v)
	}
	boolean("SCANCEL_BATCH", &o.batch)
	if env.Getenv("SCANCEL_CTLD") != "" {
		o.ctld = true
	}
	if env.Getenv("SCANCEL_CRON") != "" {
		o.cron = true
	}
	boolean("SCANCEL_FULL", &o.full)
	if env.Getenv("SCANCEL_HURRY") != "" {
		o.hurry = true
	}
	boolean("SCANCEL_INTERACTIVE", &o.interactive)
	if v := env.Getenv("SCANCEL_NAME"); v != "" {
		o.jobName = v
	}
	if v := env.Getenv("SCANCEL_PARTITION"); v != "" {
		o.partition = v
	}
	if v := env.Getenv("SCANCEL_QOS"); v != "" {
		o.qos = strings.ToLower(v)
	}
	if v := env.Getenv("SCANCEL_STATE"); v != "" {
		if err := o.setState(env, v, true); err != nil {
			return err
		}
	}
	if v := env.Getenv("SCANCEL_USER"); v != "" {
		o.user = v
	}
	verbose := false
	boolean("SCANCEL_VERBOSE", &verbose)
	if verbose {
		o.verbose = 1
	}
	if v := env.Getenv("SCANCEL_WCKEY"); v != "" {
		o.wckey = v
	}
	return nil
}

// setState parses -t/--state or SCANCEL_STATE; scancel words its errors
// without its name.
func (o *options) setState(env *clienv.Env, v string, fromEnv bool) error {
	s, ok := readmodel.ParseState(v)
	if !ok {
		if fromEnv {
			fmt.Fprintf(env.Stderr, "Unrecognized SCANCEL_STATE value: %s\n", v)
		} else {
			fmt.Fprintf(env.Stderr, "Invalid job state specified: %s\n", v)
		}
		fmt.Fprintf(env.Stderr, "Valid job states are PENDING, RUNNING, and SUSPENDED\n")
		return &exitError{1}
	}
	o.state, o.hasState = s, true
	return nil
}

// filtered reports whether any job filter was given.
func (o *options) filtered() bool {
	return o.account != "" || o.jobName != "" || o.nodelist != nil || o.partition != "" ||
		o.qos != "" || o.reservation != "" || o.hasState || o.user != "" || o.wckey != ""
}

// plain reports scancel's "default options": only job ids, perhaps with
// -f, -H, -c or -v. Such a request signals each operand as written.
func (o *options) plain() bool {
	return !o.filtered() && !o.batch && !o.ctld && !o.interactive && o.signal == 0
}

// filterText lists the filters as scancel's "No active jobs match ALL job
// filters" message does.
func (o *options) filterText() string {
	var b strings.Builder
	add := func(k, v string) {
		if v != "" {
			b.WriteString(k + "=" + v + " ")
		}
	}
	add("account", o.account)
	add("job_name", o.jobName)
	add("nodelist", o.nodeText)
	add("partition", o.partition)
	add("qos", o.qos)
	add("reservation", o.reservation)
	if o.hasState {
		add("state", o.state.String())
	}
	add("user_name", o.user)
	add("wckey", o.wckey)
	return b.String()
}

// helpText is scancel --help.
const helpText = `Usage: scancel [OPTIONS] [job_id[_array_id][.step_id]]
  -A, --account=account           act only on jobs charging this account
      --admin-comment=comment     set AdminComment on canceled jobs
  -b, --batch                     signal batch shell for specified job
      --ctld                      send request directly to slurmctld
  -c, --cron                      cancel an scrontab job
  -f, --full                      signal batch shell and all steps for specified job
  -H, --hurry                     avoid burst buffer stage out
  -i, --interactive               require response from user for each job
  -M, --clusters                  clusters to issue commands to.
                                  NOTE: SlurmDBD must be up.
  -n, --name=job_name             act only on jobs with this name
  -p, --partition=partition       act only on jobs in this partition
  -Q, --quiet                     disable warnings
  -q, --qos=qos                   act only on jobs with this quality of service
  -R, --reservation=reservation   act only on jobs with this reservation
      --sibling=cluster_name      remove an active sibling job from a federated job
  -s, --signal=name | integer     signal to send to job, default is SIGKILL
  -t, --state=states              act only on jobs in this state.  Valid job
                                  states are PENDING, RUNNING and SUSPENDED
  -u, --user=user_name            act only on jobs of this user
  -V, --version                   output version information and exit
  -v, --verbose                   verbosity level
  -w, --nodelist                  act only on jobs on these nodes
      --wckey=wckey               act only on jobs with this workload
                                  charactization key

Help options:
  --help                          show this help message
  --usage                         display brief usage message
`

// usageText is scancel --usage.
const usageText = `Usage: scancel [-A account] [--batch] [--ctld] [--full] [--interactive] [-n job_name]
               [-p partition] [-Q] [-q qos] [-R reservation] [-s signal | integer]
               [-t PENDING | RUNNING | SUSPENDED] [--usage] [-u user_name]
               [--hurry] [-V] [-v] [-w hosts...] [--wckey=wckey]
               [job_id[_array_id][.step_id]]
`
