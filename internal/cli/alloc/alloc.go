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
	stepproto "github.com/droverhq/drover/internal/step/proto"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Granted is a running allocation.
type Granted struct {
	JobID uint32
	Job   v0044.V0044JobInfo
}

// RevokedError reports an allocation that ended, or vanished, before it
// ran.
type RevokedError struct {
	JobID uint32
}

// Error is the line srun prints for it.
func (e *RevokedError) Error() string {
	return fmt.Sprintf("Job allocation %d has been revoked.", e.JobID)
}

// Allocate asks for an allocation and waits until it runs (Submit, then
// Wait). pending is called when the job has to wait, before "job N queued
// and waiting for resources" (salloc prints "Pending job allocation N"
// there); once granted it prints "job N has been allocated resources". A
// refusal, a revocation or the end of ctx is printed as prog's error and
// returned as a non-zero status; a request given up while it waits is
// withdrawn.
func Allocate(ctx context.Context, env *clienv.Env, prog string, desc v0044.V0044JobDescMsg, pending func(id uint32)) (Granted, int) {
	id, code := Submit(ctx, env, prog, desc)
	if code != 0 {
		return Granted{}, code
	}
	g, err := Wait(ctx, env, prog, id, pending)
	if err != nil {
		if ctx.Err() != nil {
			err = &RevokedError{JobID: id}
			Release(env, id, 1)
		}
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		return Granted{}, 1
	}
	return g, 0
}

// Submit asks for an allocation (POST /job/allocate) and returns the job
// id. What the job_submit plugins said is printed first, as the commands
// print job_submit_user_msg (at info level when granted, as errors when
// refused). A refusal is printed as prog's error ("Job submit/allocate
// failed" for salloc, "Unable to allocate resources" for srun) and
// returned as a non-zero status.
func Submit(ctx context.Context, env *clienv.Env, prog string, desc v0044.V0044JobDescMsg) (uint32, int) {
	return SubmitHet(ctx, env, prog, []v0044.V0044JobDescMsg{desc})
}

// SubmitHet is Submit for a heterogeneous job when descs has several
// components (hetjob); it returns the leader's id.
func SubmitHet(ctx context.Context, env *clienv.Env, prog string, descs []v0044.V0044JobDescMsg) (uint32, int) {
	failed := "Job submit/allocate failed"
	if prog == "srun" {
		failed = "Unable to allocate resources"
	}
	body := v0044.V0044JobAllocReq{Job: v0044.NewOptV0044JobDescMsg(descs[0])}
	if len(descs) > 1 {
		body = v0044.V0044JobAllocReq{Hetjob: descs}
	}
	res, err := env.Client.SlurmV0044PostJobAllocate(ctx, v0044.NewOptV0044JobAllocReq(body))
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %s: %v\n", prog, failed, err)
		return 0, 1
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiJobAllocResp:
		printLines(env, prog+": ", r.JobSubmitUserMsg.Or(""))
		return uint32(r.JobID.Or(0)), 0
	case *v0044.V0044OpenapiJobAllocRespStatusCode:
		msg := "Unspecified error"
		if len(r.Response.Errors) > 0 {
			e := r.Response.Errors[0]
			msg = e.Error.Or(msg)
			if d := e.Description.Or(""); d != "" && d != msg {
				printLines(env, prog+": error: ", d)
			}
		}
		fmt.Fprintf(env.Stderr, "%s: error: %s: %s\n", prog, failed, msg)
		return 0, 1
	}
	fmt.Fprintf(env.Stderr, "%s: error: %s: unexpected answer\n", prog, failed)
	return 0, 1
}

// printLines prints each line of msg after prefix.
func printLines(env *clienv.Env, prefix, msg string) {
	if msg == "" {
		return
	}
	for l := range strings.SplitSeq(strings.TrimRight(msg, "\n"), "\n") {
		fmt.Fprintf(env.Stderr, "%s%s\n", prefix, l)
	}
}

// Wait polls job id until it runs, quickly at first: most allocations are
// granted in the first scheduling cycle, and a job still pending after
// that counts as not granted at once. Then pending (when not nil) is
// called and "job N queued and waiting for resources" printed, as
// slurm_allocate_resources_blocking does; once granted, "job N has been
// allocated resources". Wait returns ctx's error once ctx ends, and a
// *RevokedError when the job ends or disappears before it runs; it
// withdraws nothing.
func Wait(ctx context.Context, env *clienv.Env, prog string, id uint32, pending func(id uint32)) (Granted, error) {
	delay := 5 * time.Millisecond
	queued := false
	for {
		res, err := env.Client.SlurmV0044GetJob(ctx, v0044.SlurmV0044GetJobParams{JobID: strconv.FormatUint(uint64(id), 10)})
		if ctx.Err() != nil {
			return Granted{}, ctx.Err()
		}
		if err != nil {
			return Granted{}, err
		}
		r, ok := res.(*v0044.V0044OpenapiJobInfoResp)
		if !ok || len(r.Jobs) == 0 {
			return Granted{}, &RevokedError{JobID: id}
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
			return Granted{}, &RevokedError{JobID: id}
		}
		if !queued && delay >= 40*time.Millisecond {
			queued = true
			if pending != nil {
				pending(id)
			}
			fmt.Fprintf(env.Stderr, "%s: job %d queued and waiting for resources\n", prog, id)
		}
		select {
		case <-ctx.Done():
			return Granted{}, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// Lookup reads job id's own record (GET /job/{id}; a heterogeneous
// job's leader answers for every component, so the record is picked by
// its id).
func Lookup(ctx context.Context, env *clienv.Env, id uint32) (v0044.V0044JobInfo, error) {
	res, err := env.Client.SlurmV0044GetJob(ctx, v0044.SlurmV0044GetJobParams{JobID: strconv.FormatUint(uint64(id), 10)})
	if err != nil {
		return v0044.V0044JobInfo{}, err
	}
	if r, ok := res.(*v0044.V0044OpenapiJobInfoResp); ok {
		for _, j := range r.Jobs {
			if uint32(j.JobID.Or(0)) == id {
				return j, nil
			}
		}
	}
	return v0044.V0044JobInfo{}, &RevokedError{JobID: id}
}

// Release ends an allocation with the command's exit code
// (slurm_complete_job), through env's Call.
func Release(env *clienv.Env, id uint32, exitCode int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	path := strings.Replace(stepproto.PathComplete, "{job_id}", strconv.FormatUint(uint64(id), 10), 1) + "?exit_code=" + strconv.Itoa(exitCode)
	return env.Call(ctx, "POST", path, nil, nil)
}

// Nodes is the job's node list as Slurm writes it ("n[1-2]").
func (g Granted) Nodes() string { return g.Job.Nodes.Or("") }
