package plugconf

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/slurmconf"
)

// Without PluginDir, plugins are looked up beside the running program
// and in ../libexec/drover, where the packages install them; PluginDir
// replaces both.
func TestConfPathsPluginDir(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(exe)
	_, got := ConfPaths(&slurmconf.Config{}, "/etc/slurm/slurm.conf")
	want := dir + ":" + filepath.Join(filepath.Dir(dir), "libexec", "drover")
	if got != want {
		t.Errorf("plugin folders %q, want %q", got, want)
	}

	libexec := filepath.Join(t.TempDir(), "libexec", "drover")
	if err := os.MkdirAll(libexec, 0o755); err != nil {
		t.Fatal(err)
	}
	plugin := filepath.Join(libexec, "drover-spank-x")
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p := FindPlugin("drover-spank-x", "/nonexistent:"+libexec); p != plugin {
		t.Errorf("FindPlugin: %q, want %q", p, plugin)
	}

	sc, err := slurmconf.Parse(strings.NewReader("ClusterName=c\nSlurmctldHost=h\nPluginDir=/opt/plugins\n"), "slurm.conf")
	if err != nil {
		t.Fatal(err)
	}
	if _, got := ConfPaths(sc, "/etc/slurm/slurm.conf"); got != "/opt/plugins" {
		t.Errorf("with PluginDir: %q", got)
	}
}
