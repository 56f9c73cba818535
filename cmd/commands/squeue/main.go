// Command squeue is Slurm's squeue: it shows the jobs in the queue. A
// program of its own that links this command's code only, so that it
// starts as a small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/squeue"
)

func main() { cmdmain.Main("squeue", squeue.Run) }
