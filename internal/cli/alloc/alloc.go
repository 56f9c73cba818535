// Package alloc obtains and releases a job allocation for the commands
// that run without a batch script, salloc and srun outside a job: POST
// /job/allocate, wait until the job runs, and release it when done, with
// the messages Slurm's allocation API prints.
package alloc

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/stepproto"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Granted is a running allocation.
type Granted struct {
	JobID uint32
	Job   v0044.V0044JobInfo
}

// Allocate asks for an allocation and waits until it runs. pending is
// called once the job id is known (salloc prints "Pending job allocation
// N"); while it waits it prints "job N queued and waiting for resources",
// and once granted "job N has been allocated resources". A refusal is
// printed as prog's error and returned as a non-zero status.
func Allocate(ctx context.Context, env *clienv.Env, prog string, desc v0044.V0044JobDescMsg, pending func(id uint32)) (Granted, int) {
	res, err := env.Client.SlurmV0044PostJobAllocate(ctx, v0044.NewOptV0044JobAllocReq(v0044.V0044JobAllocReq{Job: v0044.NewOptV0044JobDescMsg(desc)}))
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: Job submit/allocate failed: %v\n", prog, err)
		return Granted{}, 1
	}
	var id uint32
	switch r := res.(type) {
	case *v0044.V0044OpenapiJobAllocResp:
		id = uint32(r.JobID.Or(0))
	case *v0044.V0044OpenapiJobAllocRespStatusCode:
		msg := "Unspecified error"
		if len(r.Response.Errors) > 0 {
			msg = r.Response.Errors[0].Error.Or(msg)
		}
		fmt.Fprintf(env.Stderr, "%s: error: Job submit/allocate failed: %s\n", prog, msg)
		return Granted{}, 1
	default:
		fmt.Fprintf(env.Stderr, "%s: error: Job submit/allocate failed: unexpected answer\n", prog)
		return Granted{}, 1
	}
	if pending != nil {
		pending(id)
	}
	g, err := wait(ctx, env, prog, id)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		if ctx.Err() != nil {
			Release(id, 1)
		}
		return Granted{}, 1
	}
	return g, 0
}

// wait polls the job until it runs, quickly at first: most allocations
// are granted in the first scheduling cycle.
func wait(ctx context.Context, env *clienv.Env, prog string, id uint32) (Granted, error) {
	delay := 5 * time.Millisecond
	queued := false
	for {
		res, err := env.Client.SlurmV0044GetJob(ctx, v0044.SlurmV0044GetJobParams{JobID: strconv.FormatUint(uint64(id), 10)})
		if err != nil {
			return Granted{}, err
		}
		r, ok := res.(*v0044.V0044OpenapiJobInfoResp)
		if !ok || len(r.Jobs) == 0 {
			return Granted{}, fmt.Errorf("Job allocation %d has been revoked.", id)
		}
		j := r.Jobs[0]
		state := j.JobState
		switch {
		case slices.Contains(state, v0044.V0044JobInfoJobStateItemRUNNING):
			if queued {
				fmt.Fprintf(env.Stderr, "%s: job %d has been allocated resources\n", prog, id)
			}
			return Granted{JobID: id, Job: j}, nil
		case !slices.Contains(state, v0044.V0044JobInfoJobStateItemPENDING):
			return Granted{}, fmt.Errorf("Job allocation %d has been revoked.", id)
		}
		if !queued && delay >= 40*time.Millisecond {
			queued = true
			fmt.Fprintf(env.Stderr, "%s: job %d queued and waiting for resources\n", prog, id)
		}
		select {
		case <-ctx.Done():
			return Granted{}, fmt.Errorf("Job allocation %d has been revoked.", id)
		case <-time.After(delay):
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// Release ends an allocation with the command's exit code
// (slurm_complete_job).
func Release(id uint32, exitCode int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := strings.Replace(stepproto.PathComplete, "{job_id}", strconv.FormatUint(uint64(id), 10), 1) + "?exit_code=" + strconv.Itoa(exitCode)
	return connect.Call(ctx, "POST", path, nil, nil)
}

// Nodes is the job's node list as Slurm writes it ("n[1-2]").
func (g Granted) Nodes() string { return g.Job.Nodes.Or("") }
