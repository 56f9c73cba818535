// Command sacctmgr is Slurm's sacctmgr: it views and changes the
// accounting database (accounts, users, associations, QOS). A program of
// its own that links this command's code only, so that it starts as a
// small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/sacctmgr"
)

func main() { cmdmain.Main("sacctmgr", sacctmgr.Run) }
