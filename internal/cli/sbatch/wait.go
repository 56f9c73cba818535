package sbatch

import (
	"context"
	"time"

	"github.com/droverhq/drover/internal/cli/readmodel"
)

// maxWaitSleep caps the polling interval of --wait (Slurm's
// MAX_WAIT_SLEEP_TIME).
const maxWaitSleep = 32 * time.Second

// errInvalidJobID is ESLURM_INVALID_JOB_ID.
const errInvalidJobID = 2017

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
		body, err := readmodel.GetJob(ctx, c.env.Client, uint64(jobID), readmodel.JobsDefault)
		if err != nil {
			c.errorf("Currently unable to load job state information, retrying: %v", readmodel.ClientError(err))
			continue
		}
		if len(body.Errors) > 0 {
			if body.Errors[0].Number == errInvalidJobID {
				c.errorf("Job %d no longer found and exit code not found", jobID)
				return ec
			}
			msg := body.Errors[0].Error
			if msg == "" {
				msg = "Unspecified error"
			}
			c.errorf("Currently unable to load job state information, retrying: %s", msg)
			continue
		}
		complete := true
		for _, j := range body.Records {
			if !j.State.IsFinished() {
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
func exitStatus(ec readmodel.ExitCode) int {
	if ec.Signaled {
		return 1
	}
	status, _ := ec.WaitPair()
	return int(status)
}
