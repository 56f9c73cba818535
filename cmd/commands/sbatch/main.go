// Command sbatch is Slurm's sbatch: it submits a batch script. A program
// of its own that links this command's code only, so that it starts as a
// small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/sbatch"
)

func main() { cmdmain.Main("sbatch", sbatch.Run) }
