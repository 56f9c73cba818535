package v0044

import (
	"context"
	"errors"
	"reflect"
	"strings"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/slurmerr"
	api "github.com/droverhq/drover/openapi/v0044"
)

// The slurmdb operations (QOS, accounts, users, associations) read the
// controller's accounting model and change it through ChangeAccounting,
// one change per request, applied whole or not at all as slurmdbd commits
// one sacctmgr command. Records are filled as slurmdbd 25.11 fills them:
// limits Drover does not keep are present, unset and infinite.

// dbMeta is meta for the slurmdbd operations: slurmrestd names its
// openapi/slurmdbd plugin and the accounting storage there.
func (s *Server) dbMeta(ctx context.Context) api.OptV0044OpenapiMeta {
	m := s.meta(ctx)
	m.Value.Plugin = api.NewOptV0044OpenapiMetaPlugin(api.V0044OpenapiMetaPlugin{
		Type:              api.NewOptString("openapi/slurmdbd"),
		Name:              api.NewOptString("Slurm OpenAPI slurmdbd"),
		DataParser:        api.NewOptString("data_parser/v0.0.44"),
		AccountingStorage: api.NewOptString("accounting_storage/slurmdbd"),
	})
	return m
}

// dbErrors is errors[] for a refused change: one entry per problem, since
// the accounting model reports every problem of a change together.
func dbErrors(err error, source string) api.V0044OpenapiErrors {
	out := api.V0044OpenapiErrors{}
	if err == nil {
		return out
	}
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, inner := range j.Unwrap() {
				walk(inner)
			}
			return
		}
		out = append(out, apiError(e, source))
	}
	walk(err)
	return out
}

// dbStatus is the HTTP status of a refused change: the first problem's.
func dbStatus(err error) int {
	var se *slurmerr.Error
	if errors.As(err, &se) {
		return httpStatus(se)
	}
	return 500
}

// dbWarnings is warnings[] with one entry, or none.
func dbWarnings(source, msg string) api.V0044OpenapiWarnings {
	if msg == "" {
		return api.V0044OpenapiWarnings{}
	}
	return warningsOf([]string{msg}, source)
}

// nothingFound is slurmrestd's warning for a query (op, slurmdb's call)
// that found nothing; none when it found n > 0.
func nothingFound(n int, op string) string {
	if n > 0 {
		return ""
	}
	return op + "() found nothing"
}

func (s *Server) changeAccounting(ctx context.Context, ch assoc.Change) error {
	return s.ctl.ChangeAccounting(ctx, caller(ctx), ch)
}

// affected is what an add reports when it adds nothing: what it said
// of each request, or slurmdbd's "Request didn't affect anything".
func affected(report string) string {
	if report == "" {
		return "Request didn't affect anything\n"
	}
	return report
}

// refusal is what an add reports when its change is refused: slurmdbd's
// denied for lack of privilege, else the refusal itself.
func refusal(err error, denied string) string {
	if errors.Is(err, slurmerr.Sentinel(slurmerr.AccessDenied)) {
		return denied
	}
	return err.Error()
}

// dbChangeRes is the answer of the operations that change accounting and
// answer with the payload-less envelope.
type dbChangeRes interface {
	api.SlurmdbV0044PostQosRes
	api.SlurmdbV0044PostAccountsRes
	api.SlurmdbV0044PostUsersRes
	api.SlurmdbV0044PostAssociationsRes
	api.SlurmdbV0044DeleteUserRes
	api.SlurmdbV0044PostConfigRes
}

// applyChange makes ch, one change, and answers as slurmrestd does: the
// envelope with warnings (from source), or the refusal.
func (s *Server) applyChange(ctx context.Context, ch assoc.Change, warnings []string, source string) dbChangeRes {
	if err := s.changeAccounting(ctx, ch); err != nil {
		return s.dbFail(ctx, err, source)
	}
	return &api.V0044OpenapiResp{Meta: s.dbMeta(ctx), Errors: api.V0044OpenapiErrors{}, Warnings: warningsOf(warnings, source)}
}

// csv reads a comma-separated filter; nil when absent or empty.
func csv(o api.OptString) []string {
	v, ok := o.Get()
	if !ok {
		return nil
	}
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// flagSet reads a flag-like query parameter (with_assocs, "Exclude limits
// from parents"): present means set, unless it says false.
func flagSet(o api.OptString) bool {
	v, ok := o.Get()
	if !ok {
		return false
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "0", "no", "f", "n":
		return false
	}
	return true
}

// matches reports whether name passes a filter (nil passes everything).
func matches(filter []string, name string) bool {
	if filter == nil {
		return true
	}
	for _, f := range filter {
		if strings.EqualFold(f, name) {
			return true
		}
	}
	return false
}

var (
	noValU32 = reflect.TypeFor[api.V0044Uint32NoValStruct]()
	noValU64 = reflect.TypeFor[api.V0044Uint64NoValStruct]()
	noValF64 = reflect.TypeFor[api.V0044Float64NoValStruct]()
)

// noLimits sets every {set, infinite, number} member left unset in v to
// "no limit" (unset and infinite), as slurmrestd writes the limits slurmdbd
// keeps at INFINITE. Run before fillUnset, which fills the rest.
func noLimits(v any) { noLimit(reflect.ValueOf(v).Elem(), 0) }

func noLimit(v reflect.Value, depth int) {
	if depth > 16 {
		return
	}
	switch v.Kind() {
	case reflect.Slice:
		// Lists deeper than fillUnset reaches are empty, not null.
		if v.IsNil() && v.CanSet() {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		}
		return
	case reflect.Struct:
	default:
		return
	}
	if isOpt(v.Type()) {
		val := v.FieldByName("Value")
		if !v.FieldByName("Set").Bool() {
			switch val.Type() {
			case noValU32:
				v.Set(reflect.ValueOf(api.NewOptV0044Uint32NoValStruct(u32Inf())))
				return
			case noValU64:
				v.Set(reflect.ValueOf(api.NewOptV0044Uint64NoValStruct(u64NoLimit())))
				return
			case noValF64:
				v.Set(reflect.ValueOf(api.NewOptV0044Float64NoValStruct(f64Inf())))
				return
			}
			// An unset optional object: fill its limits so that
			// fillUnset, which sets it, finds them done.
			v.FieldByName("Set").SetBool(true)
		}
		noLimit(val, depth+1)
		return
	}
	for i := 0; i < v.NumField(); i++ {
		if f := v.Field(i); f.CanSet() {
			noLimit(f, depth+1)
		}
	}
}

func f64(n float64) api.V0044Float64NoValStruct {
	return api.V0044Float64NoValStruct{Set: api.NewOptBool(true), Infinite: api.NewOptBool(false), Number: api.NewOptFloat64(n)}
}

func f64Inf() api.V0044Float64NoValStruct {
	return api.V0044Float64NoValStruct{Set: api.NewOptBool(false), Infinite: api.NewOptBool(true), Number: api.NewOptFloat64(0)}
}

// dbFilled returns a record with every limit unset and infinite and every
// other member present and empty.
func dbFilled[T any]() T {
	var v T
	noLimits(&v)
	fillUnset(&v)
	return v
}

// noVal reads a request's {set, infinite, number}: absent (keep what is
// there), cleared (infinite, or explicitly not set: back to the default or
// inherited value), or a number.
type noVal int

const (
	noValAbsent noVal = iota
	noValClear
	noValNumber
)

// noValOf is what a {set, infinite, number} asks for: present says the
// request has it, hasNumber that it has a number.
func noValOf(present bool, infinite, set api.OptBool, hasNumber bool) noVal {
	switch s, has := set.Get(); {
	case !present:
		return noValAbsent
	case infinite.Or(false), has && !s:
		return noValClear
	case !hasNumber:
		return noValAbsent
	}
	return noValNumber
}

func readU32(o api.OptV0044Uint32NoValStruct) (uint32, noVal) {
	v, ok := o.Get()
	n, has := v.Number.Get()
	if how := noValOf(ok, v.Infinite, v.Set, has); how != noValNumber {
		return 0, how
	}
	return uint32(max(n, 0)), noValNumber
}

func readF64(o api.OptV0044Float64NoValStruct) (float64, noVal) {
	v, ok := o.Get()
	n, has := v.Number.Get()
	if how := noValOf(ok, v.Infinite, v.Set, has); how != noValNumber {
		return 0, how
	}
	return n, noValNumber
}
