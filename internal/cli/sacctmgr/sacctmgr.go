// Package sacctmgr is the drop-in `sacctmgr` command: QOS, accounts,
// users and associations shown, added, modified and deleted through the
// slurmdb operations of the v0.0.44 API, with Slurm 25.11's syntax
// (`modify qos where name=high set priority=200`), layouts and messages.
//
// Every change is read, made and then sent whole: a modify reads the
// records it matches, changes them and posts them back in one request, so
// the controller applies it whole or not at all, as slurmdbd commits one
// sacctmgr command. What slurmdbd reports about a change (" Adding
// Account(s)", " Modified qos...") is worked out from the records read
// before it is sent, so that it can be shown before sacctmgr asks whether
// to commit.
package sacctmgr

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/getopt"
)

//go:embed usage.txt
var usageText string

// cmd is one sacctmgr invocation: its options and what it has read.
type cmd struct {
	ctx context.Context
	env *clienv.Env
	in  *input
	// immediate is -i: commit without asking (rollback_flag off).
	immediate           bool
	parsable, parsable2 bool
	noHeader            bool
	quiet               bool
	readonly            bool
	withAssoc           bool
	// exitCode is sacctmgr's exit_code: 1 once anything failed.
	exitCode int
	exit     bool
	// qosCache is g_qos_list: the QOS, read once per command.
	qosCache []qosRec
	cluster  string
}

// Run is the sacctmgr command.
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	c := &cmd{ctx: ctx, env: env, in: newInput(env.Stdin)}
	operands, code, done := c.options(args)
	if done {
		return code
	}
	if len(operands) > 0 {
		c.process(operands)
		return c.exitCode
	}
	// No command: read commands from standard input, as sacctmgr's
	// interactive mode does, until end of input or quit.
	local := 0
	for !c.exit {
		fmt.Fprint(env.Stdout, "sacctmgr: ")
		line, err := c.in.line()
		// readline, which sacctmgr reads its commands with, echoes
		// each line when its input is not a terminal, and sacctmgr
		// ends the prompt's line at the end of input.
		if err != nil {
			fmt.Fprintln(env.Stdout)
			break
		}
		fmt.Fprintln(env.Stdout, line)
		// A comment or an empty line is a command without words, which
		// sacctmgr counts as a failure.
		if words := splitLine(line); len(words) > 0 && !strings.HasPrefix(line, "#") {
			c.process(words)
		} else {
			c.fail()
		}
		if c.exitCode != 0 {
			local, c.exitCode = c.exitCode, 0
		}
	}
	return max(local, c.exitCode)
}

var longOptions = []string{"help", "usage", "immediate", "noheader", "oneliner", "parsable", "parsable2",
	"quiet", "readonly", "associations", "verbose", "version", "json", "yaml"}

// options reads sacctmgr's options (getopt_long "hionpPQrsvV", operands
// anywhere) and returns the command words.
func (c *cmd) options(args []string) ([]string, int, bool) {
	env := c.env
	fs := pflag.NewFlagSet("sacctmgr", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SetInterspersed(true)
	var help, version, json, yaml bool
	var verbose int
	fs.BoolVarP(&help, "help", "h", false, "")
	fs.BoolVar(&help, "usage", false, "")
	fs.BoolVarP(&c.immediate, "immediate", "i", false, "")
	fs.BoolVarP(&c.noHeader, "noheader", "n", false, "")
	oneliner := false
	fs.BoolVarP(&oneliner, "oneliner", "o", false, "")
	fs.BoolVarP(&c.parsable, "parsable", "p", false, "")
	fs.BoolVarP(&c.parsable2, "parsable2", "P", false, "")
	fs.BoolVarP(&c.quiet, "quiet", "Q", false, "")
	fs.BoolVarP(&c.readonly, "readonly", "r", false, "")
	fs.BoolVarP(&c.withAssoc, "associations", "s", false, "")
	fs.CountVarP(&verbose, "verbose", "v", "")
	fs.BoolVarP(&version, "version", "V", false, "")
	for _, name := range []string{"json", "yaml"} {
		fs.String(name, "", "")
		fs.Lookup(name).NoOptDefVal = getopt.OptionalArg
	}
	tokens, operands, gerr := getopt.Normalize(fs, args, nil)
	err := fs.Parse(tokens)
	if gerr == nil && err != nil {
		gerr = err
	}
	json = fs.Lookup("json").Changed
	yaml = fs.Lookup("yaml").Changed
	switch {
	case gerr != nil:
		fmt.Fprintln(env.Stderr, getopt.Message(c.prog(), gerr))
		fmt.Fprintln(env.Stderr, `Try "sacctmgr --help" for more information`)
		return nil, 1, true
	case c.quiet && verbose > 0:
		fmt.Fprintln(env.Stderr, "conflicting 'quiet' and 'verbose' options")
		return nil, 1, true
	case help:
		fmt.Fprintln(env.Stdout, usageText)
		return nil, 0, true
	case version:
		fmt.Fprintln(env.Stdout, "slurm "+clienv.SlurmVersion)
		return nil, 0, true
	case json || yaml:
		fmt.Fprintf(env.Stderr, "%s: error: JSON and YAML output are not supported\n", c.prog())
		return nil, 1, true
	}
	if c.parsable2 {
		c.parsable = false
	}
	return operands, 0, false
}

func (c *cmd) prog() string {
	if c.env.Prog != "" {
		return c.env.Prog
	}
	return "sacctmgr"
}

// Output helpers: printf to standard output, fprintf(stderr, ...) and
// Slurm's error() ("sacctmgr: error: ...").
func (c *cmd) out(format string, a ...any) { fmt.Fprintf(c.env.Stdout, format, a...) }
func (c *cmd) errf(format string, a ...any) {
	fmt.Fprintf(c.env.Stderr, format, a...)
}
func (c *cmd) slurmError(format string, a ...any) {
	fmt.Fprintf(c.env.Stderr, "sacctmgr: error: "+format+"\n", a...)
}

// fail sets the exit status.
func (c *cmd) fail() { c.exitCode = 1 }

// errorWithRequest reports a refused change or removal, as sacctmgr
// does: slurmdbd's comment on a refusal for lack of privilege first.
func (c *cmd) errorWithRequest(err error) {
	c.fail()
	var re *restError
	if errors.As(err, &re) && re.code == 2002 { // ESLURM_ACCESS_DENIED
		c.slurmError("Your user doesn't have privilege to perform this action")
	}
	c.errf(" Error with request: %s\n", strerror(err))
}

// requestFailed reports a request that did not reach an answer
// (connection refused and the like); true when err is one.
func (c *cmd) requestFailed(err error) bool {
	if err == nil {
		return false
	}
	c.fail()
	var re *restError
	if errors.As(err, &re) {
		c.errf(" Error with request: %s\n", re.message)
	} else {
		c.slurmError("%v", err)
	}
	return true
}

// process runs one command line, as sacctmgr's _process_command.
func (c *cmd) process(argv []string) {
	// Each command reads the QOS afresh, as sacctmgr resets its
	// connection before one.
	c.qosCache = nil
	w := argv[0]
	rest := argv[1:]
	tooMany := func(format string) bool {
		if len(rest) > 0 {
			c.fail()
			c.errf(format, w)
			return true
		}
		return false
	}
	switch {
	case abbrev(w, "associations", 3):
		c.withAssoc = true
	case abbrev(w, "help", 2):
		tooMany("too many arguments for keyword:%s\n")
		c.out("%s\n", usageText)
	case abbrev(w, "oneliner", 1):
		tooMany("too many arguments for keyword:%s\n")
	case abbrev(w, "quiet", 4):
		tooMany("too many arguments for keyword:%s\n")
		c.quiet = true
	case abbrev(w, "exit", 4) || abbrev(w, `\q`, 2) || abbrev(w, "quit", 4):
		tooMany("too many arguments for keyword:%s\n")
		c.exit = true
	case abbrev(w, "add", 3) || abbrev(w, "create", 3):
		c.add(rest)
	case abbrev(w, "show", 3) || abbrev(w, "list", 3):
		c.show(rest)
	case abbrev(w, "modify", 1) || abbrev(w, "update", 1):
		c.modify(rest)
	case abbrev(w, "delete", 3) || abbrev(w, "remove", 3):
		c.delete(rest)
	case abbrev(w, "verbose", 4):
		tooMany("too many arguments for %s keyword\n")
	case abbrev(w, "readonly", 4):
		tooMany("too many arguments for %s keyword\n")
		c.readonly = true
	case abbrev(w, "version", 4):
		tooMany("too many arguments for %s keyword\n")
		c.out("slurm %s\n", clienv.SlurmVersion)
	case abbrev(w, "ping", 4):
		tooMany("too many arguments for %s keyword\n")
		c.ping()
	case abbrev(w, "archive", 3) || abbrev(w, "clear", 3) || abbrev(w, "dump", 3) || abbrev(w, "load", 2) ||
		abbrev(w, "reconfigure", 4) || abbrev(w, "rollup", 2) || abbrev(w, "shutdown", 4):
		c.fail()
		c.slurmError("%s is not supported by Drover", strings.ToLower(w))
	default:
		c.fail()
		c.errf("invalid keyword: %s\n", w)
	}
}

// ping reports the accounting storage, which is the controller itself.
func (c *cmd) ping() {
	if _, err := c.getQOS(); err != nil {
		c.fail()
		c.out("slurmdbd(primary) at %s is DOWN\n", "localhost")
		return
	}
	c.out("slurmdbd(primary) at %s is UP\n", "localhost")
}

func (c *cmd) writable() bool {
	if c.readonly {
		c.fail()
		c.errf("Can't run this command in readonly mode.\n")
		return false
	}
	return true
}

func (c *cmd) add(argv []string) {
	if !c.writable() {
		return
	}
	if len(argv) == 0 {
		c.noEntity("add")
		return
	}
	w := argv[0]
	switch {
	case abbrev(w, "Account", 1) || abbrev(w, "Acct", 4):
		c.addAccount(argv[1:])
	case abbrev(w, "Cluster", 2) || abbrev(w, "Coordinator", 2) || abbrev(w, "Federation", 1) || abbrev(w, "Resource", 1):
		c.unsupported(w)
	case abbrev(w, "QOS", 1):
		c.addQOS(argv[1:])
	case abbrev(w, "User", 1):
		c.addUser(argv[1:])
	default:
		c.noEntity("add")
	}
}

func (c *cmd) show(argv []string) {
	if len(argv) == 0 {
		c.noEntity("list")
		return
	}
	w := argv[0]
	switch {
	case abbrev(w, "Accounts", 2) || abbrev(w, "Acct", 4):
		c.listAccounts(argv[1:])
	case abbrev(w, "Associations", 2):
		c.listAssocs(argv[1:])
	case abbrev(w, "Clusters", 2) || abbrev(w, "Configuration", 2) || abbrev(w, "Events", 1) ||
		abbrev(w, "Federation", 1) || abbrev(w, "Instances", 1) || abbrev(w, "Problems", 1) ||
		abbrev(w, "RunawayJobs", 2) || abbrev(w, "OrphanJobs", 1) || abbrev(w, "LostJobs", 1) ||
		abbrev(w, "Resource", 4) || abbrev(w, "Reservations", 4) || abbrev(w, "Resv", 4) ||
		abbrev(w, "Stats", 1) || abbrev(w, "Transactions", 1) || abbrev(w, "Txn", 1) ||
		abbrev(w, "WCKeys", 1) || abbrev(w, "tres", 2):
		c.unsupported(w)
	case abbrev(w, "QOS", 1):
		c.listQOS(argv[1:])
	case abbrev(w, "Users", 1):
		c.listUsers(argv[1:])
	default:
		c.noEntity("list")
	}
}

func (c *cmd) modify(argv []string) {
	if !c.writable() {
		return
	}
	if len(argv) == 0 {
		c.noEntity("modify")
		return
	}
	w := argv[0]
	switch {
	case abbrev(w, "Accounts", 1) || abbrev(w, "Acct", 4):
		c.modifyAccount(argv[1:])
	case abbrev(w, "Clusters", 5) || abbrev(w, "Federation", 1) || abbrev(w, "Job", 1) || abbrev(w, "Resource", 1):
		c.unsupported(w)
	case abbrev(w, "QOSs", 1):
		c.modifyQOS(argv[1:])
	case abbrev(w, "Users", 1):
		c.modifyUser(argv[1:])
	default:
		c.noEntity("modify")
	}
}

func (c *cmd) delete(argv []string) {
	if !c.writable() {
		return
	}
	if len(argv) == 0 {
		c.noEntity("delete")
		return
	}
	w := argv[0]
	switch {
	case abbrev(w, "Accounts", 1) || abbrev(w, "Acct", 4):
		c.deleteAccounts(argv[1:])
	case abbrev(w, "Clusters", 2) || abbrev(w, "Coordinators", 2) || abbrev(w, "Federations", 1) || abbrev(w, "Resource", 1):
		c.unsupported(w)
	case abbrev(w, "QOS", 2):
		c.deleteQOSs(argv[1:])
	case abbrev(w, "Users", 1):
		c.deleteUsers(argv[1:])
	default:
		c.noEntity("delete")
	}
}

// noEntity is sacctmgr's complaint about a command without a known
// entity.
func (c *cmd) noEntity(command string) {
	c.fail()
	switch command {
	case "add":
		c.errf("No valid entity in add command\nInput line must include \"Account\", \"Cluster\", \"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\"\n")
	case "list":
		c.errf("No valid entity in list command\nInput line must include \"Account\", \"Association\", \"Cluster\", \"Configuration\",\n" +
			"\"Event\", \"Federation\", \"Problem\", \"QOS\", \"Resource\", \"Reservation\",\n" +
			"\"RunAwayJobs\", \"Stats\", \"Transaction\", \"TRES\", \"User\", or \"WCKey\"\n")
	case "modify":
		c.errf("No valid entity in modify command\nInput line must include \"Account\", \"Cluster\", \"Federation\", \"Job\", \"QOS\", \"Resource\" or \"User\"\n")
	case "delete":
		c.errf("No valid entity in delete command\nInput line must include \"Account\", \"Cluster\", \"Coordinator\", \"Federation\", \"QOS\", \"Resource\", or \"User\"\n")
	}
}

// unsupported refuses the entities a Drover controller does not keep
// (clusters are one, the controller's; no WCKeys, resources, events...).
func (c *cmd) unsupported(entity string) {
	c.fail()
	c.slurmError("%s: not supported by Drover's accounting", entity)
}

// commitCheck asks whether to go on, as sacctmgr's commit_check does:
// with -i it does not ask; otherwise it waits up to 30 seconds for a Y or
// an N on standard input, and anything else, its end included, is no.
func (c *cmd) commitCheck(warning string) bool {
	if c.immediate {
		return true
	}
	c.out("%s (You have 30 seconds to decide)\n", warning)
	var ch byte
	gotInput, timedOut, eof := false, false, false
	for ch != 'Y' && ch != 'y' && ch != 'N' && ch != 'n' && ch != '\n' {
		if gotInput {
			c.out("Y or N please\n")
		}
		c.out("(N/y): ")
		b, err, late := c.in.byteWithin(30 * time.Second)
		if late {
			timedOut = true
			break
		}
		c.out("\n")
		if err != nil {
			eof = true
			break
		}
		ch, gotInput = b, true
	}
	switch {
	case timedOut:
		c.out("timeout\n")
	case ch == 'Y' || ch == 'y':
		return true
	case eof:
		// tcsetattr on what is not a terminal left errno at ENOTTY.
		c.out("error: Inappropriate ioctl for device\n")
	}
	return false
}

// commit asks the usual question before a change and reports a discarded
// one.
func (c *cmd) commit() bool {
	if c.commitCheck("Would you like to commit changes?") {
		return true
	}
	c.out(" Changes Discarded\n")
	return false
}

// input reads standard input a byte or a line at a time, the reads shared
// between commands and commit questions, each with an optional deadline.
type input struct {
	r       *bufio.Reader
	pending chan byteRead
}

type byteRead struct {
	b   byte
	err error
}

func newInput(r io.Reader) *input {
	if r == nil {
		r = strings.NewReader("")
	}
	return &input{r: bufio.NewReader(r)}
}

// byteWithin reads a byte, giving up (late) after d; a read given up on
// is the next one's answer.
func (in *input) byteWithin(d time.Duration) (byte, error, bool) {
	if in.pending == nil {
		ch := make(chan byteRead, 1)
		go func() {
			b, err := in.r.ReadByte()
			ch <- byteRead{b, err}
		}()
		in.pending = ch
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case r := <-in.pending:
		in.pending = nil
		return r.b, r.err, false
	case <-t.C:
		return 0, nil, true
	}
}

// line reads a line (without its newline); io.EOF at the end.
func (in *input) line() (string, error) {
	var b strings.Builder
	for {
		c, err, _ := in.byteWithin(365 * 24 * time.Hour)
		if err != nil {
			if b.Len() > 0 {
				return b.String(), nil
			}
			return "", err
		}
		if c == '\n' {
			return b.String(), nil
		}
		b.WriteByte(c)
	}
}
