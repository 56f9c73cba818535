package sacct

import (
	"context"
	"fmt"
	"io"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/cli/slurmjson"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// printJSON asks for the runs q selects and writes those -j selects as
// slurmdbd's v0.0.44 answer, in the schema's member order, with this
// command's meta block, as sacct --json does. It prints the wire records
// themselves, so it reads the answer whole.
func (o *options) printJSON(ctx context.Context, env *clienv.Env, prog string, q readmodel.AcctQuery) int {
	res, err := env.Client.SlurmdbV0044GetJobs(ctx, q.V0044())
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	var resp *v0044.V0044OpenapiSlurmdbdJobsResp
	switch r := res.(type) {
	case *v0044.V0044OpenapiSlurmdbdJobsResp:
		resp = r
	case *v0044.V0044OpenapiSlurmdbdJobsRespStatusCode:
		errs := make([]readmodel.Problem, len(r.Response.Errors))
		for i, e := range r.Response.Errors {
			errs[i] = readmodel.Problem{Number: e.ErrorNumber.Or(0), Error: e.Error.Or(""), Description: e.Description.Or("")}
		}
		return failed(env, prog, r.StatusCode, errs)
	default:
		return failed(env, prog, -1, nil)
	}
	out := *resp
	out.Jobs = v0044.V0044JobList{}
	for i := range resp.Jobs {
		j := readmodel.FromV0044AcctJob(&resp.Jobs[i])
		task, taskSet := arrayTask(&j)
		if o.selected(j.JobID, uint32(j.ArrayJobID), task, taskSet) {
			out.Jobs = append(out.Jobs, resp.Jobs[i])
		}
	}
	out.Meta = v0044.NewOptV0044OpenapiMeta(slurmjson.CLIMeta(prog, o.argv, env.User.Name, env.User.GID, clienv.SlurmVersion, resp.Meta))
	out.Errors, out.Warnings = v0044.V0044OpenapiErrors{}, v0044.V0044OpenapiWarnings{}
	text, err := slurmjson.Format(&out, slurmjson.SlurmdbdJobsResp())
	if err == nil && o.yaml {
		text, err = slurmjson.YAML(text)
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
		return 1
	}
	if _, err := io.WriteString(env.Stdout, text); err != nil {
		return 1
	}
	return 0
}
