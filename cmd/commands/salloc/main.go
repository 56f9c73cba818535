// Command salloc is Slurm's salloc: it obtains an allocation and runs a
// command in it. A program of its own that links this command's code only,
// so that it starts as a small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/salloc"
)

func main() { cmdmain.Main("salloc", salloc.Run) }
