// Command drover-client is Drover's commands alone (sbatch, squeue, srun,
// scontrol...): the client side, without the daemons' code, so that a
// command starts as a small program does. Invoked under a command's name
// (a link, as `drover install-shims` makes) it is that command;
// `drover-client COMMAND ARGS...` runs one by name.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/droverhq/drover/internal/cli/shim"
)

func main() {
	prog := filepath.Base(os.Args[0])
	args := os.Args[1:]
	if _, ok := shim.Lookup(prog); !ok && len(args) > 0 {
		prog, args = args[0], args[1:]
	}
	cmd, ok := shim.Lookup(prog)
	if !ok {
		fmt.Fprintf(os.Stderr, "usage: drover-client COMMAND [ARGS...], or run it as one of: %s\n", strings.Join(shim.Names(), " "))
		os.Exit(2)
	}
	os.Exit(shim.Run(prog, cmd, args))
}
