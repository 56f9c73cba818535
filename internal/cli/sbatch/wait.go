package sbatch

import (
	"context"
	"slices"
	"strconv"
	"time"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// maxWaitSleep caps the polling interval of --wait (Slurm's
// MAX_WAIT_SLEEP_TIME).
const maxWaitSleep = 32 * time.Second

// errInvalidJobID is ESLURM_INVALID_JOB_ID.
const errInvalidJobID = 2017

// finishedStates are the base job states Slurm's IS_JOB_FINISHED accepts.
var finishedStates = []v0044.V0044JobInfoJobStateItem{
	v0044.V0044JobInfoJobStateItemCOMPLETED, v0044.V0044JobInfoJobStateItemCANCELLED,
	v0044.V0044JobInfoJobStateItemFAILED, v0044.V0044JobInfoJobStateItemTIMEOUT,
	v0044.V0044JobInfoJobStateItemNODEFAIL, v0044.V0044JobInfoJobStateItemPREEMPTED,
	v0044.V0044JobInfoJobStateItemBOOTFAIL, v0044.V0044JobInfoJobStateItemDEADLINE,
	v0044.V0044JobInfoJobStateItemOUTOFMEMORY,
}

// wait implements --wait: poll the job until every record of it (all tasks
// of an array) has finished, and return the highest exit status, 1 for a
// job killed by a signal. Polling starts every 2 seconds and slows down to
// every 32, as sbatch's does.
func (c *cmd) wait(ctx context.Context, jobID int32) int {
	interval := 2 * time.Second
	ec := 0
	for {
		if err := c.proc.sleep(ctx, interval); err != nil {
			c.errorf("%v", err)
			return c.errorExit
		}
		if interval < maxWaitSleep {
			interval = min(interval*4, maxWaitSleep)
		}
		res, err := c.env.Client.SlurmV0044GetJob(ctx, v0044.SlurmV0044GetJobParams{JobID: strconv.Itoa(int(jobID))})
		if err != nil {
			c.errorf("Currently unable to load job state information, retrying: %v", err)
			continue
		}
		var body v0044.V0044OpenapiJobInfoResp
		switch r := res.(type) {
		case *v0044.V0044OpenapiJobInfoResp:
			body = *r
		case *v0044.V0044OpenapiJobInfoRespStatusCode:
			body = r.Response
		}
		if len(body.Errors) > 0 {
			if body.Errors[0].ErrorNumber.Or(0) == errInvalidJobID {
				c.errorf("Job %d no longer found and exit code not found", jobID)
				return ec
			}
			c.errorf("Currently unable to load job state information, retrying: %s", body.Errors[0].Error.Or("Unspecified error"))
			continue
		}
		complete := true
		for _, j := range body.Jobs {
			if !slices.ContainsFunc(j.JobState, func(s v0044.V0044JobInfoJobStateItem) bool {
				return slices.Contains(finishedStates, s)
			}) {
				complete = false
				continue
			}
			ec = max(ec, exitStatus(j.ExitCode))
		}
		if complete {
			return ec
		}
	}
}

// exitStatus is WEXITSTATUS of a finished job's exit code, or 1 when the
// job did not exit normally (killed by a signal, core dump).
func exitStatus(ec v0044.OptV0044ProcessExitCodeVerbose) int {
	if !ec.Set {
		return 0
	}
	for _, s := range ec.Value.Status {
		if s == v0044.V0044ProcessExitCodeVerboseStatusItemSIGNALED || s == v0044.V0044ProcessExitCodeVerboseStatusItemCOREDUMPED {
			return 1
		}
	}
	rc := ec.Value.ReturnCode
	if rc.Set && rc.Value.Number.Set {
		return int(rc.Value.Number.Value) & 0xff
	}
	return 0
}
