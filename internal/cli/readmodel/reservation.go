package readmodel

import (
	"context"
	"fmt"

	"github.com/droverhq/drover/internal/cli/clienv"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Reservation is one advance reservation as scontrol reads it: strings
// "" where slurmctld has NULL, times as seconds since the epoch (0 when
// unset, int64(Infinite) when infinite, as for nodes).
type Reservation struct {
	Name               string
	StartTime, EndTime int64
	// Flags lists the flags as slurmrestd spells them ("MAINT").
	Flags                []string
	NodeList             string
	NodeCount, CoreCount int32
	// CoreSpecs are the cores reserved on each node (CoreIDs).
	CoreSpecs                         []ReservedCores
	Features, Partition, TRES         string
	Users, Groups, Accounts, Licenses string
	BurstBuffer                       string
	// MaxStartDelay is in seconds, 0 when there is none.
	MaxStartDelay int32
}

// ReservedCores are the cores a reservation holds on one node.
type ReservedCores struct {
	Node, Cores string
}

// FromV0044Reservation reads one slurmrestd v0.0.44 reservation record.
func FromV0044Reservation(w *v0044.V0044ReservationInfo) Reservation {
	r := Reservation{
		Name:          w.Name.Or(""),
		StartTime:     slurmTime(w.StartTime),
		EndTime:       slurmTime(w.EndTime),
		NodeList:      w.NodeList.Or(""),
		NodeCount:     w.NodeCount.Or(0),
		CoreCount:     w.CoreCount.Or(0),
		Features:      w.Features.Or(""),
		Partition:     w.Partition.Or(""),
		TRES:          w.Tres.Or(""),
		Users:         w.Users.Or(""),
		Groups:        w.Groups.Or(""),
		Accounts:      w.Accounts.Or(""),
		Licenses:      w.Licenses.Or(""),
		BurstBuffer:   w.BurstBuffer.Or(""),
		MaxStartDelay: w.MaxStartDelay.Or(0),
	}
	for _, f := range w.Flags {
		r.Flags = append(r.Flags, string(f))
	}
	for _, cs := range w.CoreSpecializations {
		r.CoreSpecs = append(r.CoreSpecs, ReservedCores{Node: cs.Node.Or(""), Cores: cs.Core.Or("")})
	}
	return r
}

// FromV0044Reservations reads a REST reservation list, in its order.
func FromV0044Reservations(ws []v0044.V0044ReservationInfo) []Reservation {
	out := make([]Reservation, len(ws))
	for i := range ws {
		out[i] = FromV0044Reservation(&ws[i])
	}
	return out
}

// GetReservations is GET /reservations: every reservation.
func GetReservations(ctx context.Context, api clienv.API) (Answer[Reservation], error) {
	res, err := api.SlurmV0044GetReservations(ctx, v0044.SlurmV0044GetReservationsParams{})
	if err != nil {
		return Answer[Reservation]{}, fmt.Errorf("GET /reservations: %w", err)
	}
	return reservationAnswer(res), nil
}

// GetReservation is GET /reservation/{name}: the reservation, or none.
func GetReservation(ctx context.Context, api clienv.API, name string) (Answer[Reservation], error) {
	res, err := api.SlurmV0044GetReservation(ctx, v0044.SlurmV0044GetReservationParams{ReservationName: name})
	if err != nil {
		return Answer[Reservation]{}, fmt.Errorf("GET /reservation/%s: %w", name, err)
	}
	return reservationAnswer(res), nil
}

func reservationAnswer(res any) Answer[Reservation] {
	switch r := res.(type) {
	case *v0044.V0044OpenapiReservationResp:
		return Answer[Reservation]{Records: FromV0044Reservations(r.Reservations), Errors: problems(r.Errors)}
	case *v0044.V0044OpenapiReservationRespStatusCode:
		return Answer[Reservation]{Records: FromV0044Reservations(r.Response.Reservations), Errors: problems(r.Response.Errors), Status: r.StatusCode}
	}
	return Answer[Reservation]{Status: -1}
}
