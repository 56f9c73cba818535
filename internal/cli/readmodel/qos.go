package readmodel

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/internal/cli/clienv"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// QOS is one quality of service of the accounting database (GET
// /slurmdb/qos) as sprio reads it.
type QOS struct {
	Name string
	// Priority is NoVal when unset, Infinite when infinite.
	Priority uint32
}

// FromV0044QOS reads one slurmrestd v0.0.44 QOS record.
func FromV0044QOS(w *v0044.V0044Qos) QOS {
	return QOS{Name: w.Name.Or(""), Priority: u32(w.Priority)}
}

// FromV0044QOSList reads a REST QOS list, in its order.
func FromV0044QOSList(ws []v0044.V0044Qos) []QOS {
	out := make([]QOS, len(ws))
	for i := range ws {
		out[i] = FromV0044QOS(&ws[i])
	}
	return out
}

// GetQOS is GET /slurmdb/qos: every QOS.
func GetQOS(ctx context.Context, api clienv.API) (Answer[QOS], error) {
	res, err := api.SlurmdbV0044GetQos(ctx, v0044.SlurmdbV0044GetQosParams{})
	if err != nil {
		return Answer[QOS]{}, fmt.Errorf("GET /slurmdb/qos: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiSlurmdbdQosResp:
		return Answer[QOS]{Records: FromV0044QOSList(r.Qos), Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiSlurmdbdQosRespStatusCode:
		return Answer[QOS]{Records: FromV0044QOSList(r.Response.Qos), Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[QOS]{Status: -1}, nil
}
