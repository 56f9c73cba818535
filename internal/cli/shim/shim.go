// Package shim runs the drop-in commands (sbatch, squeue, srun...) by the
// name a binary was invoked as. It is the client side alone: both the
// lean command binary (cmd/drover-client) and drover itself use it.
package shim

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"sort"
	"syscall"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/sacct"
	"github.com/droverhq/drover/internal/cli/sacctmgr"
	"github.com/droverhq/drover/internal/cli/salloc"
	"github.com/droverhq/drover/internal/cli/sbatch"
	"github.com/droverhq/drover/internal/cli/scancel"
	"github.com/droverhq/drover/internal/cli/scontrol"
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

// memoryLimit is the heap a drop-in command may grow to before the
// garbage collector runs at all (see Run).
const memoryLimit = 512 << 20

// Run runs command prog with args, as the binary invoked as prog does,
// and returns its exit status.
func Run(prog string, cmd Command, args []string) int {
	// A command lives for milliseconds and its garbage dies with it:
	// collecting as the heap doubles from 4 MB (Go's default) costs squeue
	// over 5,000 jobs a third of its time. The collector runs only near
	// the limit, so a listing of any size still fits; GOGC and GOMEMLIMIT
	// set by the caller win.
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(-1)
		debug.SetMemoryLimit(memoryLimit)
	}
	env, err := connect.Env(prog)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cmd(ctx, env, args)
}
