package clienv

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFindConf: the installation's slurm.conf first, then the local
// default, then the configless cache, as Slurm's commands look.
func TestFindConf(t *testing.T) {
	root := t.TempDir()
	shimDir := filepath.Join(root, "bin")
	def := filepath.Join(root, "etc", "slurm.conf")
	cached := filepath.Join(root, "run", "slurm.conf")
	for _, d := range []string{shimDir, filepath.Dir(def), filepath.Dir(cached)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		if err := os.WriteFile(p, []byte("ClusterName=c\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step, want string) {
		t.Helper()
		if got := findConf(shimDir, def, cached); got != want {
			t.Errorf("%s: findConf = %s, want %s", step, got, want)
		}
	}
	check("nothing", def)
	write(cached)
	check("only the cache", cached)
	write(def)
	check("a local slurm.conf", def)
	write(filepath.Join(shimDir, ShimConf))
	check("the installation's", filepath.Join(shimDir, ShimConf))
}
