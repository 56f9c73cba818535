package v0045

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/bridge/adapt"
	"github.com/droverhq/drover/internal/showconf"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0045"
)

// SlurmV0045GetConf implements GET /conf: slurm.conf as the running
// controller read it (an edit shows after scontrol reconfigure), every
// setting `scontrol show config` prints (Slurm's defaults for what the
// file leaves out), typed as v0.0.45's slurm_conf wants.
func (s *Server) SlurmV0045GetConf(ctx context.Context, params api.SlurmV0045GetConfParams) (api.SlurmV0045GetConfRes, error) {
	ctl := s.b44.Controller()
	ctl.StatsRef().CountRPCCtx(ctx, "REQUEST_BUILD_INFO")
	fail := func(code slurmerr.Code, status int, why string) (api.SlurmV0045GetConfRes, error) {
		return &api.V0045OpenapiConfRespStatusCode{StatusCode: status, Response: api.V0045OpenapiConfResp{Meta: s.meta(ctx),
			Errors: api.V0045OpenapiErrors{{ErrorNumber: api.NewOptInt32(int32(code)), Error: api.NewOptString(code.Message()),
				Description: api.NewOptString(why), Source: api.NewOptString("slurm_load_ctl_conf()")}},
			Warnings: api.V0045OpenapiWarnings{}}}, nil
	}
	path := ctl.SlurmConfPath()
	sc := ctl.SlurmConf()
	if sc == nil {
		var err error
		if sc, err = slurmconf.Load(path); err != nil {
			return fail(slurmerr.Unspecified, 500, fmt.Sprintf("read %s: %v", path, err))
		}
	}
	started := ctl.StartTime()
	if v, ok := params.UpdateTime.Get(); ok {
		since, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fail(slurmerr.InvalidQuery, 422, "update_time: not a UNIX timestamp: "+v)
		}
		if since >= started.Unix() {
			// Nothing changed since: slurmctld answers SLURM_NO_CHANGE_IN_DATA.
			return &api.V0045OpenapiConfResp{Meta: s.meta(ctx), Errors: api.V0045OpenapiErrors{}, Warnings: api.V0045OpenapiWarnings{}}, nil
		}
	}
	src := showconf.Source{Path: path, Conf: sc, Version: s.release()}
	body, err := confJSON(src, ctl.NextJobID(), started)
	if err != nil {
		return fail(slurmerr.Unspecified, 500, err.Error())
	}
	var out api.V0045OpenapiConfResp
	if err := out.UnmarshalJSON(body); err != nil {
		return fail(slurmerr.DataConvFailed, 500, err.Error())
	}
	out.Meta, out.Errors, out.Warnings = s.meta(ctx), api.V0045OpenapiErrors{}, api.V0045OpenapiWarnings{}
	return &out, nil
}

// release is the Slurm release the API answers as.
func (s *Server) release() string {
	if m, ok := s.meta(context.Background()).Get(); ok {
		if sl, ok := m.Slurm.Get(); ok {
			return sl.Release.Or("")
		}
	}
	return ""
}

// confJSON types each setting by the v0.0.45 schema: numbers, booleans,
// comma lists, flag arrays and {set, infinite, number} objects from the
// strings scontrol prints.
func confJSON(src showconf.Source, nextJob uint32, started time.Time) ([]byte, error) {
	spec, err := adapt.LoadSpec("v0.0.45")
	if err != nil {
		return nil, err
	}
	raw := map[string]string{}
	for _, l := range showconf.Lines(src) {
		raw[strings.ToLower(l.Name)] = l.Raw
	}
	// Names slurmrestd spells apart from scontrol, and values it splits.
	raw["defmempercpu"], raw["maxmempercpu"] = memPerCPU(src, "DefMemPerCPU"), memPerCPU(src, "MaxMemPerCPU")
	for _, k := range []string{"slurmuser", "slurmduser"} {
		name, id, _ := strings.Cut(strings.TrimSuffix(raw[k], ")"), "(")
		raw[k], raw[k+"id"] = name, id
	}
	var flags []string
	for _, f := range []string{"DisableRootJobs", "AllowSpecResourcesUsage", "UsePam", "TrackWCKey"} {
		if v, _ := src.Conf.Value(f); strings.EqualFold(v, "yes") || v == "1" {
			flags = append(flags, f)
		}
	}
	raw["confflags"] = strings.Join(flags, ",")
	conf := map[string]any{}
	props := spec.Properties(spec.Component("v0.0.45_slurm_conf"))
	for name, schema := range props {
		v, ok := raw[strings.ToLower(name)]
		if !ok || v == "" {
			continue
		}
		conf[name] = typed(v, schema)
	}
	var ctls []any
	for _, h := range src.Conf.SlurmctldHosts {
		ctls = append(ctls, map[string]any{"machine": h.Name, "address": h.Addr})
	}
	conf["controllers"] = ctls
	resp := map[string]any{
		"slurm_conf": spec.Project(conf, spec.Component("v0.0.45_slurm_conf")),
		"slurm_conf_meta": map[string]any{
			"LastUpdate": started.Unix(), "BOOT_TIME": started.Unix(),
			"NEXT_JOB_ID": map[string]any{"set": true, "infinite": false, "number": nextJob},
			"SLURM_CONF":  src.Path, "SLURM_VERSION": src.Version,
		},
	}
	return json.Marshal(resp)
}

// memPerCPU is a per-CPU memory setting when slurm.conf gives one, else
// unset (the per-node settings have no member in slurm_conf).
func memPerCPU(src showconf.Source, key string) string {
	if v, _ := src.Conf.Value(key); v != "" && !strings.EqualFold(v, "UNLIMITED") {
		return v
	}
	return ""
}

// typed turns a printed setting into the JSON value schema wants.
func typed(v string, schema map[string]any) any {
	switch adapt.TypeOf(schema) {
	case "boolean":
		switch strings.ToLower(v) {
		case "yes", "true", "1", "y":
			return true
		}
		return false
	case "integer", "number":
		if n := leadingInt(v); n != "" {
			return json.Number(n)
		}
		return json.Number("0")
	case "array":
		var out []any
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	case "object":
		if strings.EqualFold(v, "UNLIMITED") || strings.EqualFold(v, "INFINITE") {
			return map[string]any{"set": false, "infinite": true, "number": json.Number("0")}
		}
		if n := leadingInt(v); n != "" {
			return map[string]any{"set": true, "infinite": false, "number": json.Number(n)}
		}
		return nil
	}
	return v
}

// leadingInt is the number a value starts with ("300" of "300 sec").
func leadingInt(v string) string {
	end := 0
	for end < len(v) && (v[end] >= '0' && v[end] <= '9' || end == 0 && v[end] == '-') {
		end++
	}
	n, err := strconv.ParseInt(v[:end], 10, 64)
	if err != nil {
		return ""
	}
	return strconv.FormatInt(n, 10)
}
