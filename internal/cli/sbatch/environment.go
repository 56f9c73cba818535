package sbatch

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/jobopts"
)

// jobEnvironment builds the environment sent with the job. Like sbatch, it
// first adds to its own environment the variables it sets for the job and
// for slurmstepd, then applies --export to that environment, then adds the
// variables derived from the options:
//
//   - SLURM_HINT, SLURM_JOB_DEPENDENCY, SLURM_EXPORT_ENV from the options;
//   - SLURM_RLIMIT_<NAME> for each propagated resource limit (not with
//     --get-user-env), "U"-prefixed when chosen with --propagate: the node
//     applies them to the job and removes them, as slurmstepd does;
//   - SLURM_PRIO_PROCESS (the submitter's nice value), SLURM_SUBMIT_DIR,
//     SLURM_SUBMIT_HOST, and SLURM_UMASK unless already set (the node
//     applies and removes it).
//
// SLURM_STEPMGR, inherited when sbatch runs inside a job, is dropped. The
// job-side variables (SLURM_JOB_ID, SLURM_NODELIST...) are the node's to
// set.
func (c *cmd) jobEnvironment(comps []*jobopts.Options, own *jobopts.Environ) *jobopts.Environ {
	opts := comps[0]
	own.Unset("SLURM_STEPMGR")
	for _, v := range opts.EnvVars {
		own.Set(v.Name, v.Value)
	}
	if !opts.GetUserEnv {
		names, user := opts.PropagatedLimits()
		for _, n := range names {
			cur, ok := c.proc.rlimit(n)
			if !ok {
				continue
			}
			v := strconv.FormatUint(cur, 10)
			if user {
				v = "U" + v
			}
			own.Set("SLURM_RLIMIT_"+n, v)
		}
	}
	if nice, ok := c.proc.nice(); ok {
		own.Set("SLURM_PRIO_PROCESS", strconv.Itoa(nice))
	}
	own.Set("SLURM_SUBMIT_DIR", c.env.Cwd)
	own.Set("SLURM_SUBMIT_HOST", c.env.Hostname)
	if _, ok := own.Lookup("SLURM_UMASK"); !ok {
		if m, ok := c.proc.umask(); ok {
			own.Set("SLURM_UMASK", fmt.Sprintf("0%d%d%d", (m>>6)&7, (m>>3)&7, m&7))
		}
	}
	if exp := opts.Export.Val; opts.Export.Set && !strings.EqualFold(exp, "ALL") {
		// The job's srun steps follow the same --export unless told
		// otherwise (sbatch's _opt_verify; srun ignores ALL, its default).
		if _, ok := own.Lookup("SLURM_EXPORT_ENV"); !ok {
			own.Set("SLURM_EXPORT_ENV", exp)
		}
	}
	jobEnv := opts.ExportEnvironment(own)
	if len(comps) == 1 {
		opts.AddJobEnv(jobEnv)
		return jobEnv
	}
	// A heterogeneous job's components describe themselves under
	// SLURM_<NAME>_HET_GROUP_n and the older _PACK_GROUP_n
	// (env_array_overwrite_het_fmt).
	for i, o := range comps {
		own := jobopts.NewEnviron(nil)
		o.AddJobEnv(own)
		for _, kv := range own.List() {
			k, v, _ := strings.Cut(kv, "=")
			if !strings.HasPrefix(k, "SLURM_") {
				jobEnv.Add(k, v)
				continue
			}
			n := strconv.Itoa(i)
			jobEnv.Set(k+"_PACK_GROUP_"+n, v)
			jobEnv.Set(k+"_HET_GROUP_"+n, v)
		}
	}
	return jobEnv
}
