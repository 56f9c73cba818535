package squeue

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/cli/slurmjson"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// printJSON writes the v0.0.44 job list response for the jobs that pass
// squeue's filters, in the controller's order and unfolded, as squeue
// --json does, laid out as Slurm's serializer writes it. The meta block
// describes this command, not the server.
func (q *queue) printJSON(resp *v0044.V0044OpenapiJobInfoResp) error {
	now := q.env.Now()
	out := q.jsonRest(resp)
	for i := range resp.Jobs {
		j := readmodel.FromV0044Job(&resp.Jobs[i])
		if q.keep(&j, now) && q.keepPartition(j.Partition) {
			out.Jobs = append(out.Jobs, resp.Jobs[i])
		}
	}
	// Slurm's serializer: the data parser's member order, "\/", and its
	// layout of empty arrays.
	text, err := slurmjson.Format(&out, slurmjson.JobInfoResp())
	if err == nil && q.opts.yaml {
		text, err = slurmjson.YAML(text)
	}
	if err != nil {
		return err
	}
	if _, err := io.WriteString(q.env.Stdout, text); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// jsonRest is the response squeue --json prints around its jobs: the
// controller's, with this command's meta block and no jobs yet.
func (q *queue) jsonRest(resp *v0044.V0044OpenapiJobInfoResp) v0044.V0044OpenapiJobInfoResp {
	out := *resp
	out.Jobs = v0044.V0044JobInfoMsg{}
	out.Meta = v0044.NewOptV0044OpenapiMeta(slurmjson.CLIMeta(q.env.Prog, q.opts.argv, q.env.User.Name, q.env.User.GID, clienv.SlurmVersion, resp.Meta))
	out.Errors = v0044.V0044OpenapiErrors{}
	out.Warnings = v0044.V0044OpenapiWarnings{}
	return out
}

// jsonStream prints squeue --json's jobs as GET /jobs delivers them
// (jobstream), each that passes the filters written at once, and the rest
// of the response once it has come (finish): the output is printJSON's.
type jsonStream struct {
	q    *queue
	now  time.Time
	out  *bufio.Writer
	list *slurmjson.List
}

func (q *queue) newJSONStream() (*jsonStream, error) {
	out := bufio.NewWriterSize(q.env.Stdout, 64<<10)
	l, err := slurmjson.NewList(out, slurmjson.JobInfoResp(), "jobs")
	if err != nil {
		return nil, err
	}
	return &jsonStream{q: q, now: q.env.Now(), out: out, list: l}, nil
}

// job writes one job record if it passes the filters.
func (s *jsonStream) job(w *v0044.V0044JobInfo) error {
	j := readmodel.FromV0044Job(w)
	if !s.q.keep(&j, s.now) || !s.q.keepPartition(j.Partition) {
		return nil
	}
	return s.list.Element(w)
}

// finish writes what follows the jobs: resp, whose jobs came through job
// (a transport that does not stream leaves them in resp).
func (s *jsonStream) finish(resp *v0044.V0044OpenapiJobInfoResp) error {
	for i := range resp.Jobs {
		if err := s.job(&resp.Jobs[i]); err != nil {
			return err
		}
	}
	rest := s.q.jsonRest(resp)
	if err := s.list.Close(&rest); err != nil {
		return err
	}
	if err := s.out.Flush(); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}
