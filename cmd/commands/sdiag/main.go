// Command sdiag is Slurm's sdiag: the scheduler's and the controller's
// statistics. A program of its own that links this command's code only,
// so that it starts as a small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/sdiag"
)

func main() { cmdmain.Main("sdiag", sdiag.Run) }
