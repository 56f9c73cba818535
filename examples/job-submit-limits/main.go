// Command job-submit-limits is an example job_submit plugin, the kind of
// policy sites write in job_submit.lua:
//
//   - a job given no time limit gets one hour, and its submitter is told;
//   - a job asking for more than 8 GPUs per node is refused;
//   - only root may raise a job's time limit above 2 hours afterwards.
//
// List it in slurm.conf: JobSubmitPlugins=job-submit-limits (looked up in
// PluginDir), or by path.
package main

import (
	"fmt"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/plugins/sdk"
)

const (
	defaultMinutes  = 60
	maxGPUsPerNode  = 8
	maxUserMinutes  = 120
	errInvalidGres  = 2072 // ESLURM_INVALID_GRES
	errAccessDenied = 2002 // ESLURM_ACCESS_DENIED
)

func main() {
	sdk.ServeJobSubmit(&sdk.JobSubmit{Submit: submit, Modify: modify})
}

func submit(req *protocol.SubmitRequest) (*protocol.SubmitReply, error) {
	job := req.Job
	if job.Gres != "" {
		reqs, err := gres.ParseRequest(job.Gres)
		if err != nil {
			return nil, fmt.Errorf("gres %q: %w", job.Gres, err)
		}
		for _, r := range reqs {
			if r.Name == "gpu" && r.Count > maxGPUsPerNode {
				return &protocol.SubmitReply{Reject: true, ErrorCode: errInvalidGres,
					Message: fmt.Sprintf("at most %d GPUs per node (asked for %d)", maxGPUsPerNode, r.Count)}, nil
			}
		}
	}
	if job.TimeLimit == 0 {
		job.TimeLimit = defaultMinutes
		return &protocol.SubmitReply{Job: &job,
			Message: fmt.Sprintf("no time limit given: the job gets %d minutes", defaultMinutes)}, nil
	}
	return &protocol.SubmitReply{}, nil
}

func modify(req *protocol.ModifyRequest) (*protocol.SubmitReply, error) {
	if t := req.Update.TimeLimit; t > maxUserMinutes && req.SubmitUID != 0 {
		return &protocol.SubmitReply{Reject: true, ErrorCode: errAccessDenied,
			Message: fmt.Sprintf("time limits above %d minutes need an administrator", maxUserMinutes)}, nil
	}
	return &protocol.SubmitReply{}, nil
}
