package readmodel

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/jobstream"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// AcctQuery is what GET /slurmdb/jobs selects runs by. Empty lists and
// zero times select by nothing.
type AcctQuery struct {
	Users, Accounts, Partitions, QOS []string
	Names, States, Clusters          []string
	// JobIDs are the jobs asked for (slurmdbd's step parameter, which
	// takes job ids as well as steps).
	JobIDs []string
	// Duplicates asks for every run of a requeued job, not only the
	// newest.
	Duplicates bool
	// Start and End bound the window the runs must fall in.
	Start, End time.Time
}

// V0044 is the query as v0.0.44's parameters: lists joined with commas,
// times as seconds since the epoch. It is for a command that prints the
// answer's records themselves (sacct --json); the others read the runs
// with GetAcctJobs.
func (q *AcctQuery) V0044() v0044.SlurmdbV0044GetJobsParams {
	var p v0044.SlurmdbV0044GetJobsParams
	set := func(dst *v0044.OptString, list []string) {
		if len(list) > 0 {
			*dst = v0044.NewOptString(strings.Join(list, ","))
		}
	}
	set(&p.Users, q.Users)
	set(&p.Account, q.Accounts)
	set(&p.Partition, q.Partitions)
	set(&p.Qos, q.QOS)
	set(&p.JobName, q.Names)
	set(&p.State, q.States)
	set(&p.Cluster, q.Clusters)
	set(&p.Step, q.JobIDs)
	if q.Duplicates {
		p.ShowDuplicates = v0044.NewOptString("true")
	}
	if !q.Start.IsZero() {
		p.StartTime = v0044.NewOptString(strconv.FormatInt(q.Start.Unix(), 10))
	}
	if !q.End.IsZero() {
		p.EndTime = v0044.NewOptString(strconv.FormatInt(q.End.Unix(), 10))
	}
	return p
}

// GetAcctJobs is GET /slurmdb/jobs: each run q selects goes to each, in
// the answer's order, and the answer comes back without them. The list
// can hold hundreds of thousands of runs, so through the commands'
// client (whose transport is jobstream's) it is read run by run as it
// arrives and never held whole; through a client that decodes answers
// whole, the runs are handed on from the decoded list. The runs of an
// answer that is not the operation's success are not handed on.
//
// The run each is given is reused for the next: copy *j to keep it (the
// copy's slices are its own). An error each returns ends the read and
// comes back as the fetch's error, as does the client's own.
func GetAcctJobs(ctx context.Context, api clienv.API, q AcctQuery, each func(j *AcctJob) error) (Answer[AcctJob], error) {
	var j AcctJob
	streamed := jobstream.WithAcct(ctx, func(w *v0044.V0044Job) error {
		j = FromV0044AcctJob(w)
		return each(&j)
	})
	res, err := api.SlurmdbV0044GetJobs(streamed, q.V0044())
	if err != nil {
		return Answer[AcctJob]{}, fmt.Errorf("GET /slurmdb/jobs: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiSlurmdbdJobsResp:
		for i := range r.Jobs {
			j = FromV0044AcctJob(&r.Jobs[i])
			if err := each(&j); err != nil {
				return Answer[AcctJob]{}, fmt.Errorf("GET /slurmdb/jobs: %w", err)
			}
		}
		return Answer[AcctJob]{Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiSlurmdbdJobsRespStatusCode:
		return Answer[AcctJob]{Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[AcctJob]{Status: -1}, nil
}
