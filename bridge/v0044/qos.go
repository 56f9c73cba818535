package v0044

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/droverhq/drover/bridge/v0044/limitwire"
	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

var qosTemplate = sync.OnceValue(dbFilled[api.V0044Qos])

// qosToWire writes a QOS as slurmdbd lists it: the limits Drover does not
// keep unset and infinite, priority and usage factor always set.
func qosToWire(q assoc.QOS) api.V0044Qos {
	w := qosTemplate()
	w.ID = api.NewOptInt32(int32(q.ID))
	w.Name = api.NewOptString(q.Name)
	w.Description = api.NewOptString(q.Description)
	w.Flags = limitwire.QOSFlagsToWire(q.Flags)
	w.Priority = api.NewOptV0044Uint32NoValStruct(u32(q.Priority))
	w.UsageFactor = api.NewOptV0044Float64NoValStruct(f64(q.UsageFactor))
	limits := w.Limits.Value
	limits.GraceTime = api.NewOptInt32(int32(q.GraceTime))
	limitwire.QOSToWire(q.Limits, &limits)
	w.Limits = api.NewOptV0044QosLimits(limits)
	preempt := w.Preempt.Value
	preempt.List = api.V0044QosPreemptList(append([]string{}, q.Preempt...))
	preempt.Mode = []api.V0044QosPreemptModeItem{preemptModeToWire(q.PreemptMode)}
	w.Preempt = api.NewOptV0044QosPreempt(preempt)
	return w
}

// preemptModeToWire names a QOS PreemptMode as slurmrestd does: OFF is
// PREEMPT_MODE_OFF (0), which it calls DISABLED, as it does an unset one.
func preemptModeToWire(mode string) api.V0044QosPreemptModeItem {
	switch mode {
	case "CANCEL":
		return api.V0044QosPreemptModeItemCANCEL
	case "REQUEUE":
		return api.V0044QosPreemptModeItemREQUEUE
	case "SUSPEND":
		return api.V0044QosPreemptModeItemSUSPEND
	}
	return api.V0044QosPreemptModeItemDISABLED
}

// qosFromWire reads a posted QOS over the record it updates (old, zero for
// a new one): members absent from the request keep their value, as
// slurmrestd's update leaves what it is not given.
func qosFromWire(w *api.V0044Qos, old assoc.QOS) (assoc.QOS, error) {
	q := old
	q.Name = w.Name.Or(old.Name)
	if d, ok := w.Description.Get(); ok {
		q.Description = d
	}
	switch n, how := readU32(w.Priority); how {
	case noValNumber:
		q.Priority = n
	case noValClear:
		q.Priority = 0
	}
	switch f, how := readF64(w.UsageFactor); how {
	case noValNumber:
		q.UsageFactor = f
	case noValClear:
		q.UsageFactor = 1
	}
	q.Flags = limitwire.QOSFlagsFromWire(w.Flags, old.Flags)
	if l, ok := w.Limits.Get(); ok {
		if g, ok := l.GraceTime.Get(); ok {
			q.GraceTime = uint32(max(g, 0))
		}
		q.Limits = limitwire.QOSFromWire(l, q.Limits)
	}
	if p, ok := w.Preempt.Get(); ok {
		if p.List != nil {
			q.Preempt = nil
			q.Preempt = append(q.Preempt, p.List...)
		}
		if len(p.Mode) > 0 {
			mode, err := preemptModeFromWire(p.Mode)
			if err != nil {
				return q, err
			}
			q.PreemptMode = mode
		}
	}
	return q, nil
}

func preemptModeFromWire(modes []api.V0044QosPreemptModeItem) (string, error) {
	mode := ""
	for _, m := range modes {
		switch m {
		case api.V0044QosPreemptModeItemDISABLED:
		case api.V0044QosPreemptModeItemCANCEL, api.V0044QosPreemptModeItemREQUEUE, api.V0044QosPreemptModeItemSUSPEND:
			mode = string(m)
		default:
			return "", slurmerr.New(slurmerr.InvalidQOS, "PreemptMode %s is not supported for a QOS", m)
		}
	}
	return mode, nil
}

// qosResp lists QOS, with slurmrestd's warning when there are none.
func (s *Server) qosResp(ctx context.Context, list []assoc.QOS) *api.V0044OpenapiSlurmdbdQosResp {
	out := api.V0044QosList{}
	for _, q := range list {
		out = append(out, qosToWire(q))
	}
	warning := nothingFound(len(list), "slurmdb_qos_get")
	return &api.V0044OpenapiSlurmdbdQosResp{Qos: out, Meta: s.dbMeta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: dbWarnings("_op_handler_qos", warning)}
}

// SlurmdbV0044GetQos implements GET /slurmdb/v0.0.44/qos/: every QOS, or
// those the name, id, description and preempt_mode filters keep.
func (s *Server) SlurmdbV0044GetQos(ctx context.Context, params api.SlurmdbV0044GetQosParams) (api.SlurmdbV0044GetQosRes, error) {
	names, ids, descs := csv(params.Name), csv(params.ID), csv(params.Description)
	var out []assoc.QOS
	for _, q := range s.ctl.Accounting().QOSList() {
		if !matches(names, q.Name) || !matches(ids, strconv.FormatUint(uint64(q.ID), 10)) || !matches(descs, q.Description) {
			continue
		}
		if m, ok := params.PreemptMode.Get(); ok && string(preemptModeToWire(q.PreemptMode)) != string(m) {
			continue
		}
		out = append(out, q)
	}
	return s.qosResp(ctx, out), nil
}

// SlurmdbV0044GetSingleQos implements GET /slurmdb/v0.0.44/qos/{qos}: an
// unknown name is an empty list with slurmrestd's warning.
func (s *Server) SlurmdbV0044GetSingleQos(ctx context.Context, params api.SlurmdbV0044GetSingleQosParams) (api.SlurmdbV0044GetSingleQosRes, error) {
	q, ok := findQOS(s.ctl.Accounting(), params.Qos)
	if !ok {
		return s.qosResp(ctx, nil), nil
	}
	return s.qosResp(ctx, []assoc.QOS{q}), nil
}

// SlurmdbV0044PostQos implements POST /slurmdb/v0.0.44/qos/: each QOS is
// added, or updated when one of its name (or id) exists; all in one
// change.
func (s *Server) SlurmdbV0044PostQos(ctx context.Context, req api.OptV0044OpenapiSlurmdbdQosResp, _ api.SlurmdbV0044PostQosParams) (api.SlurmdbV0044PostQosRes, error) {
	body, _ := req.Get()
	ch, err := qosItems(s.ctl.Accounting(), body.Qos)
	if err != nil {
		return s.dbFail(ctx, err, "_foreach_update_qos"), nil
	}
	return s.applyChange(ctx, ch, nil, "_foreach_update_qos"), nil
}

// qosItems are the changes a list of QOS records asks for.
func qosItems(m *assoc.Model, list api.V0044QosList) (assoc.Change, error) {
	var ch assoc.Change
	for i := range list {
		w := &list[i]
		var old assoc.QOS
		name := w.Name.Or("")
		switch id, hasID := w.ID.Get(); {
		case name != "":
			old, _ = m.QOS(name)
		case hasID:
			found := false
			for _, q := range m.QOSList() {
				if int32(q.ID) == id {
					old, found = q, true
				}
			}
			if !found {
				return nil, slurmerr.New(slurmerr.InvalidQuery, "QOS was not found for the requested ID")
			}
		default:
			return nil, slurmerr.New(slurmerr.InvalidQuery, "Cannot create a QOS without a name")
		}
		q, err := qosFromWire(w, old)
		if err != nil {
			return nil, err
		}
		ch = append(ch, assoc.Item{Kind: assoc.KindQOS, QOS: &q})
	}
	return ch, nil
}

// findQOS looks a QOS up by name, as slurmdbd's queries compare names:
// exactly, else ignoring case.
func findQOS(m *assoc.Model, name string) (assoc.QOS, bool) {
	if q, ok := m.QOS(name); ok {
		return q, true
	}
	for _, q := range m.QOSList() {
		if strings.EqualFold(q.Name, name) {
			return q, true
		}
	}
	return assoc.QOS{}, false
}

// dbFail is the payload-less envelope of a refused change.
func (s *Server) dbFail(ctx context.Context, err error, source string) *api.V0044OpenapiRespStatusCode {
	return &api.V0044OpenapiRespStatusCode{StatusCode: dbStatus(err), Response: api.V0044OpenapiResp{
		Meta: s.dbMeta(ctx), Errors: dbErrors(err, source), Warnings: api.V0044OpenapiWarnings{},
	}}
}

// SlurmdbV0044DeleteSingleQos implements DELETE
// /slurmdb/v0.0.44/qos/{qos}; the answer lists the QOS removed.
func (s *Server) SlurmdbV0044DeleteSingleQos(ctx context.Context, params api.SlurmdbV0044DeleteSingleQosParams) (api.SlurmdbV0044DeleteSingleQosRes, error) {
	resp := api.V0044OpenapiSlurmdbdQosRemovedResp{RemovedQos: api.V0044StringList{}, Meta: s.dbMeta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}
	fail := func(err error) (api.SlurmdbV0044DeleteSingleQosRes, error) {
		resp.Errors = dbErrors(err, "_op_handler_qos")
		return &api.V0044OpenapiSlurmdbdQosRemovedRespStatusCode{StatusCode: dbStatus(err), Response: resp}, nil
	}
	q, ok := findQOS(s.ctl.Accounting(), params.Qos)
	if !ok {
		return fail(slurmerr.New(slurmerr.InvalidQOS, "qos %s does not exist", params.Qos))
	}
	if err := s.changeAccounting(ctx, assoc.Change{{Kind: assoc.KindQOS, Delete: true, QOS: &assoc.QOS{Name: q.Name}}}); err != nil {
		return fail(err)
	}
	resp.RemovedQos = api.V0044StringList{q.Name}
	return &resp, nil
}
