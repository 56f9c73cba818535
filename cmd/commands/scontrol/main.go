// Command scontrol is Slurm's scontrol: it views and changes the cluster's
// configuration and state. A program of its own that links this command's
// code only, so that it starts as a small program does (docs/DESIGN.md,
// "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/scontrol"
)

func main() { cmdmain.Main("scontrol", scontrol.New(scontrol.Options{Requeue: connect.Requeue})) }
