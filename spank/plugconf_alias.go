package spank

import (
	"io"
	"log/slog"

	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/spank/plugconf"
)

// Entry is one plugin line of plugstack.conf (package plugconf).
type Entry = plugconf.Entry

// Info is what a command needs to know of a plugin without running it
// (package plugconf).
type Info = plugconf.Info

// ReadConf reads plugstack.conf (see plugconf.ReadConf).
func ReadConf(path, pluginDir string, log *slog.Logger) ([]Entry, error) {
	return plugconf.ReadConf(path, pluginDir, log)
}

// Parse reads plugstack.conf lines (see plugconf.Parse).
func Parse(r io.Reader, name string, log *slog.Logger, include func(pattern string) ([]Entry, error)) ([]Entry, error) {
	return plugconf.Parse(r, name, log, include)
}

// ConfPaths finds plugstack.conf and PluginDir (see plugconf.ConfPaths).
func ConfPaths(sc *slurmconf.Config, slurmConf string) (plugstack, pluginDir string) {
	return plugconf.ConfPaths(sc, slurmConf)
}

// DefaultCache is where Describe keeps what it learnt, per user.
func DefaultCache() string { return plugconf.DefaultCache() }

// Apply returns env with changes made.
func Apply(env []string, changes []protocol.EnvChange) []string { return plugconf.Apply(env, changes) }

// OptionEnvName is the variable that carries a plugin option's value.
func OptionEnvName(plugin, option string) string { return plugconf.OptionEnvName(plugin, option) }

func index(env []string, name string) int { return plugconf.Index(env, name) }

// FindPlugin resolves a plugin path in pluginDir (see plugconf.FindPlugin).
func FindPlugin(path, dirs string) string { return plugconf.FindPlugin(path, dirs) }
