// Package scontrol is the drop-in `scontrol` command. It shows jobs, nodes,
// partitions, licenses, reservations and the configuration in Slurm's
// key=value layout, expands and compresses hostlists, pings the controller
// and holds, releases, requeues and updates jobs and nodes, reaching the
// controller only through the slurmrestd v0.0.44 client of clienv.Env.
//
// The layouts are re-implemented from Slurm 25.11's documented and observed
// behaviour (the reference captures under shared/reference/cli).
package scontrol

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/getopt"
)

// RequeueFunc requeues one job (jobID as the user wrote it: "123",
// "123_4"); hold asks for the job to be held once requeued (requeuehold).
// slurmrestd v0.0.44 has no requeue operation, so the code that builds the
// command supplies one. Errors carrying a *slurmerr.Error print Slurm's
// message for their code.
type RequeueFunc func(ctx context.Context, jobID string, hold bool) error

// Options are the controller extensions scontrol may use beyond the
// v0.0.44 API.
type Options struct {
	// Requeue implements "requeue" and "requeuehold"; nil makes them
	// report that the controller does not support requeueing.
	Requeue RequeueFunc
}

// New returns the scontrol command using opts.
func New(opts Options) clienv.Command {
	return func(ctx context.Context, env *clienv.Env, args []string) int {
		c := &cmd{env: env, opts: opts, prog: progName(env)}
		return c.main(ctx, args)
	}
}

// Run is scontrol without controller extensions: requeue and requeuehold
// report that they are not supported.
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	return New(Options{})(ctx, env, args)
}

func progName(env *clienv.Env) string {
	if env.Prog != "" {
		return env.Prog
	}
	return "scontrol"
}

// cmd is the state of one scontrol invocation. Like Slurm's globals, the
// flags can be changed by interactive commands ("oneliner", "details").
type cmd struct {
	env  *clienv.Env
	opts Options
	prog string

	all      bool
	detail   bool
	future   bool
	oneLiner bool
	// quiet is Slurm's quiet_flag: 1 for -Q, -1 for -v, 0 otherwise.
	quiet    int
	exitCode int
	exitFlag bool
	// conf caches the local slurm.conf once read.
	conf *localConfig
	// doc is --json or --yaml; args the command line, for its meta
	// block.
	doc  docFormat
	args []string
}

// aliases are long options that are one option under two names, which
// does not make their common abbreviations ambiguous.
var aliases = map[string]string{"clusters": "cluster", "usage": "help"}

// longOptions lists scontrol's long options for getopt-style abbreviation.
var longOptions = []string{
	"all", "cluster", "clusters", "details", "federation", "future", "help",
	"hide", "json", "local", "oneliner", "quiet", "sibling", "uid", "usage",
	"verbose", "version", "yaml",
}

func (c *cmd) main(ctx context.Context, args []string) int {
	fs := pflag.NewFlagSet(c.prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	var (
		help, usage, hide, version                          bool
		local, sibling, federation                          bool
		verbose                                             int
		clusters, uid, jsonArg, yamlArg                     string
		allFlag, detailFlag, futureFlag, oneFlag, quietFlag bool
	)
	fs.BoolVarP(&allFlag, "all", "a", false, "")
	fs.StringVarP(&clusters, "cluster", "M", "", "")
	fs.StringVar(&clusters, "clusters", "", "")
	fs.BoolVarP(&detailFlag, "details", "d", false, "")
	fs.BoolVar(&federation, "federation", false, "")
	fs.BoolVarP(&futureFlag, "future", "F", false, "")
	fs.BoolVarP(&help, "help", "h", false, "")
	fs.BoolVar(&hide, "hide", false, "")
	fs.StringVar(&jsonArg, "json", "", "")
	fs.Lookup("json").NoOptDefVal = " "
	fs.BoolVar(&local, "local", false, "")
	fs.BoolVarP(&oneFlag, "oneliner", "o", false, "")
	fs.BoolVarP(&quietFlag, "quiet", "Q", false, "")
	fs.BoolVar(&sibling, "sibling", false, "")
	fs.StringVarP(&uid, "uid", "u", "", "")
	fs.BoolVar(&usage, "usage", false, "")
	fs.CountVarP(&verbose, "verbose", "v", "")
	fs.BoolVarP(&version, "version", "V", false, "")
	fs.StringVar(&yamlArg, "yaml", "", "")
	fs.Lookup("yaml").NoOptDefVal = " "

	argv, err := getopt.ExpandLong(args, longOptions, aliases)
	if err == nil {
		err = fs.Parse(argv)
	}
	if err != nil {
		fmt.Fprintln(c.env.Stderr, getopt.Message(c.prog, err))
		fmt.Fprintf(c.env.Stderr, "Try \"%s --help\" for more information\n", c.prog)
		return 1
	}
	if help || usage {
		c.usage()
		return 0
	}
	if version {
		c.printVersion()
		return 0
	}
	if c.env.Getenv != nil && c.env.Getenv("SCONTROL_ALL") != "" {
		c.all = true
	}
	if c.env.Getenv != nil && c.env.Getenv("SCONTROL_FUTURE") != "" {
		c.future = true
	}
	c.all = c.all || allFlag
	c.detail = detailFlag
	c.future = c.future || futureFlag
	c.oneLiner = oneFlag
	if quietFlag {
		c.quiet = 1
	}
	if verbose > 0 {
		c.quiet = -1
	}
	if hide {
		c.all, c.detail = false, false
	}
	if c.doc, err = readDocFormat(jsonArg, yamlArg); err != nil {
		c.errorf("%v", err)
		return 1
	}
	c.args = args

	if rest := fs.Args(); len(rest) > 0 {
		c.process(ctx, rest)
		return c.exitCode
	}
	c.interactive(ctx)
	return c.exitCode
}

// interactive reads commands from standard input, as scontrol does when
// called without one, until EOF, "exit" or "quit".
func (c *cmd) interactive(ctx context.Context) {
	in := bufio.NewScanner(c.env.Stdin)
	in.Buffer(make([]byte, 64*1024), 1024*1024)
	last := ""
	for !c.exitFlag {
		fmt.Fprintf(c.env.Stdout, "%s: ", c.prog)
		if !in.Scan() {
			fmt.Fprintln(c.env.Stdout)
			return
		}
		line := in.Text()
		if line == "!!" {
			line = last
		}
		last = line
		c.process(ctx, splitCommandLine(line))
	}
}

// splitCommandLine breaks an interactive line into words the way scontrol
// does: blanks separate words, and single or double quotes group blanks
// into a word (the quotes themselves are kept out).
func splitCommandLine(line string) []string {
	var (
		words  []string
		cur    strings.Builder
		quote  byte
		inWord bool
	)
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
				continue
			}
			cur.WriteByte(ch)
		case ch == '"' || ch == '\'':
			quote = ch
			inWord = true
		case ch == ' ' || ch == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(ch)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// abbrev reports whether tag names keyword kw the way scontrol's
// xstrncasecmp(tag, kw, MAX(strlen(tag), min)) test does: tag is a
// case-insensitive prefix of kw at least min bytes long (or all of kw).
func abbrev(tag, kw string, min int) bool {
	if len(tag) > len(kw) {
		return false
	}
	if len(tag) < min && len(tag) != len(kw) {
		return false
	}
	return strings.EqualFold(tag, kw[:len(tag)])
}

// hasPrefixFold reports whether tag starts with kw, ignoring case, as a
// fixed-length xstrncasecmp(tag, kw, len(kw)) does.
func hasPrefixFold(tag, kw string) bool {
	return len(tag) >= len(kw) && strings.EqualFold(tag[:len(kw)], kw)
}

// process runs one scontrol command line (the words after the options).
func (c *cmd) process(ctx context.Context, argv []string) {
	if len(argv) == 0 {
		c.exitCode = 1
		if c.quiet == -1 {
			fmt.Fprintln(c.env.Stderr, "no input")
		}
		return
	}
	tag := argv[0]
	switch {
	case abbrev(tag, "all", 2):
		c.all = true
	case abbrev(tag, "details", 1):
		if len(argv) > 1 {
			c.tooMany(tag)
			return
		}
		c.detail = true
	case abbrev(tag, "exit", 2), abbrev(tag, "quit", 4):
		if len(argv) > 1 {
			c.tooMany(tag)
		}
		c.exitFlag = true
	case abbrev(tag, "help", 2):
		if len(argv) > 1 {
			c.tooMany(tag)
		}
		c.usage()
	case abbrev(tag, "hide", 2):
		c.all, c.detail = false, false
	case abbrev(tag, "oneliner", 1):
		if len(argv) > 1 {
			c.tooMany(tag)
		}
		c.oneLiner = true
	case abbrev(tag, "ping", 3):
		if len(argv) > 1 {
			c.tooMany(tag)
			return
		}
		c.printPings(ctx)
	case hasPrefixFold(tag, `\q`) || abbrev(tag, "quiet", 4):
		if len(argv) > 1 {
			c.tooMany(tag)
		}
		c.quiet = 1
	case abbrev(tag, "reconfigure", 3):
		if len(argv) > 1 {
			c.tooMany(tag)
			return
		}
		c.reconfigure(ctx)
	case abbrev(tag, "requeue", 3):
		c.requeue(ctx, tag, argv[1:], false)
	case hasPrefixFold(tag, "requeuehold"):
		c.requeue(ctx, tag, argv[1:], true)
	case hasPrefixFold(tag, "hold"), hasPrefixFold(tag, "holdu"),
		hasPrefixFold(tag, "uhold"), abbrev(tag, "release", 3):
		if len(argv) < 2 {
			c.printfError("too few arguments for keyword:%s", tag)
			return
		}
		for _, id := range argv[1:] {
			c.hold(ctx, tag, id)
		}
	case abbrev(tag, "show", 3):
		c.show(ctx, argv)
	case abbrev(tag, "takeover", 8):
		c.takeover(ctx, tag, argv[1:])
	case abbrev(tag, "token", 3):
		c.token(ctx, argv[1:])
	case abbrev(tag, "top", 3):
		c.top(ctx, argv[1:])
	case abbrev(tag, "create", 2):
		if len(argv) < 2 {
			c.printfError("too few arguments for keyword:%s", tag)
			return
		}
		if key, _, _ := strings.Cut(argv[1], "="); abbrev(key, "nodename", 3) {
			c.createNode(ctx, argv[1:])
			return
		}
		switch key, _, ok := strings.Cut(argv[1], "="); {
		case ok && abbrev(key, "partitionname", 3):
			c.setPartition(ctx, argv[1:], true)
			return
		case !ok && abbrev(key, "partition", 3) && len(argv) > 2:
			// "create partition PartitionName=x ..."
			c.setPartition(ctx, argv[2:], true)
			return
		}
		if !abbrev(argv[1], "reservation", 3) && !abbrev(argv[1], "reservationname", 3) && !strings.Contains(argv[1], "=") {
			c.errorf("creating %s is not supported by this controller", argv[1])
			return
		}
		c.createReservation(ctx, argv[1:])
	case abbrev(tag, "delete", 1):
		if len(argv) < 2 {
			c.printfError("too few arguments for keyword:%s", tag)
			return
		}
		key, _, hasValue := strings.Cut(argv[1], "=")
		var del func(ctx context.Context, word, name string)
		switch {
		case abbrev(key, "partitionname", 3) || (!hasValue && abbrev(key, "partition", 3)):
			del = c.deletePartition
		case abbrev(key, "nodename", 3):
			del = c.deleteNode
		}
		if del != nil {
			// scontrol's _delete_it: "ENTITY=ID" or "ENTITY ID".
			switch _, val, _ := strings.Cut(argv[1], "="); {
			case hasValue && len(argv) == 2:
				del(ctx, argv[1], val)
			case !hasValue && len(argv) == 3:
				del(ctx, argv[1], argv[2])
			default:
				c.errorf("Proper format is 'delete <ENTITY>=<ID>' or 'delete <ENTITY> <ID>'")
			}
			return
		}
		c.deleteReservation(ctx, argv[1:])
	case abbrev(tag, "update", 1):
		if len(argv) < 2 {
			c.exitCode = 1
			fmt.Fprintf(c.env.Stderr, "too few arguments for %s keyword\n", tag)
			return
		}
		c.update(ctx, argv[1:])
	case abbrev(tag, "verbose", 4):
		if len(argv) > 1 {
			c.exitCode = 1
			fmt.Fprintf(c.env.Stderr, "too many arguments for %s keyword\n", tag)
		}
		c.quiet = -1
	case abbrev(tag, "version", 4):
		if len(argv) > 1 {
			c.exitCode = 1
			fmt.Fprintf(c.env.Stderr, "too many arguments for %s keyword\n", tag)
		}
		c.printVersion()
	default:
		if kw := unsupportedKeyword(tag); kw != "" {
			c.errorf("%s is not supported by this controller", kw)
			return
		}
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "invalid keyword: %s\n", tag)
	}
}

// unsupportedKeyword returns the scontrol keyword tag abbreviates when it is
// one Slurm knows but the v0.0.44 API cannot carry, so that users get a
// clear refusal instead of "invalid keyword".
func unsupportedKeyword(tag string) string {
	for _, k := range []struct {
		kw  string
		min int
	}{
		{"cancel_reboot", 3}, {"completing", 2}, {"cluster", 2}, {"errnumstr", 2}, {"getaddrs", 8}, {"gethost", 7},
		{"listjobs", 1}, {"listpids", 1}, {"liststeps", 1}, {"notify", 1},
		{"pidinfo", 3}, {"power", 2}, {"reboot_nodes", 3},
		{"resume", 3}, {"schedloglevel", 3}, {"setdebug", 2},
		{"setdebugflags", 9}, {"shutdown", 8}, {"suspend", 2},
		{"wait_job", 2}, {"write", 5},
	} {
		if abbrev(tag, k.kw, k.min) {
			return k.kw
		}
	}
	return ""
}

func (c *cmd) tooMany(tag string) {
	c.exitCode = 1
	fmt.Fprintf(c.env.Stderr, "too many arguments for keyword:%s\n", tag)
}

// printfError reports a failure as scontrol's _printf_error does (no
// prefix, silenced by -Q) and sets the exit code.
func (c *cmd) printfError(format string, args ...any) {
	c.exitCode = 1
	if c.quiet != 1 {
		fmt.Fprintf(c.env.Stderr, format+"\n", args...)
	}
}

// errorf reports a failure as Slurm's error() does: "scontrol: error: ...".
func (c *cmd) errorf(format string, args ...any) {
	c.exitCode = 1
	fmt.Fprintf(c.env.Stderr, "%s: error: %s\n", c.prog, fmt.Sprintf(format, args...))
}

func (c *cmd) printVersion() {
	fmt.Fprintf(c.env.Stdout, "slurm %s\n", clienv.SlurmVersion)
}

func (c *cmd) usage() {
	fmt.Fprintf(c.env.Stdout, `Usage: %[1]s [<OPTION>] [<COMMAND>]
  Valid <OPTION> values are:
     -a or --all: equivalent to "all" command
     -d or --details: equivalent to "details" command
     -F or --future: show future nodes
     -h or --help: equivalent to "help" command
     --hide: equivalent to "hide" command
     -o or --oneliner: equivalent to "oneliner" command
     -Q or --quiet: equivalent to "quiet" command
     -v or --verbose: equivalent to "verbose" command
     -V or --version: equivalent to "version" command

  <keyword> may be omitted from the execute line and %[1]s will execute
  in interactive mode. It will process commands as entered until explicitly
  terminated.

  Valid <COMMAND> values are:
     all                      display information about all partitions,
                              including hidden partitions.
     details                  evokes additional details from the "show"
                              command
     exit                     terminate %[1]s
     help                     print this description of use.
     hide                     do not display information about hidden
                              partitions.
     hold <job_list>          prevent specified job from starting.
     oneliner                 report output one record per line.
     ping                     print status of slurmctld daemons.
     quiet                    print no messages other than error messages.
     quit                     terminate this command.
     release <job_list>       permit specified job to start.
     requeue <job_id>         re-queue a batch job.
     requeuehold <job_id>     re-queue and hold a batch job.
     show <ENTITY> [<ID>]     display state of identified entity, default
                              is all records.
     takeover [<INDEX|HOST>]  ask a backup controller to take over (by
                              default the first backup, INDEX=1).
     uhold <job_list>         place user hold on specified job.
     update <SPECIFICATIONS>  update job or node configuration.
     verbose                  enable detailed logging.
     version                  display tool version number.

  <ENTITY> may be "config", "hostnames", "hostlist", "hostlistsorted",
       "job", "licenses", "node", "partition" or "reservation".

  <ID> may be a configuration parameter name, job id, node name, partition
       name or reservation name.

  <SPECIFICATIONS> are specified in the same format as the configuration
  file. You may wish to use the "show" keyword then use its output as
  input for the update keyword, editing as needed.
`, c.prog)
}
