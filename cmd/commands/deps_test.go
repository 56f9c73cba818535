// Package commands holds the drop-in commands' programs, one folder
// each (sbatch, squeue, srun...): see internal/cli/cmdmain.
package commands

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/cli/shim"
)

// The commands' binaries link the client side only: none of the
// daemons' packages (controller, scheduler, state, accounting store,
// REST server, bridges, node daemon) nor the libraries only they use.
func TestNoServerCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/droverhq/drover/cmd/commands/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := []string{
		"github.com/droverhq/drover/internal/controller",
		"github.com/droverhq/drover/internal/sched",
		"github.com/droverhq/drover/internal/state",
		"github.com/droverhq/drover/internal/acctdb",
		"github.com/droverhq/drover/internal/restapi",
		"github.com/droverhq/drover/internal/restd",
		"github.com/droverhq/drover/internal/nodeagent",
		"github.com/droverhq/drover/internal/daemon",
		"github.com/droverhq/drover/internal/proctrack",
		"github.com/droverhq/drover/internal/drovercmd",
		"github.com/containerd/cgroups",
		"go.etcd.io/bbolt",
		"modernc.org/sqlite",
		"github.com/jackc/pgx",
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") {
				t.Errorf("the commands link %s", dep)
			}
		}
		// The bridges translate for the server; the commands read the
		// generated client (limitwire is wire helpers both share).
		if strings.HasPrefix(dep, "github.com/droverhq/drover/bridge/") && !strings.HasSuffix(dep, "/limitwire") {
			t.Errorf("the commands link %s", dep)
		}
	}
}

// Every command drover runs by name has a program of its own here, and
// every program here is one of them: install-shims links one to the
// other.
func TestOneProgramPerCommand(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	if names := shim.Names(); !slices.Equal(dirs, names) {
		t.Errorf("cmd/commands holds %v; the commands are %v", dirs, names)
	}
}
