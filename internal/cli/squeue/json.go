package squeue

import (
	"fmt"
	"io"

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
	out := *resp
	out.Jobs = nil
	for i := range resp.Jobs {
		j := readmodel.FromV0044Job(&resp.Jobs[i])
		if q.keep(&j, now) && q.keepPartition(j.Partition) {
			out.Jobs = append(out.Jobs, resp.Jobs[i])
		}
	}
	if out.Jobs == nil {
		out.Jobs = v0044.V0044JobInfoMsg{}
	}
	out.Meta = v0044.NewOptV0044OpenapiMeta(slurmjson.CLIMeta(q.env.Prog, q.opts.argv, q.env.User.Name, q.env.User.GID, clienv.SlurmVersion, resp.Meta))
	out.Errors = v0044.V0044OpenapiErrors{}
	out.Warnings = v0044.V0044OpenapiWarnings{}

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
