// Package v0044 implements the slurmrestd v0.0.44 API on top of the
// controller: it translates between the generated wire types and the domain
// model, and builds slurmrestd's envelope (meta, errors, warnings).
package v0044

import (
	"context"
	"errors"
	"strconv"

	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

// SlurmRelease is the Slurm release whose API behaviour Drover follows; it
// is what meta.slurm.release reports.
const (
	SlurmMajor   = "25"
	SlurmMinor   = "11"
	SlurmMicro   = "0"
	SlurmRelease = SlurmMajor + "." + SlurmMinor + "." + SlurmMicro
)

func (s *Server) meta(ctx context.Context) api.OptV0044OpenapiMeta {
	m := api.V0044OpenapiMeta{
		Plugin: api.NewOptV0044OpenapiMetaPlugin(api.V0044OpenapiMetaPlugin{
			Type:              api.NewOptString("openapi/slurmctld"),
			Name:              api.NewOptString("Slurm OpenAPI slurmctld"),
			DataParser:        api.NewOptString("data_parser/v0.0.44"),
			AccountingStorage: api.NewOptString(""),
		}),
		Slurm: api.NewOptV0044OpenapiMetaSlurm(api.V0044OpenapiMetaSlurm{
			Version: api.NewOptV0044OpenapiMetaSlurmVersion(api.V0044OpenapiMetaSlurmVersion{
				Major: api.NewOptString(SlurmMajor), Minor: api.NewOptString(SlurmMinor), Micro: api.NewOptString(SlurmMicro),
			}),
			Release: api.NewOptString(SlurmRelease),
			Cluster: api.NewOptString(s.ctl.ClusterName()),
		}),
		Command: api.V0044StringArray{},
	}
	if c, ok := authctx.From(ctx); ok {
		m.Client = api.NewOptV0044OpenapiMetaClient(api.V0044OpenapiMetaClient{
			Source: api.NewOptString(c.Source),
			User:   api.NewOptString(c.User),
			Group:  api.NewOptString(c.Group),
		})
	}
	return api.NewOptV0044OpenapiMeta(m)
}

// apiError turns a domain error into slurmrestd's error entry: error is
// Slurm's fixed message, description the request-specific detail.
func apiError(err error, source string) api.V0044OpenapiError {
	code := slurmerr.CodeOf(err)
	desc := ""
	var se *slurmerr.Error
	if errors.As(err, &se) {
		desc = se.Detail
	} else if err != nil {
		desc = err.Error()
	}
	return api.V0044OpenapiError{
		Description: api.NewOptString(desc),
		ErrorNumber: api.NewOptInt32(int32(code)),
		Error:       api.NewOptString(code.Message()),
		Source:      api.NewOptString(source),
	}
}

func errorsOf(err error, source string) api.V0044OpenapiErrors {
	if err == nil {
		return api.V0044OpenapiErrors{}
	}
	return api.V0044OpenapiErrors{apiError(err, source)}
}

func warningsOf(msgs []string, source string) api.V0044OpenapiWarnings {
	out := api.V0044OpenapiWarnings{}
	for _, m := range msgs {
		out = append(out, api.V0044OpenapiWarning{Description: api.NewOptString(m), Source: api.NewOptString(source)})
	}
	return out
}

// plainResp is the payload-less envelope many operations answer with.
func (s *Server) plainResp(ctx context.Context, err error, source string) api.V0044OpenapiResp {
	return api.V0044OpenapiResp{Meta: s.meta(ctx), Errors: errorsOf(err, source), Warnings: api.V0044OpenapiWarnings{}}
}

// httpStatus maps a controller refusal to the status slurmrestd 25.11
// answers with (500 for controller rejections, 404 for unknown jobs).
// failoverStatus is def, or the status that tells a client of
// replicated controllers whether it may try again elsewhere
// (internal/failover): 503 when nothing was applied, 504 when nobody can
// say yet.
func failoverStatus(err error, def int) int {
	switch slurmerr.CodeOf(err) {
	case slurmerr.InStandbyUseBackup:
		return 503
	case slurmerr.SocketTimeout:
		return 504
	}
	return def
}

func httpStatus(err error) int {
	switch slurmerr.CodeOf(err) {
	case slurmerr.InvalidJobID:
		return 404
	case slurmerr.InvalidQuery, slurmerr.DataConvFailed:
		return 422
	case slurmerr.AccessDenied:
		return 403
	}
	return failoverStatus(err, 500)
}

func u32(n uint32) api.V0044Uint32NoValStruct {
	return api.V0044Uint32NoValStruct{Set: api.NewOptBool(true), Infinite: api.NewOptBool(false), Number: api.NewOptInt32(int32(n))}
}

func u32Unset() api.V0044Uint32NoValStruct {
	return api.V0044Uint32NoValStruct{Set: api.NewOptBool(false), Infinite: api.NewOptBool(false), Number: api.NewOptInt32(0)}
}

func u32Inf() api.V0044Uint32NoValStruct {
	return api.V0044Uint32NoValStruct{Set: api.NewOptBool(false), Infinite: api.NewOptBool(true), Number: api.NewOptInt32(0)}
}

func u16(n uint32) api.V0044Uint16NoValStruct {
	return api.V0044Uint16NoValStruct{Set: api.NewOptBool(true), Infinite: api.NewOptBool(false), Number: api.NewOptInt32(int32(n))}
}

func u16Unset() api.V0044Uint16NoValStruct {
	return api.V0044Uint16NoValStruct{Set: api.NewOptBool(false), Infinite: api.NewOptBool(false), Number: api.NewOptInt32(0)}
}

func u64(n int64) api.V0044Uint64NoValStruct {
	return api.V0044Uint64NoValStruct{Set: api.NewOptBool(true), Infinite: api.NewOptBool(false), Number: api.NewOptInt64(n)}
}

// u64NoLimit is a limit not set, as slurmrestd writes one (unset,
// infinite).
func u64NoLimit() api.V0044Uint64NoValStruct {
	return api.V0044Uint64NoValStruct{Set: api.NewOptBool(false), Infinite: api.NewOptBool(true), Number: api.NewOptInt64(0)}
}

func u64Unset() api.V0044Uint64NoValStruct {
	return api.V0044Uint64NoValStruct{Set: api.NewOptBool(false), Infinite: api.NewOptBool(false), Number: api.NewOptInt64(0)}
}

// u32Value reads a {set,infinite,number} request value: (value, infinite,
// present).
func u32Value(o api.OptV0044Uint32NoValStruct) (uint32, bool, bool) {
	v, ok := o.Get()
	if !ok {
		return 0, false, false
	}
	if v.Infinite.Or(false) {
		return 0, true, true
	}
	if set, has := v.Set.Get(); has && !set {
		return 0, false, false
	}
	n, ok := v.Number.Get()
	if !ok {
		return 0, false, false
	}
	return uint32(n), false, true
}

func u64Value(o api.OptV0044Uint64NoValStruct) (uint64, bool, bool) {
	v, ok := o.Get()
	if !ok {
		return 0, false, false
	}
	if v.Infinite.Or(false) {
		return 0, true, true
	}
	if set, has := v.Set.Get(); has && !set {
		return 0, false, false
	}
	n, ok := v.Number.Get()
	if !ok {
		return 0, false, false
	}
	return uint64(n), false, true
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

// Meta is the meta of an answer to ctx's caller, for the versions served
// through this bridge that build some answers of their own.
func (s *Server) Meta(ctx context.Context) api.OptV0044OpenapiMeta { return s.meta(ctx) }

// Controller is the controller the bridge answers from.
func (s *Server) Controller() *controller.Controller { return s.ctl }

// ParseSelector reads a job id as the job paths take it ("12", "12_3").
func (s *Server) ParseSelector(id string) (controller.JobSelector, error) {
	return parseSelector(id, s.ctl.MaxArraySize())
}

// ParseJobSelector reads a job id as slurmrestd's job paths take it:
// JOB, JOB_TASK or JOB_[TASKS].
func ParseJobSelector(id string, maxArraySize uint32) (controller.JobSelector, error) {
	return parseSelector(id, maxArraySize)
}
