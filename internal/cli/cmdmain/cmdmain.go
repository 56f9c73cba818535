// Package cmdmain runs one drop-in command as a program: the few lines
// every command's main shares. Each command is a binary of its own
// (cmd/commands/NAME), linking that command's code only, so that it
// starts as a small program does; drover itself runs them all by name
// through package shim.
package cmdmain

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/connect"
)

// memoryLimit is the heap a drop-in command may grow to before the
// garbage collector runs at all (see Run).
const memoryLimit = 512 << 20

// Main runs cmd as the program prog with the process's arguments and
// exits with its status.
func Main(prog string, cmd clienv.Command) {
	os.Exit(Run(prog, cmd, os.Args[1:]))
}

// Run runs command prog with args, as the binary invoked as prog does,
// and returns its exit status.
func Run(prog string, cmd clienv.Command, args []string) int {
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
	if !actsOnSignals[prog] {
		// Killed as Slurm's C commands are, by the signal itself and
		// silently: an scontrol requeue run from the job it requeues
		// gets the job's SIGTERM and must not print that its request
		// was cut short.
		return cmd(context.Background(), env, args)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cmd(ctx, env, args)
}

// actsOnSignals are the commands that do something on an interrupt: srun
// and salloc revoke a pending allocation and pass signals to their
// tasks, sbatch --wait stops waiting. The others die by it.
var actsOnSignals = map[string]bool{"srun": true, "salloc": true, "sbatch": true}
