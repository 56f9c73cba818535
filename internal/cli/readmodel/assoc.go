package readmodel

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/internal/cli/clienv"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Assoc is one association of the accounting database (GET
// /slurmdb/associations) as sprio and sreport read it: an account's
// (User "") or a user's in an account, for one cluster and optionally
// one partition.
type Assoc struct {
	Cluster, Account, User, Partition string
	// ParentAccount is the account above an account's association, ""
	// for root and for users' associations.
	ParentAccount string
	// Priority is the association's own priority: NoVal when unset,
	// Infinite when infinite (how slurmdbd reports an association
	// without one of its own).
	Priority uint32
}

// FromV0044Assoc reads one slurmrestd v0.0.44 association record.
func FromV0044Assoc(w *v0044.V0044Assoc) Assoc {
	return Assoc{
		Cluster:       w.Cluster.Or(""),
		Account:       w.Account.Or(""),
		User:          w.User,
		Partition:     w.Partition.Or(""),
		ParentAccount: w.ParentAccount.Or(""),
		Priority:      u32(w.Priority),
	}
}

// FromV0044Assocs reads a REST association list, in its order.
func FromV0044Assocs(ws []v0044.V0044Assoc) []Assoc {
	out := make([]Assoc, len(ws))
	for i := range ws {
		out[i] = FromV0044Assoc(&ws[i])
	}
	return out
}

// GetAssocs is GET /slurmdb/associations: every association.
func GetAssocs(ctx context.Context, api clienv.API) (Answer[Assoc], error) {
	res, err := api.SlurmdbV0044GetAssociations(ctx, v0044.SlurmdbV0044GetAssociationsParams{})
	if err != nil {
		return Answer[Assoc]{}, fmt.Errorf("GET /slurmdb/associations: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiAssocsResp:
		return Answer[Assoc]{Records: FromV0044Assocs(r.Associations), Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiAssocsRespStatusCode:
		return Answer[Assoc]{Records: FromV0044Assocs(r.Response.Associations), Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[Assoc]{Status: -1}, nil
}
