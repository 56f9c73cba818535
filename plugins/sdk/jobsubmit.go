package sdk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/droverhq/drover/plugins/protocol"
)

// JobSubmit is a job submission filter, as Slurm's job_submit/lua: Submit
// sees every new job, Modify every change to a job (nil: changes pass).
// Either may change the job (return it in SubmitReply.Job), reject it
// (Reject with a Message), or pass it with a message for the user.
type JobSubmit struct {
	Submit func(req *protocol.SubmitRequest) (*protocol.SubmitReply, error)
	Modify func(req *protocol.ModifyRequest) (*protocol.SubmitReply, error)
}

// ServeJobSubmit serves j until Drover stops the plugin. It does not
// return.
func ServeJobSubmit(j *JobSubmit) {
	serve(protocol.KindJobSubmit, protocol.JobSubmitMethods, j.handle)
}

// Reject is the reply that refuses a job with msg.
func Reject(msg string) *protocol.SubmitReply {
	return &protocol.SubmitReply{Reject: true, Message: msg}
}

func (j *JobSubmit) handle(_ context.Context, method string, req json.RawMessage) (any, error) {
	switch method {
	case protocol.JobSubmitMethodSubmit:
		var in protocol.SubmitRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		if j.Submit == nil {
			return &protocol.SubmitReply{}, nil
		}
		return orEmpty(j.Submit(&in))
	case protocol.JobSubmitMethodModify:
		var in protocol.ModifyRequest
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, fmt.Errorf("decode %s: %w", method, err)
		}
		if j.Modify == nil {
			return &protocol.SubmitReply{}, nil
		}
		return orEmpty(j.Modify(&in))
	}
	return nil, fmt.Errorf("unknown method %q", method)
}

func orEmpty(r *protocol.SubmitReply, err error) (*protocol.SubmitReply, error) {
	if r == nil && err == nil {
		r = &protocol.SubmitReply{}
	}
	return r, err
}
