package controller

import (
	"context"

	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/slurmerr"
)

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the client request it
// serves (droverapi.RequestIDHeader, which the REST front checks with
// droverapi.ValidRequestID): Submit and SubmitHet make the job it names
// once, however often the client retries.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// requestKey is the request ctx names for who, nil when it names none.
func requestKey(ctx context.Context, who Identity) *ctlstate.RequestKey {
	id, _ := ctx.Value(requestIDKey{}).(string)
	if id == "" {
		return nil
	}
	return &ctlstate.RequestKey{UID: who.UID, ID: id}
}

// submittedFor returns the answer an earlier submission naming k got, if
// it is still remembered: a retry then makes no job, and is answered
// without running the job_submit plugins or storing its script again.
// The apply decides in the end (two retries may both pass here).
func (c *Controller) submittedFor(k *ctlstate.RequestKey) (SubmitResult, bool) {
	if k == nil {
		return SubmitResult{}, false
	}
	c.mu.RLock()
	first, ok := c.st.Submitted(*k, c.now())
	c.mu.RUnlock()
	if !ok {
		return SubmitResult{}, false
	}
	return c.repeatedResult(first), true
}

// repeatedResult is the answer to a retry of the submission first: the
// first's job, held as it was, with what the job_submit plugins told the
// user then.
func (c *Controller) repeatedResult(first ctlstate.SubmitRequest) SubmitResult {
	c.logger.Info("submission repeats a client request, answered with its job", "request", first.ID, "uid", first.UID, "job", first.JobID)
	res := SubmitResult{JobID: first.JobID, UserMessage: first.UserMsg}
	if first.Held {
		res.RC = slurmerr.JobHeld
	}
	return res
}
