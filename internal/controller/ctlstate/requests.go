package ctlstate

import (
	"slices"
	"time"

	"github.com/droverhq/drover/internal/job"
)

// RequestTTL is how long after a submission a retry of its client request
// still gets its job rather than a new one. A client retries a request
// whose answer it lost while controllers fail over: a raft election takes
// seconds, and even Slurm's backup controller takes over within
// SlurmctldTimeout (120 s by default), so retries come within minutes. An
// hour covers that many times over, and controllers whose clocks
// disagree by minutes (a command's time is its leader's clock), while
// what is remembered stays small: a few hundred bytes for each
// submission that named a request. It is measured between command times
// only, never the wall clock, so that replaying the log decides as the
// first apply did; changing it changes what a replay of an old log
// decides about a retry that came between the old bound and the new one.
const RequestTTL = time.Hour

// RequestKey names a client request (droverapi.RequestIDHeader) as its
// submitter sent it: ids are the client's, so two users may choose the
// same one.
type RequestKey struct {
	// UID is the submitter's (the authenticated caller's, not the uid a
	// job runs as, which root may name with --uid).
	UID uint32 `json:"uid"`
	ID  string `json:"id"`
}

// ClientRequest is the client request a submit command answers, with
// what the answer tells the user besides the job: a retry's answer must
// be the first's whole, and the job_submit plugins that wrote the
// message do not run for a retry.
type ClientRequest struct {
	RequestKey
	// UserMsg is what the job_submit plugins told the user
	// (job_submit_user_msg).
	UserMsg string `json:"user_msg,omitempty"`
}

// SubmitRequest is a submission that named a client request, and what it
// answered: a retry of the request gets that answer again.
type SubmitRequest struct {
	ClientRequest
	// JobID is the job the submission made (a heterogeneous job's
	// leader, an array's own record).
	JobID job.ID `json:"job_id"`
	// Held says the job was submitted held, which the answer reports
	// (slurmctld's ESLURM_JOB_HELD return code).
	Held bool `json:"held,omitempty"`
	// Time is the submit command's time, from which RequestTTL runs.
	Time time.Time `json:"time"`
}

// live says r still answers retries at t.
func (r *SubmitRequest) live(t time.Time) bool { return t.Before(r.Time.Add(RequestTTL)) }

// Submitted returns the answer a submission naming k got, if one did
// within RequestTTL before t. The controller asks before it proposes a
// retry, to answer it without another trip through the log; the apply
// asks again with the command's time, and decides.
func (s *State) Submitted(k RequestKey, t time.Time) (SubmitRequest, bool) {
	if s.requestIdx != nil {
		if r := s.requestIdx[k]; r != nil && r.live(t) {
			return *r, true
		}
		return SubmitRequest{}, false
	}
	// A state json.Unmarshal made has no index; readers must not build
	// one under a read lock.
	for i := len(s.Requests) - 1; i >= 0; i-- {
		if r := s.Requests[i]; r.RequestKey == k {
			if r.live(t) {
				return *r, true
			}
			break
		}
	}
	return SubmitRequest{}, false
}

// rememberRequest records what the submission answering req answered.
func (s *State) rememberRequest(req ClientRequest, res Result, held bool, t time.Time) {
	r := &SubmitRequest{ClientRequest: req, JobID: res.JobID, Held: held, Time: t}
	s.Requests = append(s.Requests, r)
	s.indexRequests()[req.RequestKey] = r
}

// pruneRequests forgets the requests that no longer answer retries at t.
// Requests are kept in log order, whose times only rarely go back (a new
// leader whose clock is behind): one the front keeps alive a little
// longer is never answered past its time, which Submitted checks.
func (s *State) pruneRequests(t time.Time) {
	n := 0
	for n < len(s.Requests) && !s.Requests[n].live(t) {
		n++
	}
	if n == 0 {
		return
	}
	idx := s.indexRequests()
	for _, r := range s.Requests[:n] {
		if idx[r.RequestKey] == r {
			// A later submission may have reused the key once this
			// one expired.
			delete(idx, r.RequestKey)
		}
	}
	s.Requests = slices.Delete(s.Requests, 0, n)
	if len(s.Requests) == 0 {
		s.Requests = nil
	}
}

// indexRequests returns the index of Requests by key, built if the state
// has none (a restored one). Only Apply and Restore call it: they hold
// the state for writing.
func (s *State) indexRequests() map[RequestKey]*SubmitRequest {
	if s.requestIdx == nil {
		s.requestIdx = make(map[RequestKey]*SubmitRequest, len(s.Requests))
		for _, r := range s.Requests {
			s.requestIdx[r.RequestKey] = r
		}
	}
	return s.requestIdx
}
