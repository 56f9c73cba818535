// Package shim runs the drop-in commands (sbatch, squeue, srun...) by the
// name a binary was invoked as: drover itself runs them so (each command's
// own program, cmd/commands/NAME, links that command alone).
package shim

import (
	"sort"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/sacct"
	"github.com/droverhq/drover/internal/cli/sacctmgr"
	"github.com/droverhq/drover/internal/cli/salloc"
	"github.com/droverhq/drover/internal/cli/sbatch"
	"github.com/droverhq/drover/internal/cli/scancel"
	"github.com/droverhq/drover/internal/cli/scontrol"
	"github.com/droverhq/drover/internal/cli/sdiag"
	"github.com/droverhq/drover/internal/cli/seff"
	"github.com/droverhq/drover/internal/cli/sinfo"
	"github.com/droverhq/drover/internal/cli/sprio"
	"github.com/droverhq/drover/internal/cli/squeue"
	"github.com/droverhq/drover/internal/cli/sreport"
	"github.com/droverhq/drover/internal/cli/srun"
	"github.com/droverhq/drover/internal/cli/sshare"
	"github.com/droverhq/drover/internal/cli/sstat"
)

// Command is one drop-in command.
type Command = clienv.Command

// commands are the drop-in commands, by the name they are invoked as.
var commands = map[string]Command{
	"sacct":    sacct.Run,
	"sacctmgr": sacctmgr.Run,
	"salloc":   salloc.Run,
	"sbatch":   sbatch.Run,
	"squeue":   squeue.Run,
	"scancel":  scancel.Run,
	"sinfo":    sinfo.Run,
	"sprio":    sprio.Run,
	"sshare":   sshare.Run,
	"srun":     srun.Run,
	"scontrol": scontrol.New(scontrol.Options{Requeue: connect.Requeue}),
	"sdiag":    sdiag.Run,
	"seff":     seff.Run,
	"sstat":    sstat.Run,
	"sreport":  sreport.Run,
}

// Names lists the drop-in commands, sorted.
func Names() []string {
	out := make([]string, 0, len(commands))
	for n := range commands {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the command called name.
func Lookup(name string) (Command, bool) {
	c, ok := commands[name]
	return c, ok
}

// Run runs command prog with args, as the binary invoked as prog does,
// and returns its exit status.
func Run(prog string, cmd Command, args []string) int {
	return cmdmain.Run(prog, cmd, args)
}
