package sdiag

import (
	"fmt"
	"io"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/slurmjson"
	"github.com/droverhq/drover/openapi/v0044"
)

// printDoc prints the answer as sdiag --json does (OPENAPI_DIAG_RESP):
// the controller's statistics, in its order, with a meta block that
// describes this command.
func printDoc(env *clienv.Env, prog string, o options, resp *v0044.V0044OpenapiDiagResp) error {
	out := *resp
	out.Meta = v0044.NewOptV0044OpenapiMeta(slurmjson.CLIMeta(prog, o.argv, env.User.Name, env.User.GID, clienv.SlurmVersion, resp.Meta))
	if out.Errors == nil {
		out.Errors = v0044.V0044OpenapiErrors{}
	}
	if out.Warnings == nil {
		out.Warnings = v0044.V0044OpenapiWarnings{}
	}
	text, err := slurmjson.Format(&out, slurmjson.DiagResp())
	if err == nil && o.yaml {
		text, err = slurmjson.YAML(text)
	}
	if err != nil {
		return fmt.Errorf("format the statistics: %w", err)
	}
	if _, err := io.WriteString(env.Stdout, text); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	return nil
}
