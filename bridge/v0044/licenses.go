package v0044

import (
	"context"

	api "github.com/droverhq/drover/openapi/v0044"
)

// SlurmV0044GetLicenses implements GET /licenses/: slurm.conf's Licenses=.
// Jobs' license requests (-L) are not counted yet, so every license shows
// none used.
func (s *Server) SlurmV0044GetLicenses(ctx context.Context) (api.SlurmV0044GetLicensesRes, error) {
	s.count(ctx, "REQUEST_LICENSE_INFO")
	out := api.V0044Licenses{}
	started := unix(s.ctl.StartTime())
	for _, l := range s.ctl.Licenses() {
		out = append(out, api.V0044License{
			LicenseName: api.NewOptString(l.Name), Total: api.NewOptInt32(int32(l.Count)),
			Used: api.NewOptInt32(0), Free: api.NewOptInt32(int32(l.Count)), Reserved: api.NewOptInt32(0),
			Remote: api.NewOptBool(false), LastConsumed: api.NewOptInt32(0), LastDeficit: api.NewOptInt32(0),
			LastUpdate: api.NewOptInt64(0), Nodes: api.NewOptString(""),
		})
	}
	return &api.V0044OpenapiLicensesResp{Licenses: out, LastUpdate: u64(started),
		Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}
