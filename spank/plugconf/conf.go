package plugconf

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/droverhq/drover/internal/slurmconf"
)

// ConfPaths finds plugstack.conf (PlugStackConfig, else beside
// slurm.conf, Slurm's default) and the folders relative plugin paths are
// looked up in (PluginDir, else the folders that hold the plugins shipped
// with Drover, ShippedDirs).
func ConfPaths(sc *slurmconf.Config, slurmConf string) (plugstack, pluginDir string) {
	plugstack = filepath.Join(filepath.Dir(slurmConf), "plugstack.conf")
	if v, ok := sc.Value("PlugStackConfig"); ok && v != "" {
		plugstack = v
	}
	if v, ok := sc.Value("PluginDir"); ok && v != "" {
		return plugstack, v
	}
	return plugstack, strings.Join(ShippedDirs(), ":")
}

// ShippedDirs are the folders of the plugin programs that come with
// Drover: the running program's own (a build tree, `drover dev`, a
// tarball) and ../libexec/drover beside it, where the packages put them
// (/usr/sbin/drover, /usr/libexec/drover/drover-spank-nccl...).
func ShippedDirs() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	dir := filepath.Dir(exe)
	return []string{dir, filepath.Join(filepath.Dir(dir), "libexec", "drover")}
}
