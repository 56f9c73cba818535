package readmodel

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/internal/cli/clienv"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// License is one license of the cluster (GET /licenses) as scontrol
// reads it.
type License struct {
	Name                        string
	Total, Used, Free, Reserved int32
	// Remote marks licenses served by the accounting database;
	// LastConsumed, LastDeficit and LastUpdate (seconds since the epoch)
	// are the license manager's view of those.
	Remote                    bool
	LastConsumed, LastDeficit int32
	LastUpdate                int64
	// Nodes are the nodes a node-bound license belongs to, "" for a
	// cluster-wide one.
	Nodes string
}

// FromV0044License reads one slurmrestd v0.0.44 license record.
func FromV0044License(w *v0044.V0044License) License {
	return License{
		Name:         w.LicenseName.Or(""),
		Total:        w.Total.Or(0),
		Used:         w.Used.Or(0),
		Free:         w.Free.Or(0),
		Reserved:     w.Reserved.Or(0),
		Remote:       w.Remote.Or(false),
		LastConsumed: w.LastConsumed.Or(0),
		LastDeficit:  w.LastDeficit.Or(0),
		LastUpdate:   w.LastUpdate.Or(0),
		Nodes:        w.Nodes.Or(""),
	}
}

// FromV0044Licenses reads a REST license list, in its order.
func FromV0044Licenses(ws []v0044.V0044License) []License {
	out := make([]License, len(ws))
	for i := range ws {
		out[i] = FromV0044License(&ws[i])
	}
	return out
}

// GetLicenses is GET /licenses: every license.
func GetLicenses(ctx context.Context, api clienv.API) (Answer[License], error) {
	res, err := api.SlurmV0044GetLicenses(ctx)
	if err != nil {
		return Answer[License]{}, fmt.Errorf("GET /licenses: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiLicensesResp:
		return Answer[License]{Records: FromV0044Licenses(r.Licenses), Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiLicensesRespStatusCode:
		return Answer[License]{Records: FromV0044Licenses(r.Response.Licenses), Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[License]{Status: -1}, nil
}
