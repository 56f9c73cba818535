// Command drover is Drover's one binary: invoked as sbatch, squeue, ... it
// is that command; otherwise its subcommands run the daemons.
package main

import (
	"os"

	"github.com/droverhq/drover/internal/drovercmd"
)

func main() {
	os.Exit(drovercmd.Main(os.Args))
}
