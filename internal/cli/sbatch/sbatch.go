// Package sbatch is the drop-in sbatch command: it reads a batch script,
// applies its "#SBATCH" directives, the SBATCH_* environment variables and
// the command line (in that order of increasing precedence), and submits the
// job through slurmrestd's v0.0.44 API, printing what Slurm 25.11's sbatch
// prints.
package sbatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clusters"
	"github.com/droverhq/drover/internal/cli/jobopts"
	"github.com/droverhq/drover/internal/cli/plugopts"
	"github.com/droverhq/drover/internal/sbatchscript"
	v0044 "github.com/droverhq/drover/openapi/v0044"
	"github.com/droverhq/drover/plugins/protocol"
)

// Run is the sbatch command (a clienv.Command).
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	startNofileProbe()
	return run(ctx, env, args, hostProcess{})
}

// maxScriptSize is Slurm's MAX_BATCH_SCRIPT_SIZE.
const maxScriptSize = 512 * 1024 * 1024

// wrapHeader starts the script sbatch builds for --wrap.
const wrapHeader = "#!/bin/sh\n# This script was created by sbatch --wrap.\n\n"

// cmd holds one invocation's state.
type cmd struct {
	env       *clienv.Env
	proc      process
	prog      string
	errorExit int
	quiet     bool
}

func (c *cmd) errorf(format string, args ...any) {
	fmt.Fprintf(c.env.Stderr, "%s: error: "+format+"\n", append([]any{c.prog}, args...)...)
}

// exit prints an *jobopts.Exit and returns its status.
func (c *cmd) exit(err error) int {
	var e *jobopts.Exit
	if !errors.As(err, &e) {
		c.errorf("%v", err)
		return c.errorExit
	}
	io.WriteString(c.env.Stdout, e.Stdout)
	io.WriteString(c.env.Stderr, e.Stderr)
	return e.Code
}

func (c *cmd) getenv(k string) string {
	if c.env.Getenv == nil {
		return ""
	}
	return c.env.Getenv(k)
}

// environ returns the caller's environment as an ordered set.
func (c *cmd) environ() *jobopts.Environ {
	if c.env.Environ == nil {
		return jobopts.NewEnviron(nil)
	}
	return jobopts.NewEnviron(c.env.Environ())
}

func run(ctx context.Context, env *clienv.Env, args []string, proc process) int {
	c := &cmd{env: env, proc: proc, prog: env.Prog, errorExit: 1}
	if c.prog == "" {
		c.prog = "sbatch"
	}
	if v := c.getenv("SLURM_EXIT_ERROR"); v != "" {
		if n := atoi(v); n == 0 {
			c.errorf("SLURM_EXIT_ERROR has zero value")
		} else {
			c.errorExit = n
		}
	}
	own := c.environ()
	clock := time.Now
	if env.Now != nil {
		clock = env.Now
	}
	plugins, err := plugopts.Load(context.Background(), own.Lookup)
	if err != nil {
		c.errorf("%v", err)
		return 1
	}
	p := jobopts.NewSbatch(jobopts.Config{
		Prog:          c.prog,
		Now:           clock(),
		Cwd:           env.Cwd,
		UID:           env.User.UID,
		LookupEnv:     own.Lookup,
		ErrorExit:     c.errorExit,
		PluginOptions: plugins.Options(),
	})
	// First pass: options that act before the script is read. A ":"
	// operand ends a heterogeneous job's component on the command line.
	groups := [][]string{}
	rest := args
	var operands []string
	for {
		ops, err := p.ParseEarly(rest)
		if err != nil {
			return c.exit(err)
		}
		if len(ops) > 0 && ops[0] == ":" {
			groups = append(groups, rest[:len(rest)-len(ops)])
			rest = ops[1:]
			continue
		}
		groups = append(groups, rest)
		operands = ops
		break
	}
	opts := p.Options()
	c.quiet = opts.Quiet > 0
	if opts.Wrap.Set && len(operands) > 0 {
		c.errorf("Script arguments not permitted with --wrap option")
		return c.errorExit
	}

	src, code, ok := c.readScript(opts, operands)
	if !ok {
		return code
	}
	if src.fromStdin {
		plugins.ReadStdin(src.body)
	}

	// Second pass: directives, environment, command line.
	ds, err := sbatchscript.Scan(src.body, sbatchscript.Prefix, sbatchscript.LegacyPrefix)
	if err != nil {
		var se *sbatchscript.SyntaxError
		if errors.As(err, &se) {
			fmt.Fprintf(env.Stderr, "%s: fatal: %s\n", c.prog, se.Message(src.msgName))
			return jobopts.ExitFatal
		}
		c.errorf("%v", err)
		return c.errorExit
	}
	// "#SBATCH hetjob" lines split the directives into components too.
	dgroups := [][]string{nil}
	legacyWarned := false
	for _, d := range ds {
		if d.Separator {
			dgroups = append(dgroups, nil)
			continue
		}
		if d.Prefix == sbatchscript.LegacyPrefix && !legacyWarned {
			c.errorf("%s", sbatchscript.LegacyWarning)
			legacyWarned = true
		}
		dgroups[len(dgroups)-1] = append(dgroups[len(dgroups)-1], d.Args...)
	}
	// Each component reads its directives, the environment, then its
	// part of the command line; what it does not reset carries over to
	// the next (process_options_second_pass, once a component).
	var comps []*jobopts.Options
	for i := range max(len(groups), len(dgroups)) {
		if i > 0 {
			if p, err = p.NextComponent(); err != nil {
				return c.exit(err)
			}
		}
		if i < len(dgroups) {
			if err := p.ParseDirectives(dgroups[i]); err != nil {
				return c.exit(err)
			}
		}
		if err := p.ParseEnv(); err != nil {
			return c.exit(err)
		}
		if i < len(groups) {
			if err := p.ParseCommandLine(groups[i]); err != nil {
				return c.exit(err)
			}
		}
		if err := p.Finish(); err != nil {
			return c.exit(err)
		}
		comps = append(comps, p.Options())
	}
	for _, o := range comps {
		for _, w := range o.Warnings {
			fmt.Fprintf(env.Stderr, "%s: warning: %s\n", c.prog, w)
		}
	}
	if len(comps) > 1 && comps[0].Array != "" {
		c.errorf("Job arrays not supported with heterogeneous jobs")
		return c.errorExit
	}
	if opts.Array != "" {
		if err := checkArray(opts.Array); err != nil {
			c.errorf("Batch job submission failed: %v", err)
			return c.errorExit
		}
	}

	cluster := ""
	if opts.Clusters != "" {
		name, msgs, ok := clusters.Select(ctx, env.Client, opts.Clusters)
		for _, m := range msgs {
			c.errorf("%s", m)
		}
		if !ok {
			return 1
		}
		cluster = name
	}

	descs := make([]v0044.V0044JobDescMsg, len(comps))
	for i, o := range comps {
		descs[i] = o.JobDesc()
		if !descs[i].Name.Set {
			descs[i].Name = v0044.NewOptString(src.jobName)
		}
		if len(src.argv) > 0 {
			// Every component shows the script as its command.
			descs[i].Argv = src.argv
		}
	}
	desc := &descs[0]
	desc.Script = v0044.NewOptString(string(src.body))
	// The plugins' allocator stages see the job's environment, and what
	// they set goes with the job.
	local, jobEnv, err := plugins.Start(ctx, protocol.ContextAllocator, desc.Argv,
		append(c.jobEnvironment(comps, own).List(), plugopts.Env(opts.PluginValues)...))
	if err != nil {
		c.errorf("%v", err)
		return 1
	}
	// The other components run under the first's script, and take its
	// environment.
	desc.Environment = jobEnv

	jobID, code, ok := c.submit(ctx, descs, opts.Verbose > 0)
	local.Exit(ctx, uint32(max(jobID, 0)), jobEnv)
	if !ok {
		return code
	}
	if !c.quiet {
		switch {
		case opts.Parsable && cluster != "":
			fmt.Fprintf(env.Stdout, "%d;%s\n", jobID, cluster)
		case opts.Parsable:
			fmt.Fprintf(env.Stdout, "%d\n", jobID)
		case cluster != "":
			fmt.Fprintf(env.Stdout, "Submitted batch job %d on cluster %s\n", jobID, cluster)
		default:
			fmt.Fprintf(env.Stdout, "Submitted batch job %d\n", jobID)
		}
	}
	if opts.Wait {
		return c.wait(ctx, jobID)
	}
	return 0
}

// script is the batch script and what sbatch derives from where it came
// from.
type script struct {
	body []byte
	// jobName is the default job name: the script's base name, "wrap",
	// or "sbatch" for a script read from standard input.
	jobName string
	// msgName names the script in directive errors (base name or "stdin").
	msgName string
	// argv is the script path and its arguments, sent as the job's argv.
	argv []string
	// fromStdin says body was read from standard input.
	fromStdin bool
}

// readScript reads the whole script (callers may delete the file as soon as
// sbatch returns) and applies sbatch's checks to it.
func (c *cmd) readScript(opts *jobopts.Options, operands []string) (script, int, bool) {
	if opts.Wrap.Set {
		return script{
			body:    []byte(wrapHeader + opts.Wrap.Val + "\n"),
			jobName: "wrap",
			msgName: "stdin",
		}, 0, true
	}
	s := script{jobName: "sbatch", msgName: "stdin"}
	var err error
	switch {
	case len(operands) == 0 || operands[0] == "-":
		s.body, err = readAll(c.env.Stdin)
		s.argv, s.fromStdin = operands, true
	case operands[0] == "/dev/stdin":
		s.body, err = readAll(c.env.Stdin)
		s.argv, s.fromStdin = operands, true
		s.jobName, s.msgName = "stdin", "stdin"
	default:
		name := c.findScript(operands[0])
		s.argv = append([]string{name}, operands[1:]...)
		s.jobName = path.Base(name)
		s.msgName = s.jobName
		s.body, err = c.readFile(name)
		if err != nil {
			if errors.Is(err, errTooLarge) {
				fmt.Fprintf(c.env.Stderr, "%s: fatal: Script file %s is too large\n", c.prog, name)
				return script{}, jobopts.ExitFatal, false
			}
			c.errorf("Unable to open file %s", name)
			return script{}, c.errorExit, false
		}
	}
	if errors.Is(err, errTooLarge) {
		fmt.Fprintf(c.env.Stderr, "%s: fatal: Script from STDIN is too big, read %d > %d bytes.\n", c.prog, len(s.body), maxScriptSize)
		return script{}, jobopts.ExitFatal, false
	}
	if err != nil {
		c.errorf("Unable to read batch script from standard input: %v", err)
		return script{}, c.errorExit, false
	}
	if err := sbatchscript.Check(s.body); err != nil {
		var se *sbatchscript.ScriptError
		if errors.As(err, &se) {
			for _, l := range se.Lines() {
				c.errorf("%s", l)
			}
		}
		return script{}, c.errorExit, false
	}
	return s, 0, true
}

var errTooLarge = errors.New("script too large")

func readAll(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxScriptSize+1))
	if len(b) > maxScriptSize {
		return b, errTooLarge
	}
	return b, err
}

// findScript resolves the script operand as sbatch does: an absolute name
// is used as given, one starting with '.' is put after the working
// directory; another name is looked for in the working directory, then in
// $PATH, and replaced by the path found.
func (c *cmd) findScript(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	// "./job.sh" and "../job.sh" are taken from the working folder, the
	// path kept as written after it, as sbatch's search_path does: the
	// job's argv[0] (its Command) is then absolute.
	if strings.HasPrefix(name, ".") {
		return c.env.Cwd + "/" + name
	}
	dirs := []string{c.env.Cwd}
	for d := range strings.SplitSeq(c.getenv("PATH"), ":") {
		if d == "" {
			continue
		}
		if strings.HasPrefix(d, ".") {
			d = c.env.Cwd + "/" + d
		}
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		full := d + "/" + name
		if st, err := os.Stat(full); err == nil && !st.IsDir() {
			return full
		}
	}
	return name
}

// readFile reads the script file, relative names from the caller's
// working directory. A directory reads as an empty script, as it does for
// sbatch.
func (c *cmd) readFile(name string) ([]byte, error) {
	p := name
	if !strings.HasPrefix(p, "/") {
		p = c.env.Cwd + "/" + p
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, nil
	}
	if st.Size() > maxScriptSize {
		return nil, errTooLarge
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// atoi is C's atoi: leading blanks, an optional sign and the digits that
// follow; anything else reads as 0.
func atoi(s string) int {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(s[:end])
	return n
}
