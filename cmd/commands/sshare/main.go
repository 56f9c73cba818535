// Command sshare is Slurm's sshare: it shows the shares and usage of
// associations. A program of its own that links this command's code only,
// so that it starts as a small program does (docs/DESIGN.md, "Commands").
package main

import (
	"github.com/droverhq/drover/internal/cli/cmdmain"
	"github.com/droverhq/drover/internal/cli/sshare"
)

func main() { cmdmain.Main("sshare", sshare.Run) }
