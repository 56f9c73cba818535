// Package plugopts gives sbatch, srun and salloc the options their
// SPANK-like plugins register, and passes the values the user gave on to
// the job and its steps as Slurm does, in _SLURM_SPANK_OPTION_*
// variables that the node daemons' launch hooks read.
package plugopts

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/droverhq/drover/internal/cli/jobopts"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/spank"
)

// describeTimeout bounds starting a plugin to learn its options.
const describeTimeout = 10 * time.Second

// Load reads plugstack.conf (from the slurm.conf at SLURM_CONF or the
// default path) and returns the plugins' options, learnt from the
// per-user cache or by starting each changed plugin once. No
// plugstack.conf, or one without plugins, gives none.
func Load(ctx context.Context, lookupEnv func(string) (string, bool)) ([]jobopts.PluginOption, error) {
	path, ok := lookupEnv("SLURM_CONF")
	if !ok || path == "" {
		path = "/etc/slurm/slurm.conf"
	}
	sc, err := slurmconf.Load(path)
	if err != nil {
		// The command reports an unreadable slurm.conf where it needs
		// the controller.
		return nil, nil
	}
	conf, dirs := spank.ConfPaths(sc, path)
	if _, err := os.Stat(conf); err != nil {
		return nil, nil
	}
	quiet := slog.New(slog.DiscardHandler)
	entries, err := spank.ReadConf(conf, dirs, quiet)
	if err != nil || len(entries) == 0 {
		return nil, err
	}
	infos, err := spank.Describe(ctx, entries, spank.DefaultCache(), describeTimeout, quiet)
	if err != nil {
		return nil, err
	}
	var out []jobopts.PluginOption
	for _, in := range infos {
		for _, o := range in.Options {
			out = append(out, jobopts.PluginOption{Plugin: in.Name, Name: o.Name, ArgInfo: o.ArgInfo, Usage: o.Usage, HasArg: o.HasArg})
		}
	}
	return out, nil
}

// Env is the variables that carry the given option values.
func Env(values []jobopts.PluginValue) []string {
	out := make([]string, 0, len(values))
	for _, v := range values {
		out = append(out, spank.OptionEnvName(v.Plugin, v.Name)+"="+v.Value)
	}
	return out
}
