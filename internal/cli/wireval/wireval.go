// Package wireval reads slurmrestd's number structs ({set, infinite,
// number}) as Slurm's C commands hold the same fields: NO_VAL when unset,
// INFINITE when infinite, the number otherwise. It is the commands' one
// copy of those sentinels and of the reading; every command prints from
// these values as its C original prints from the raw fields.
package wireval

import v0044 "github.com/droverhq/drover/openapi/v0044"

// Slurm's sentinels (slurm.h).
const (
	NoVal      = 0xfffffffe
	Infinite   = 0xffffffff
	NoVal16    = 0xfffe
	Infinite16 = 0xffff
	NoVal64    = 0xfffffffffffffffe
	Infinite64 = 0xffffffffffffffff
)

// U32 is a 32-bit number struct as Slurm's value.
func U32(o v0044.OptV0044Uint32NoValStruct) uint32 {
	v, ok := o.Get()
	switch {
	case !ok:
		return NoVal
	case v.Infinite.Or(false):
		return Infinite
	case !v.Set.Or(false):
		return NoVal
	}
	return uint32(v.Number.Or(0))
}

// U16 is U32 for 16-bit fields (NO_VAL16, INFINITE16).
func U16(o v0044.OptV0044Uint16NoValStruct) uint16 {
	v, ok := o.Get()
	switch {
	case !ok:
		return NoVal16
	case v.Infinite.Or(false):
		return Infinite16
	case !v.Set.Or(false):
		return NoVal16
	}
	return uint16(v.Number.Or(0))
}

// U64 is U32 for 64-bit fields (NO_VAL64, INFINITE64).
func U64(o v0044.OptV0044Uint64NoValStruct) uint64 {
	v, ok := o.Get()
	switch {
	case !ok:
		return NoVal64
	case v.Infinite.Or(false):
		return Infinite64
	case !v.Set.Or(false):
		return NoVal64
	}
	return uint64(v.Number.Or(0))
}

// Finite32 is a 32-bit number struct's number when it is set and not
// infinite (ok false otherwise): for the counters a command adds up.
func Finite32(o v0044.OptV0044Uint32NoValStruct) (int64, bool) {
	v := U32(o)
	return int64(v), v != NoVal && v != Infinite
}

// Finite16 is Finite32 for 16-bit fields.
func Finite16(o v0044.OptV0044Uint16NoValStruct) (int64, bool) {
	v := U16(o)
	return int64(v), v != NoVal16 && v != Infinite16
}
