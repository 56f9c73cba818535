// Package plugopts gives sbatch, srun and salloc the options their
// SPANK-like plugins register, and passes the values the user gave on to
// the job and its steps as Slurm does, in _SLURM_SPANK_OPTION_*
// variables that the node daemons' launch hooks read.
package plugopts

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/jobopts"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/spank/plugconf"
)

// Host runs plugin programs for the commands. The drover binary sets it
// (package plugopts/hosted); the commands' own programs (cmd/commands)
// link no plugin host and leave it nil: a command that must run a
// plugin is then handed to drover.
var Host interface {
	// Describe is what the plugins of entries offer, from the cache or
	// by starting the changed ones.
	Describe(ctx context.Context, entries []plugconf.Entry, cacheFile string, timeout time.Duration, log *slog.Logger) ([]plugconf.Info, error)
	// Load starts the plugins of entries.
	Load(ctx context.Context, entries []plugconf.Entry, timeout time.Duration, log *slog.Logger) (Stack, error)
}

// Stack is the running plugins of a command.
type Stack interface {
	Run(ctx context.Context, hook protocol.Hook) ([]protocol.EnvChange, error)
	Close()
}

// describeTimeout bounds starting a plugin to learn its options.
const describeTimeout = 10 * time.Second

// Plugins are what the plugins in plugstack.conf offer the command.
type Plugins struct {
	infos []plugconf.Info
	// stdin is what the command read of its standard input before its
	// plugins' stages (sbatch's script), for drover to read again if the
	// command is handed over then.
	stdin []byte
}

// ReadStdin records what the command read of its standard input: a
// command handed to drover once its options are known (Start) gives it
// drover to read again.
func (ps *Plugins) ReadStdin(data []byte) {
	if ps != nil {
		ps.stdin = data
	}
}

// Load reads plugstack.conf (from the slurm.conf at SLURM_CONF or the
// default path) once for the command: what each plugin offers comes from
// the per-user cache, or from starting a changed plugin once. No
// plugstack.conf, or one without plugins, gives none.
func Load(ctx context.Context, lookupEnv func(string) (string, bool)) (*Plugins, error) {
	infos, err := describe(ctx, lookupEnv)
	if err != nil {
		return nil, err
	}
	return &Plugins{infos: infos}, nil
}

// Options are the plugins' command-line options.
func (ps *Plugins) Options() []jobopts.PluginOption {
	if ps == nil {
		return nil
	}
	var out []jobopts.PluginOption
	for _, in := range ps.infos {
		for _, o := range in.Options {
			out = append(out, jobopts.PluginOption{Plugin: in.Name, Name: o.Name, ArgInfo: o.ArgInfo, Usage: o.Usage, HasArg: o.HasArg})
		}
	}
	return out
}

// describe is what the plugins in plugstack.conf offer. Without a Host,
// a plugin the cache does not know, or one with stages a command runs,
// hands the command to drover (handOver).
func describe(ctx context.Context, lookupEnv func(string) (string, bool)) ([]plugconf.Info, error) {
	path, ok := lookupEnv("SLURM_CONF")
	if !ok || path == "" {
		path = clienv.DefaultConfPath()
	}
	sc, err := slurmconf.LoadShared(path)
	if err != nil {
		// The command reports an unreadable slurm.conf where it needs
		// the controller.
		return nil, nil
	}
	conf, dirs := plugconf.ConfPaths(sc, path)
	if _, err := os.Stat(conf); err != nil {
		return nil, nil
	}
	quiet := slog.New(slog.DiscardHandler)
	entries, err := plugconf.ReadConf(conf, dirs, quiet)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	if Host != nil {
		return Host.Describe(ctx, entries, plugconf.DefaultCache(), describeTimeout, quiet)
	}
	known, missing := plugconf.Cached(entries, plugconf.DefaultCache())
	// A plugin whose stages run only for jobs that use its options
	// (OnlyWithOptions, as the container plugin) is known to need a
	// host only once the options are read: Start hands over then.
	runs := slices.ContainsFunc(known, func(in plugconf.Info) bool {
		return !in.OnlyWithOptions && slices.ContainsFunc(localStages, in.Has)
	})
	if len(missing) > 0 || runs {
		return nil, handOver(nil)
	}
	return known, nil
}

// handOver runs the command again as drover, which can run plugins: it
// is the same program with the plugin host linked, beside this one.
// stdin, when the command read its standard input already, is what it
// read: drover reads it again from an in-memory file. It returns only if
// that fails.
func handOver(stdin []byte) error {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return fmt.Errorf("plugstack.conf names plugins this command must run: %w", err)
	}
	drover := filepath.Join(filepath.Dir(exe), "drover")
	if drover == exe {
		return errors.New("plugstack.conf names plugins this command must run, and no plugin host is linked")
	}
	if stdin != nil {
		if err := replaceStdin(stdin); err != nil {
			return fmt.Errorf("plugstack.conf names plugins this command must run: %w", err)
		}
	}
	if err := syscall.Exec(drover, os.Args, os.Environ()); err != nil {
		return fmt.Errorf("plugstack.conf names plugins this command must run, and %s cannot run them: %w", drover, err)
	}
	return nil
}

// Env is the variables that carry the given option values.
func Env(values []jobopts.PluginValue) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		out = append(out, plugconf.OptionEnvName(v.Plugin, v.Name)+"="+v.Value)
	}
	return out
}

// Local runs the plugins' stages in a command (Slurm's local context in
// srun, allocator in sbatch and salloc), starting only the plugins that
// implement one of them.
type Local struct {
	stack   Stack
	context string
	argv    []string
}

// localStages are the stages a command may call.
var localStages = []string{protocol.StageInit, protocol.StageInitPostOpt, protocol.StageLocalUserInit, protocol.StageExit}

// Start runs init and init_post_opt, once the command's options are
// read, in context (protocol.ContextLocal or ContextAllocator), and
// returns env with what they set. No plugin with such stages gives a nil
// *Local and env as it was. A required plugin's failure is the error.
func (ps *Plugins) Start(ctx context.Context, context string, argv, env []string) (*Local, []string, error) {
	if ps == nil {
		return nil, env, nil
	}
	var entries []plugconf.Entry
	for _, in := range ps.infos {
		if slices.ContainsFunc(localStages, in.Has) && (!in.OnlyWithOptions || in.Given(env)) {
			entries = append(entries, in.Entry)
		}
	}
	if len(entries) == 0 {
		return nil, env, nil
	}
	if Host == nil {
		// Only plugins used through their options are left (describe
		// handed the others over): this command uses one.
		return nil, env, handOver(ps.stdin)
	}
	stack, err := Host.Load(ctx, entries, describeTimeout, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, env, err
	}
	l := &Local{stack: stack, context: context, argv: argv}
	for _, stage := range []string{protocol.StageInit, protocol.StageInitPostOpt} {
		if env, err = l.run(ctx, stage, 0, 0, env); err != nil {
			stack.Close()
			return nil, env, err
		}
	}
	return l, env, nil
}

// UserInit runs local_user_init (srun, once its job and step exist).
func (l *Local) UserInit(ctx context.Context, jobID, stepID uint32, env []string) ([]string, error) {
	if l == nil {
		return env, nil
	}
	return l.run(ctx, protocol.StageLocalUserInit, jobID, stepID, env)
}

// Exit runs the exit stage and stops the plugins.
func (l *Local) Exit(ctx context.Context, jobID uint32, env []string) {
	if l == nil {
		return
	}
	_, _ = l.run(ctx, protocol.StageExit, jobID, 0, env)
	l.stack.Close()
}

func (l *Local) run(ctx context.Context, stage string, jobID, stepID uint32, env []string) ([]string, error) {
	changes, err := l.stack.Run(ctx, protocol.Hook{
		Stage: stage, Context: l.context, JobID: jobID, StepID: stepID,
		UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), Argv: l.argv, Env: env,
	})
	if err != nil {
		return env, err
	}
	return plugconf.Apply(env, changes), nil
}

// replaceStdin makes standard input an in-memory file holding data, read
// from its start.
func replaceStdin(data []byte) error {
	fd, err := unix.MemfdCreate("stdin", unix.MFD_CLOEXEC)
	if err != nil {
		return fmt.Errorf("memfd for standard input: %w", err)
	}
	f := os.NewFile(uintptr(fd), "stdin")
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("memfd for standard input: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return fmt.Errorf("memfd for standard input: %w", err)
	}
	if err := unix.Dup2(fd, 0); err != nil {
		return fmt.Errorf("standard input: %w", err)
	}
	return nil
}
