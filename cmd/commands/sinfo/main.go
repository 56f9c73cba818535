// Command sinfo is Slurm's sinfo: it shows nodes and partitions. A program
// of its own that links this command's code only, so that it starts as a
// small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/sinfo"
)

func main() { cmdmain.Main("sinfo", sinfo.Run) }
