// Command seff is Slurm's seff: it reports how efficiently a finished job
// used what it was given. A program of its own that links this command's
// code only, so that it starts as a small program does (docs/DESIGN.md,
// "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/seff"
)

func main() { cmdmain.Main("seff", seff.Run) }
