package root

import (
	"sort"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/sacct"
	"github.com/droverhq/drover/internal/cli/sacctmgr"
	"github.com/droverhq/drover/internal/cli/salloc"
	"github.com/droverhq/drover/internal/cli/sbatch"
	"github.com/droverhq/drover/internal/cli/scancel"
	"github.com/droverhq/drover/internal/cli/scontrol"
	"github.com/droverhq/drover/internal/cli/seff"
	"github.com/droverhq/drover/internal/cli/sinfo"
	"github.com/droverhq/drover/internal/cli/sprio"
	"github.com/droverhq/drover/internal/cli/squeue"
	"github.com/droverhq/drover/internal/cli/sreport"
	"github.com/droverhq/drover/internal/cli/srun"
	"github.com/droverhq/drover/internal/cli/sshare"
	"github.com/droverhq/drover/internal/cli/sstat"
)

type shim = clienv.Command

// shims are the drop-in commands, by the name drover is invoked as.
var shims = map[string]shim{
	"sacct":    sacct.Run,
	"sacctmgr": sacctmgr.Run,
	"salloc":   salloc.Run,
	"sbatch":   sbatch.Run,
	"squeue":   squeue.Run,
	"scancel":  scancel.Run,
	"sinfo":    sinfo.Run,
	"sprio":    sprio.Run,
	"sshare":   sshare.Run,
	"srun":     srun.Run,
	"scontrol": scontrol.New(scontrol.Options{Requeue: connect.Requeue}),
	"seff":     seff.Run,
	"sstat":    sstat.Run,
	"sreport":  sreport.Run,
}

// ShimNames lists the drop-in commands, sorted.
func ShimNames() []string {
	out := make([]string, 0, len(shims))
	for n := range shims {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
