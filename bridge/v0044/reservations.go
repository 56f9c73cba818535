package v0044

import (
	"context"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/reservation"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

// SlurmV0044GetReservations implements GET /reservations/.
func (s *Server) SlurmV0044GetReservations(ctx context.Context, _ api.SlurmV0044GetReservationsParams) (api.SlurmV0044GetReservationsRes, error) {
	s.count(ctx, "REQUEST_RESERVATION_INFO")
	out := api.V0044ReservationInfoMsg{}
	for _, r := range s.ctl.Reservations() {
		out = append(out, s.reservationToWire(&r))
	}
	return &api.V0044OpenapiReservationResp{Reservations: out, LastUpdate: u64(s.ctl.StartTime().Unix()), Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmV0044GetReservation implements GET /reservation/{name}. An unknown
// name is answered 200 with an error entry, as slurmrestd 25.11 does.
func (s *Server) SlurmV0044GetReservation(ctx context.Context, params api.SlurmV0044GetReservationParams) (api.SlurmV0044GetReservationRes, error) {
	s.count(ctx, "REQUEST_RESERVATION_INFO")
	r, err := s.ctl.Reservation(params.ReservationName)
	if err != nil {
		e := api.V0044OpenapiError{Description: api.NewOptString("Unable to query reservations"), ErrorNumber: api.NewOptInt32(0),
			Error: api.NewOptString("No error"), Source: api.NewOptString("slurm_load_reservations()")}
		return &api.V0044OpenapiReservationResp{Reservations: api.V0044ReservationInfoMsg{}, LastUpdate: u64(0), Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{e}, Warnings: api.V0044OpenapiWarnings{}}, nil
	}
	return &api.V0044OpenapiReservationResp{Reservations: api.V0044ReservationInfoMsg{s.reservationToWire(&r)}, LastUpdate: u64(s.ctl.StartTime().Unix()), Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}, nil
}

// SlurmV0044PostReservation implements POST /reservation: create the
// reservation, or update the one of that name. The answer echoes the
// request, as slurmrestd's does.
func (s *Server) SlurmV0044PostReservation(ctx context.Context, req api.OptV0044ReservationDescMsg) (api.SlurmV0044PostReservationRes, error) {
	d, _ := req.Get()
	return s.postReservations(ctx, []api.V0044ReservationDescMsg{d}), nil
}

// SlurmV0044PostReservations implements POST /reservations/: several at
// once, stopping at the first refusal.
func (s *Server) SlurmV0044PostReservations(ctx context.Context, req api.OptV0044ReservationModReq) (api.SlurmV0044PostReservationsRes, error) {
	m, _ := req.Get()
	return s.postReservations(ctx, m.Reservations), nil
}

func (s *Server) postReservations(ctx context.Context, descs []api.V0044ReservationDescMsg) *api.V0044OpenapiReservationModRespStatusCode {
	resp := api.V0044OpenapiReservationModResp{Reservations: api.V0044ReservationDescMsgList{}, Meta: s.meta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: api.V0044OpenapiWarnings{}}
	for _, d := range descs {
		s.count(ctx, "REQUEST_CREATE_RESERVATION")
		spec, err := reservationSpec(&d)
		if err == nil {
			_, err = s.ctl.SetReservation(ctx, caller(ctx), spec)
		}
		if err != nil {
			e := apiError(err, "slurm_create_reservation")
			e.Description = api.NewOptString("Error creating reservation  " + d.Name.Or(""))
			resp.Errors = append(resp.Errors, e)
			return &api.V0044OpenapiReservationModRespStatusCode{StatusCode: httpStatus(err), Response: resp}
		}
		resp.Reservations = append(resp.Reservations, d)
	}
	return &api.V0044OpenapiReservationModRespStatusCode{StatusCode: 200, Response: resp}
}

// SlurmV0044DeleteReservation implements DELETE /reservation/{name}.
func (s *Server) SlurmV0044DeleteReservation(ctx context.Context, params api.SlurmV0044DeleteReservationParams) (api.SlurmV0044DeleteReservationRes, error) {
	s.count(ctx, "REQUEST_DELETE_RESERVATION")
	if err := s.ctl.DeleteReservation(ctx, caller(ctx), params.ReservationName); err != nil {
		e := apiError(err, "slurm_delete_reservation")
		e.Description = api.NewOptString("Error deleting reservation " + params.ReservationName)
		resp := s.plainResp(ctx, nil, "")
		resp.Errors = api.V0044OpenapiErrors{e}
		return &api.V0044OpenapiRespStatusCode{StatusCode: httpStatus(err), Response: resp}, nil
	}
	r := s.plainResp(ctx, nil, "")
	return &r, nil
}

// reservationSpec reads a reservation description; members not given
// stay unset, so that an update changes only what it names.
func reservationSpec(d *api.V0044ReservationDescMsg) (controller.ReservationSpec, error) {
	spec := controller.ReservationSpec{Name: d.Name.Or("")}
	if v, inf, ok := u64Value(d.StartTime); ok && !inf {
		spec.Start, spec.StartSet = time.Unix(int64(v), 0), true
	}
	if v, inf, ok := u32Value(d.Duration); ok {
		if inf {
			spec.End, spec.EndSet = time.Unix(1<<40, 0), true
		} else {
			spec.Duration, spec.DurationSet = time.Duration(v)*time.Minute, true
		}
	}
	if v, inf, ok := u64Value(d.EndTime); ok && !inf && v != 0 && v < 1<<32-2 {
		spec.End, spec.EndSet = time.Unix(int64(v), 0), true
	}
	if len(d.NodeList) > 0 {
		var nodes []string
		for _, expr := range d.NodeList {
			names, err := hostlist.Expand(expr)
			if err != nil {
				return spec, slurmerr.New(slurmerr.InvalidNodeName, "%v", err)
			}
			nodes = append(nodes, names...)
		}
		spec.Nodes, spec.NodesSet = nodes, true
	}
	if v, _, ok := u32Value(d.NodeCount); ok {
		spec.NodeCount = int(v)
	}
	if d.Users != nil {
		spec.Users, spec.UsersSet = []string(d.Users), true
	}
	if d.Accounts != nil {
		spec.Accounts, spec.AccountsSet = []string(d.Accounts), true
	}
	if d.Flags != nil {
		var names []string
		for _, f := range d.Flags {
			names = append(names, string(f))
		}
		flags, err := reservation.ParseFlags(strings.Join(names, ","))
		if err != nil {
			return spec, slurmerr.New(slurmerr.ReservationInvalid, "%v", err)
		}
		spec.Flags, spec.FlagsSet = flags, true
	}
	return spec, nil
}

func (s *Server) reservationToWire(r *reservation.Reservation) api.V0044ReservationInfo {
	w := filled[api.V0044ReservationInfo]()
	w.Accounts = api.NewOptString(strings.Join(r.Accounts, ","))
	w.BurstBuffer = api.NewOptString("")
	w.CoreCount = api.NewOptInt32(int32(r.CoreCount))
	w.CoreSpecializations = api.V0044ReservationInfoCoreSpec{}
	w.EndTime = api.NewOptV0044Uint64NoValStruct(u64(r.End.Unix()))
	w.Features = api.NewOptString("")
	w.Flags = []api.V0044ReservationInfoFlagsItem{}
	for _, f := range r.Flags {
		w.Flags = append(w.Flags, api.V0044ReservationInfoFlagsItem(f))
	}
	w.Groups = api.NewOptString("")
	w.Licenses = api.NewOptString("")
	w.MaxStartDelay = api.NewOptInt32(0)
	w.Name = api.NewOptString(r.Name)
	w.NodeCount = api.NewOptInt32(int32(len(r.Nodes)))
	w.NodeList = api.NewOptString(hostlist.Compress(r.Nodes))
	w.Partition = api.NewOptString("")
	purge := int64(300)
	if r.PurgeAfter > 0 {
		purge = int64(r.PurgeAfter / time.Second)
	}
	w.PurgeCompleted = api.NewOptV0044ReservationInfoPurgeCompleted(api.V0044ReservationInfoPurgeCompleted{Time: api.NewOptV0044Uint32NoValStruct(u32(uint32(purge)))})
	w.StartTime = api.NewOptV0044Uint64NoValStruct(u64(r.Start.Unix()))
	w.Tres = api.NewOptString("cpu=" + itoa(r.CoreCount))
	w.Users = api.NewOptString(strings.Join(r.Users, ","))
	return w
}
