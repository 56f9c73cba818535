package readmodel

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/jobstream"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Problem is one entry of an answer's errors[]: Slurm's error number, its
// fixed text ("" when the server left it out) and slurmrestd's
// explanation of the request.
type Problem struct {
	Number      int32
	Error       string
	Description string
}

// Answer is a read answer: its records and the errors[] slurmrestd sent
// with them. Status is the HTTP status of an answer that is not the
// operation's success, 0 for a success; an answer of a kind the client
// does not know has neither records nor errors and Status -1, which the
// commands report as Slurm's unspecified error.
type Answer[T any] struct {
	Records []T
	Errors  []Problem
	Status  int
}

// Failed reports an answer other than the operation's success.
func (a *Answer[T]) Failed() bool { return a.Status != 0 }

func problems(errs v0044.V0044OpenapiErrors) []Problem {
	if len(errs) == 0 {
		return nil
	}
	out := make([]Problem, len(errs))
	for i, e := range errs {
		out[i] = Problem{Number: e.ErrorNumber.Or(0), Error: e.Error.Or(""), Description: e.Description.Or("")}
	}
	return out
}

// ClientError is the generated client's own error inside a fetch's
// error, which names the request. Commands that print it after Slurm's
// wording ("... (connect failure): dial unix ...") print it as they did
// before the fetches named the request.
func ClientError(err error) error {
	if inner := errors.Unwrap(err); inner != nil {
		return inner
	}
	return err
}

// JobFlags is the show flags of a job read (SHOW_ALL, SHOW_DETAIL).
type JobFlags int

const (
	// JobsDefault asks for what a plain listing shows.
	JobsDefault JobFlags = iota
	// JobsAll adds the jobs of hidden partitions (SHOW_ALL).
	JobsAll
	// JobsDetail adds the per-node allocation (SHOW_DETAIL).
	JobsDetail
)

// GetJob is GET /job/{id}: every record of the job (all tasks of an
// array, all components of a heterogeneous job), read whole. The error is
// the client's: no answer, or one it could not decode.
func GetJob(ctx context.Context, api clienv.API, id uint64, flags JobFlags) (Answer[JobInfo], error) {
	params := v0044.SlurmV0044GetJobParams{JobID: strconv.FormatUint(id, 10)}
	switch flags {
	case JobsAll:
		params.Flags = v0044.NewOptSlurmV0044GetJobFlags(v0044.SlurmV0044GetJobFlagsALL)
	case JobsDetail:
		params.Flags = v0044.NewOptSlurmV0044GetJobFlags(v0044.SlurmV0044GetJobFlagsDETAIL)
	}
	res, err := api.SlurmV0044GetJob(ctx, params)
	if err != nil {
		return Answer[JobInfo]{}, fmt.Errorf("GET /job/%d: %w", id, err)
	}
	return jobAnswer(res), nil
}

// GetJobs is GET /jobs: every job, read whole.
func GetJobs(ctx context.Context, api clienv.API, flags JobFlags) (Answer[JobInfo], error) {
	params := v0044.SlurmV0044GetJobsParams{}
	switch flags {
	case JobsAll:
		params.Flags = v0044.NewOptSlurmV0044GetJobsFlags(v0044.SlurmV0044GetJobsFlagsALL)
	case JobsDetail:
		params.Flags = v0044.NewOptSlurmV0044GetJobsFlags(v0044.SlurmV0044GetJobsFlagsDETAIL)
	}
	res, err := api.SlurmV0044GetJobs(ctx, params)
	if err != nil {
		return Answer[JobInfo]{}, fmt.Errorf("GET /jobs: %w", err)
	}
	return jobAnswer(res), nil
}

func jobAnswer(res any) Answer[JobInfo] {
	switch r := res.(type) {
	case *v0044.V0044OpenapiJobInfoResp:
		return Answer[JobInfo]{Records: FromV0044JobInfos(r.Jobs), Errors: problems(r.Errors)}
	case *v0044.V0044OpenapiJobInfoRespStatusCode:
		return Answer[JobInfo]{Records: FromV0044JobInfos(r.Response.Jobs), Errors: problems(r.Response.Errors), Status: r.StatusCode}
	}
	return Answer[JobInfo]{Status: -1}
}

// NodeFlags is the show flags of a node read.
type NodeFlags int

const (
	// NodesDefault asks for what a plain listing shows.
	NodesDefault NodeFlags = iota
	// NodesAll adds the nodes of hidden partitions (SHOW_ALL).
	NodesAll
	// NodesDetail adds the drained and used GRES (SHOW_DETAIL).
	NodesDetail
	// NodesFuture adds the nodes in state FUTURE (SHOW_FUTURE).
	NodesFuture
)

// GetNodes is GET /nodes: every node.
func GetNodes(ctx context.Context, api clienv.API, flags NodeFlags) (Answer[Node], error) {
	params := v0044.SlurmV0044GetNodesParams{}
	switch flags {
	case NodesAll:
		params.Flags = v0044.NewOptSlurmV0044GetNodesFlags(v0044.SlurmV0044GetNodesFlagsALL)
	case NodesDetail:
		params.Flags = v0044.NewOptSlurmV0044GetNodesFlags(v0044.SlurmV0044GetNodesFlagsDETAIL)
	case NodesFuture:
		params.Flags = v0044.NewOptSlurmV0044GetNodesFlags(v0044.SlurmV0044GetNodesFlagsFUTURE)
	}
	// Each node is read into the model as it arrives (jobstream), not
	// held as a wire record first: a transport that does not stream, or
	// an error answer, leaves the records in the answer instead.
	var streamed []Node
	ctx = jobstream.WithNodes(ctx, func(w *v0044.V0044Node) error {
		streamed = append(streamed, FromV0044Node(w))
		return nil
	})
	res, err := api.SlurmV0044GetNodes(ctx, params)
	if err != nil {
		return Answer[Node]{}, fmt.Errorf("GET /nodes: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiNodesResp:
		return Answer[Node]{Records: append(streamed, FromV0044Nodes(r.Nodes)...), Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiNodesRespStatusCode:
		return Answer[Node]{Records: FromV0044Nodes(r.Response.Nodes), Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[Node]{Status: -1}, nil
}

// GetPartitions is GET /partitions: every partition, the hidden ones too
// when all is set (SHOW_ALL).
func GetPartitions(ctx context.Context, api clienv.API, all bool) (Answer[Partition], error) {
	params := v0044.SlurmV0044GetPartitionsParams{}
	if all {
		params.Flags = v0044.NewOptSlurmV0044GetPartitionsFlags(v0044.SlurmV0044GetPartitionsFlagsALL)
	}
	res, err := api.SlurmV0044GetPartitions(ctx, params)
	if err != nil {
		return Answer[Partition]{}, fmt.Errorf("GET /partitions: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiPartitionResp:
		return Answer[Partition]{Records: FromV0044Partitions(r.Partitions), Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiPartitionRespStatusCode:
		return Answer[Partition]{Records: FromV0044Partitions(r.Response.Partitions), Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[Partition]{Status: -1}, nil
}

// GetAcctJob is GET /slurmdb/job/{id}: every recorded run of the job
// (id is the job id as the command was given it).
func GetAcctJob(ctx context.Context, api clienv.API, id string) (Answer[AcctJob], error) {
	res, err := api.SlurmdbV0044GetJob(ctx, v0044.SlurmdbV0044GetJobParams{JobID: id})
	if err != nil {
		return Answer[AcctJob]{}, fmt.Errorf("GET /slurmdb/job/%s: %w", id, err)
	}
	read := func(ws []v0044.V0044Job) []AcctJob {
		out := make([]AcctJob, len(ws))
		for i := range ws {
			out[i] = FromV0044AcctJob(&ws[i])
		}
		return out
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiSlurmdbdJobsResp:
		return Answer[AcctJob]{Records: read(r.Jobs), Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiSlurmdbdJobsRespStatusCode:
		return Answer[AcctJob]{Records: read(r.Response.Jobs), Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[AcctJob]{Status: -1}, nil
}
