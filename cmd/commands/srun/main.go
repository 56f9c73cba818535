// Command srun is Slurm's srun: it runs parallel tasks, in an allocation
// or making one. A program of its own that links this command's code only,
// so that it starts as a small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/srun"
)

func main() { cmdmain.Main("srun", srun.Run) }
