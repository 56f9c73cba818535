// Command sprio is Slurm's sprio: it shows the factors of pending jobs'
// priorities. A program of its own that links this command's code only, so
// that it starts as a small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/sprio"
)

func main() { cmdmain.Main("sprio", sprio.Run) }
