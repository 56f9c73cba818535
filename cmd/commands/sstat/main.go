// Command sstat is Slurm's sstat: it shows the usage of running jobs'
// steps. A program of its own that links this command's code only, so that
// it starts as a small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/sstat"
)

func main() { cmdmain.Main("sstat", sstat.Run) }
