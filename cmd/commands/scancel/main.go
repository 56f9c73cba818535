// Command scancel is Slurm's scancel: it signals or cancels jobs. A
// program of its own that links this command's code only, so that it
// starts as a small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/scancel"
)

func main() { cmdmain.Main("scancel", scancel.Run) }
