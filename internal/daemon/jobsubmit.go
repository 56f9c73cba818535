package daemon

import (
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/droverhq/drover/internal/jobsubmit"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/plugins/host"
	"github.com/droverhq/drover/spank/plugconf"
)

// jobSubmitChain starts slurm.conf's JobSubmitPlugins: each name is a
// program, a path or looked up in PluginDir as NAME or
// drover-job-submit-NAME. A plugin that does not start stops the
// controller, as slurmctld stops on a job_submit plugin it cannot load.
func jobSubmitChain(sc *slurmconf.Config, confPath string, logger *slog.Logger) (*jobsubmit.Chain, error) {
	v, _ := sc.Value("JobSubmitPlugins")
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	_, dirs := plugconf.ConfPaths(sc, confPath)
	var plugins []jobsubmit.Plugin
	fail := func(err error) (*jobsubmit.Chain, error) {
		for _, p := range plugins {
			p.Close()
		}
		return nil, err
	}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		path, ok := findProgram(name, dirs)
		if !ok {
			return fail(fmt.Errorf("JobSubmitPlugins: no program %s or drover-job-submit-%s in PluginDir %s", name, name, dirs))
		}
		p := host.OpenJobSubmit(host.Spec{Path: path, Name: "job_submit/" + name, Logger: logger})
		plugins = append(plugins, p)
		if err := p.Start(); err != nil {
			return fail(fmt.Errorf("JobSubmitPlugins: %w", err))
		}
		logger.Info("job_submit plugin loaded", "plugin", name, "path", path)
	}
	return jobsubmit.New(plugins...), nil
}

// findProgram resolves a plugin name: a path as it is, else NAME or
// drover-job-submit-NAME in the colon-separated dirs.
func findProgram(name, dirs string) (string, bool) {
	candidates := []string{name}
	if !strings.ContainsRune(name, '/') {
		candidates = append(candidates, "drover-job-submit-"+name)
	}
	for _, c := range candidates {
		p := plugconf.FindPlugin(c, dirs)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && (strings.ContainsRune(name, '/') || p != c) {
			return p, true
		}
	}
	return "", false
}

// sweepPluginSockets removes the plugin socket folders that daemons of
// this host killed with SIGKILL left in the temporary folder.
func sweepPluginSockets(logger *slog.Logger) {
	if n := host.SweepSocketDirs(""); n > 0 {
		logger.Info("removed plugin socket folders of daemons that are gone", "count", n)
	}
}
