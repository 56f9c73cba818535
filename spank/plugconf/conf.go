package plugconf

import (
	"os"
	"path/filepath"

	"github.com/droverhq/drover/internal/slurmconf"
)

// ConfPaths finds plugstack.conf (PlugStackConfig, else beside
// slurm.conf, Slurm's default) and the folders relative plugin paths are
// looked up in (PluginDir, else the folder of the running program, which
// holds the plugins shipped with Drover).
func ConfPaths(sc *slurmconf.Config, slurmConf string) (plugstack, pluginDir string) {
	plugstack = filepath.Join(filepath.Dir(slurmConf), "plugstack.conf")
	if v, ok := sc.Value("PlugStackConfig"); ok && v != "" {
		plugstack = v
	}
	if v, ok := sc.Value("PluginDir"); ok && v != "" {
		return plugstack, v
	}
	if exe, err := os.Executable(); err == nil {
		pluginDir = filepath.Dir(exe)
	}
	return plugstack, pluginDir
}
