package sbatch

import (
	"github.com/droverhq/drover/internal/arrayspec"
	"github.com/droverhq/drover/internal/slurmerr"
)

// maxArraySizeLimit is the largest MaxArraySize slurm.conf accepts. sbatch
// cannot know the cluster's own limit, which the controller enforces; it
// only refuses expressions that no configuration would accept.
const maxArraySizeLimit = 4000001

// checkArray refuses an --array expression no controller would accept,
// with the error slurmctld gives for it ("Invalid job array
// specification"), without a round trip.
func checkArray(spec string) error {
	if _, err := arrayspec.Parse(spec, maxArraySizeLimit); err != nil {
		return slurmerr.Sentinel(slurmerr.InvalidArray)
	}
	return nil
}
