// Command sreport is Slurm's sreport: it makes reports from the accounting
// data. A program of its own that links this command's code only, so that
// it starts as a small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/sreport"
)

func main() { cmdmain.Main("sreport", sreport.Run) }
