package readmodel

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/internal/cli/clienv"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Ping is one slurmctld's answer to a ping (GET /ping) as scontrol
// reads it.
type Ping struct {
	Hostname string
	// Pinged is the ping's result ("UP", "DOWN"); Responding whether
	// the controller answered.
	Pinged     string
	Responding bool
	// Mode is "primary", "backup"... "" when not given; Primary whether
	// the controller is the primary.
	Mode    string
	Primary bool
}

// FromV0044Pings reads a REST ping list, in its order.
func FromV0044Pings(ws []v0044.V0044ControllerPing) []Ping {
	out := make([]Ping, len(ws))
	for i, w := range ws {
		out[i] = Ping{Hostname: w.Hostname.Or(""), Pinged: w.Pinged.Or(""), Responding: w.Responding, Mode: w.Mode.Or(""), Primary: w.Primary}
	}
	return out
}

// GetPings is GET /ping: every slurmctld, primary first.
func GetPings(ctx context.Context, api clienv.API) (Answer[Ping], error) {
	res, err := api.SlurmV0044GetPing(ctx)
	if err != nil {
		return Answer[Ping]{}, fmt.Errorf("GET /ping: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiPingArrayResp:
		return Answer[Ping]{Records: FromV0044Pings(r.Pings), Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiPingArrayRespStatusCode:
		return Answer[Ping]{Records: FromV0044Pings(r.Response.Pings), Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[Ping]{Status: -1}, nil
}

// Diag is what the commands read of the controller's statistics (GET
// /diag): when it started, and the Slurm release that answered.
type Diag struct {
	// StartTime is req_time_start, seconds since the epoch (0 when
	// unset, int64(Infinite) when infinite).
	StartTime int64
	// Release is the answer's meta.slurm.release, "" when not given.
	Release string
}

// FromV0044Diag reads a slurmrestd v0.0.44 statistics answer.
func FromV0044Diag(w *v0044.V0044OpenapiDiagResp) Diag {
	d := Diag{StartTime: slurmTime(w.Statistics.ReqTimeStart)}
	if m, ok := w.Meta.Get(); ok {
		if s, ok := m.Slurm.Get(); ok {
			d.Release = s.Release.Or("")
		}
	}
	return d
}

// GetDiag is GET /diag: the controller's statistics, one record.
func GetDiag(ctx context.Context, api clienv.API) (Answer[Diag], error) {
	res, err := api.SlurmV0044GetDiag(ctx)
	if err != nil {
		return Answer[Diag]{}, fmt.Errorf("GET /diag: %w", err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiDiagResp:
		return Answer[Diag]{Records: []Diag{FromV0044Diag(r)}, Errors: problems(r.Errors)}, nil
	case *v0044.V0044OpenapiDiagRespStatusCode:
		return Answer[Diag]{Records: []Diag{FromV0044Diag(&r.Response)}, Errors: problems(r.Response.Errors), Status: r.StatusCode}, nil
	}
	return Answer[Diag]{Status: -1}, nil
}
