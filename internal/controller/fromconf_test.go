package controller_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/slurmconf"
)

func TestConfigDependencyParameters(t *testing.T) {
	for params, want := range map[string]bool{
		"": false,
		"DependencyParameters=kill_invalid_depend":                          true,
		"DependencyParameters=disable_remote_singleton,KILL_INVALID_DEPEND": true,
		"DependencyParameters=max_depend_depth=10":                          false,
	} {
		path := filepath.Join(t.TempDir(), "slurm.conf")
		text := "ClusterName=c\nSlurmctldHost=h\n" + params + "\nNodeName=n1 CPUs=8\nPartitionName=p Nodes=n1 Default=YES\n"
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := slurmconf.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := controller.ConfigFromSlurm(sc, path)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.KillInvalidDepend != want {
			t.Errorf("%q: KillInvalidDepend %v, want %v", params, cfg.KillInvalidDepend, want)
		}
	}
}
