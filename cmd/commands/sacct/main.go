// Command sacct is Slurm's sacct: it shows accounting data for jobs and
// their steps. A program of its own that links this command's code only,
// so that it starts as a small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/sacct"
)

func main() { cmdmain.Main("sacct", sacct.Run) }
