package sshare

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/slurmjson"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// printJSON writes the v0.0.44 shares answer for the associations sshare
// would show, laid out as Slurm's serializer writes it, with this
// command's meta block. It prints the records as slurmrestd sent them,
// so it reads the answer itself rather than the read model's Share.
func printJSON(ctx context.Context, env *clienv.Env, prog string, o *options, me string) int {
	res, err := env.Client.SlurmV0044GetShares(ctx, v0044.SlurmV0044GetSharesParams{})
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	resp, ok := res.(*v0044.V0044OpenapiSharesResp)
	if !ok {
		fmt.Fprintf(env.Stderr, "%s: error: Problem with shares request\n", prog)
		return 1
	}
	out := *resp
	out.Shares.Shares = v0044.V0044AssocSharesObjList{}
	for _, sh := range resp.Shares.Shares {
		isUser := slices.Contains(sh.Type, v0044.V0044AssocSharesObjWrapTypeItemUSER)
		user, account := "", sh.Name.Or("")
		if isUser {
			user, account = sh.Name.Or(""), sh.Parent.Or("")
		}
		if o.keeps(isUser, user, account, me) {
			out.Shares.Shares = append(out.Shares.Shares, sh)
		}
	}
	out.Meta = v0044.NewOptV0044OpenapiMeta(slurmjson.CLIMeta(env.Prog, o.argv, env.User.Name, env.User.GID, clienv.SlurmVersion, resp.Meta))
	out.Errors, out.Warnings = v0044.V0044OpenapiErrors{}, v0044.V0044OpenapiWarnings{}
	text, err := slurmjson.Format(&out, slurmjson.SharesResp())
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
		return 1
	}
	if _, err := io.WriteString(env.Stdout, text); err != nil {
		return 1
	}
	return 0
}
