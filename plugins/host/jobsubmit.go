package host

import (
	"context"

	"github.com/droverhq/drover/plugins/protocol"
)

// JobSubmit calls a job submission filter (protocol.KindJobSubmit).
type JobSubmit struct {
	*Plugin
}

// OpenJobSubmit prepares a job submission filter; spec.Kind is set for it.
func OpenJobSubmit(spec Spec) *JobSubmit {
	spec.Kind = protocol.KindJobSubmit
	return &JobSubmit{Plugin: Open(spec)}
}

// Submit filters a new job.
func (j *JobSubmit) Submit(ctx context.Context, req protocol.SubmitRequest) (*protocol.SubmitReply, error) {
	req.Args = j.Args()
	var out protocol.SubmitReply
	if err := j.Call(ctx, protocol.JobSubmitMethodSubmit, &req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Modify filters a change to a job.
func (j *JobSubmit) Modify(ctx context.Context, req protocol.ModifyRequest) (*protocol.SubmitReply, error) {
	req.Args = j.Args()
	var out protocol.SubmitReply
	if err := j.Call(ctx, protocol.JobSubmitMethodModify, &req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
