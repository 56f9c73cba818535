package jobopts

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Config is what the parser needs from the command's surroundings. Nothing
// is read from the process itself, so tests and in-process callers get
// deterministic results.
type Config struct {
	// Prog is the command name used in messages ("sbatch", "srun",
	// "salloc"); empty means the command's own name.
	Prog string
	// Now is the clock for --begin and --deadline.
	Now time.Time
	// Cwd is the caller's working directory: relative --chdir paths and
	// node list files are taken from it.
	Cwd string
	// UID is the caller's user id: --uid and --gid are for root only.
	UID uint32
	// LookupEnv reads the caller's environment (SBATCH_* variables,
	// SLURM_DIST_PLANESIZE...), telling empty from missing as Slurm's
	// getenv does. Nil reads nothing.
	LookupEnv func(string) (string, bool)
	// ErrorExit is the exit status of errors found when checking options
	// as a whole (SLURM_EXIT_ERROR); 0 means 1.
	ErrorExit int
	// ReadFile reads node list files (--nodefile, -w with a path); nil
	// uses os.ReadFile. Relative names are joined to Cwd first.
	ReadFile func(name string) ([]byte, error)
	// LookupUser and LookupGroup resolve --uid and --gid names or numbers
	// to ids; nil uses os/user.
	LookupUser  func(string) (uint32, error)
	LookupGroup func(string) (uint32, error)
	// SlurmUser and SlurmUserID are slurm.conf's SlurmUser, who may use
	// srun's --slurmd-debug besides root; empty means root.
	SlurmUser   string
	SlurmUserID uint32
	// PluginOptions are the options SPANK-like plugins add: accepted
	// like the command's own (and in #SBATCH lines), listed under
	// "Options provided by plugins" in --help. One whose name the
	// command already has is left out, as Slurm disables it.
	PluginOptions []PluginOption
}

// PluginOption is an option a plugin registers (struct spank_option).
type PluginOption struct {
	Plugin, Name, ArgInfo, Usage string
	HasArg                       bool
}

// PluginValue is a plugin option the user gave; Value is "" for one
// without an argument.
type PluginValue struct {
	Plugin, Name, Value string
}

// Parser applies option sources to one Options value. Its option table is
// a pflag.FlagSet (names, shorthands, help text and the Changed marks); the
// command line itself is read by a getopt_long re-implementation so that
// abbreviations and messages match Slurm's.
type Parser struct {
	cfg  Config
	cmd  command
	opts *Options
	fs   *pflag.FlagSet
	defs []*optDef
	envs []envDef
	scan *scanner
	// operands are the command line's operands, once ParseArgs or
	// ParseCommandLine has read it (srun's Finish needs its command).
	operands []string
}

// command is the Slurm command whose table and rules a Parser follows.
type command int

const (
	cmdSbatch command = iota
	cmdSrun
	cmdSalloc
)

// String returns the command's name.
func (c command) String() string {
	switch c {
	case cmdSrun:
		return "srun"
	case cmdSalloc:
		return "salloc"
	}
	return "sbatch"
}

// optDef is one option of the table. It implements pflag.Value so that the
// FlagSet can hold it.
type optDef struct {
	spec
	// argName is the placeholder in --help ("ntasks").
	argName string
	usage   string
	// early options (--help, --version, -v, -Q, --wrap) are handled
	// before the script is read and ignored in directives, as in sbatch.
	early bool
	set   func(p *Parser, v string, has bool) error
	// reset restores the default; environment variables use it for
	// "false" flag values.
	reset func(o *Options)
	// raw is the last value given, for String, and hasRaw whether it
	// came with an argument (for NextComponent).
	raw    string
	hasRaw bool
	// hidden options (deprecated spellings, options Drover refuses) are
	// left out of --help.
	hidden bool
	// p is the parser the option belongs to, for Set.
	p *Parser
}

func (d *optDef) String() string { return d.raw }

// Set applies v as if given on the command line, so that the FlagSet can
// set options programmatically (pflag's FlagSet.Set). An empty value for an
// option whose argument is optional or absent means "no argument".
func (d *optDef) Set(v string) error {
	if d.p == nil {
		return errors.New("jobopts: option not attached to a parser")
	}
	return d.p.apply(d, v, d.arg == requiredArgument || v != "", FromCommandLine)
}

// Type names the kind of argument for pflag.
func (d *optDef) Type() string {
	switch d.arg {
	case noArgument:
		return "bool"
	case optionalArgument:
		return "optional"
	}
	return "string"
}

// envDef maps an input environment variable to an option, as the
// env_vars tables of sbatch, srun and salloc do.
type envDef struct {
	name string
	id   string
}

// NewSbatch returns a parser with sbatch's option table, filling a fresh
// Options.
func NewSbatch(cfg Config) *Parser {
	return newParser(cfg, cmdSbatch, sbatchOptions(), sbatchEnv())
}

// newParser builds a parser for cmd from its option table (in Slurm's
// order) and its input environment variables.
func newParser(cfg Config, cmd command, defs []*optDef, envs []envDef) *Parser {
	if cfg.Prog == "" {
		cfg.Prog = cmd.String()
	}
	if cfg.ErrorExit == 0 {
		cfg.ErrorExit = 1
	}
	p := &Parser{cfg: cfg, cmd: cmd, opts: &Options{Sources: map[string]Source{}}}
	p.fs = pflag.NewFlagSet(cfg.Prog, pflag.ContinueOnError)
	p.fs.SortFlags = false
	p.defs = append(defs, p.pluginDefs(defs)...)
	specs := make([]*spec, 0, len(p.defs))
	for _, d := range p.defs {
		d.p = p
		if cmd != cmdSbatch {
			// Only sbatch has an early pass: srun and salloc act on
			// --help, --version... where they stand in argv.
			d.early = false
		}
		if d.long != "" {
			short := ""
			if d.short != 0 {
				short = string(d.short)
			}
			f := p.fs.VarPF(d, d.long, short, d.usage)
			f.Hidden = d.hidden
			if d.arg == optionalArgument {
				// pflag's marker for an optional argument; the
				// value itself is never used.
				f.NoOptDefVal = " "
			}
		}
		specs = append(specs, &d.spec)
	}
	p.scan = newScanner(specs)
	p.envs = envs
	return p
}

// Parse reads the environment, then the command line, then checks the
// whole, as initialize_and_process_args does for srun and salloc; it
// returns the operands.
func (p *Parser) Parse(args []string) ([]string, error) {
	if err := p.ParseEnv(); err != nil {
		return nil, err
	}
	operands, err := p.ParseArgs(args)
	if err != nil {
		return nil, err
	}
	return operands, p.Finish()
}

// Options returns the options parsed so far.
func (p *Parser) Options() *Options { return p.opts }

// FlagSet returns the option table as a pflag.FlagSet, in Slurm's order.
// Flags given so far are marked Changed.
func (p *Parser) FlagSet() *pflag.FlagSet { return p.fs }

func (p *Parser) lookupEnv(k string) (string, bool) {
	if p.cfg.LookupEnv == nil {
		return "", false
	}
	return p.cfg.LookupEnv(k)
}

func (p *Parser) getenv(k string) string {
	v, _ := p.lookupEnv(k)
	return v
}

// exit turns a failure into the command's Exit, prefixing each line with
// the program name.
func (p *Parser) exit(err error) error {
	var f *failure
	if !errors.As(err, &f) {
		return err
	}
	var b strings.Builder
	for _, l := range f.lines {
		b.WriteString(p.cfg.Prog)
		b.WriteString(": ")
		b.WriteString(l)
		b.WriteByte('\n')
	}
	code := f.code
	if f.errorExit {
		code = p.cfg.ErrorExit
	}
	return &Exit{Code: code, Stdout: f.stdout, Stderr: b.String()}
}

// getoptExit is getopt's message followed by the command's hint ("Try
// \"srun --help\" ..."), exit 255: slurm_process_option_or_exit's exit(-1)
// for the '?' getopt returns.
func (p *Parser) getoptExit(msg string) error {
	return &Exit{
		Code: ExitOptionError,
		Stderr: fmt.Sprintf("%s: %s\nTry \"%s --help\" for more information\n",
			p.cfg.Prog, msg, p.cfg.Prog),
	}
}

// apply runs one option's setter and records its source.
func (p *Parser) apply(d *optDef, v string, has bool, src Source) error {
	if err := d.set(p, v, has); err != nil {
		return p.exit(err)
	}
	d.raw, d.hasRaw = v, has
	p.opts.Sources[d.id] = src
	if d.long != "" {
		if f := p.fs.Lookup(d.long); f != nil {
			f.Changed = true
		}
	}
	return nil
}

// ParseEarly is sbatch's first pass over the command line: it applies the
// options that act before the script is read (--help, --usage, --version,
// --verbose, --quiet, --wrap) and returns the operands: the script and its
// arguments. Syntax errors are left for ParseCommandLine, which reports
// them after the script's directives have been read, as sbatch does. An
// *Exit error carries --help/--usage/--version output.
func (p *Parser) ParseEarly(args []string) (operands []string, err error) {
	items, optind := p.scan.scan(args)
	for _, it := range items {
		if it.err != "" || !p.def(it.spec).early {
			continue
		}
		if err := p.apply(p.def(it.spec), it.value, it.hasValue, FromCommandLine); err != nil {
			return nil, err
		}
	}
	return args[optind:], nil
}

// ParseCommandLine applies the command line's options (all but sbatch's
// early ones), stopping at the first error, which it returns as an *Exit.
// ParseArgs does the same and also returns the operands.
func (p *Parser) ParseCommandLine(args []string) error {
	_, err := p.ParseArgs(args)
	return err
}

// ParseArgs applies the command line's options as ParseCommandLine does and
// returns its operands: srun's command and its arguments, salloc's command,
// sbatch's script and its arguments. They are args from the first argument
// that is not an option (or after "--"), untouched: the option strings
// start with '+', so getopt stops there rather than permuting. srun and
// salloc act on --help, --usage and --version where they stand, after the
// options before them.
func (p *Parser) ParseArgs(args []string) (operands []string, err error) {
	items, optind := p.scan.scan(args)
	for _, it := range items {
		if it.err != "" {
			return nil, p.getoptExit(it.err)
		}
		d := p.def(it.spec)
		if d.early {
			continue
		}
		if err := p.apply(d, it.value, it.hasValue, FromCommandLine); err != nil {
			return nil, err
		}
	}
	p.operands = args[optind:]
	return args[optind:], nil
}

// ParseDirectives applies the options of a script's directives (the words
// sbatchscript.Directives returns). Early options are ignored there, as in
// sbatch; a word that is not an option is an invalid directive.
func (p *Parser) ParseDirectives(args []string) error {
	items, optind := p.scan.scan(args)
	for _, it := range items {
		if it.err != "" {
			return p.getoptExit(it.err)
		}
		d := p.def(it.spec)
		if d.early {
			continue
		}
		if err := p.apply(d, it.value, it.hasValue, FromScript); err != nil {
			return err
		}
	}
	if optind < len(args) {
		return p.exit(optErrorf("Invalid directive found in batch script: %s", args[optind]))
	}
	return nil
}

// ParseEnv applies the input environment variables (SBATCH_PARTITION,
// SBATCH_TIMELIMIT..., srun's SLURM_NTASKS, SLURM_JOB_ID..., salloc's
// SALLOC_*), in the command's order; srun and salloc read them before the
// command line. A flag variable counts as set when empty, "yes" or a
// non-zero number, and resets the option otherwise.
func (p *Parser) ParseEnv() error {
	for _, e := range p.envs {
		v, ok := p.lookupEnv(e.name)
		if !ok {
			continue
		}
		d := p.defByID(e.id)
		if d == nil {
			continue
		}
		has := true
		switch d.arg {
		case noArgument:
			if !envFlagTrue(v) {
				if d.reset != nil {
					d.reset(p.opts)
				}
				delete(p.opts.Sources, d.id)
				continue
			}
		case optionalArgument:
			has = v != ""
		}
		if err := p.apply(d, v, has, FromEnv); err != nil {
			return err
		}
	}
	return nil
}

// envFlagTrue is how Slurm reads a flag option from the environment.
func envFlagTrue(v string) bool {
	if v == "" || strings.EqualFold(v, "yes") {
		return true
	}
	n, rest, ok := cStrtol(v)
	return ok && n != 0 && rest == ""
}

func (p *Parser) def(sp *spec) *optDef {
	for _, d := range p.defs {
		if &d.spec == sp {
			return d
		}
	}
	return nil
}

func (p *Parser) defByID(id string) *optDef {
	for _, d := range p.defs {
		if d.id == id {
			return d
		}
	}
	return nil
}

// resolvePath makes name absolute against dir, the way Slurm prefixes a
// relative path with the working directory (no cleaning).
func resolvePath(dir, name string) string {
	if name == "" || strings.HasPrefix(name, "/") {
		return name
	}
	return dir + "/" + name
}

func (p *Parser) readFile(name string) ([]byte, error) {
	name = resolvePath(p.cfg.Cwd, name)
	if p.cfg.ReadFile != nil {
		return p.cfg.ReadFile(name)
	}
	return os.ReadFile(name)
}

func (p *Parser) lookupUser(s string) (uint32, error) {
	if p.cfg.LookupUser != nil {
		return p.cfg.LookupUser(s)
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n), nil
	}
	u, err := user.Lookup(s)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(u.Uid, 10, 32)
	return uint32(n), err
}

func (p *Parser) lookupGroup(s string) (uint32, error) {
	if p.cfg.LookupGroup != nil {
		return p.cfg.LookupGroup(s)
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n), nil
	}
	g, err := user.LookupGroup(s)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(g.Gid, 10, 32)
	return uint32(n), err
}
