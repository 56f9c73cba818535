package wireval

import (
	"testing"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

func TestReadings(t *testing.T) {
	n32 := func(set, inf bool, n int32) v0044.OptV0044Uint32NoValStruct {
		return v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{
			Set: v0044.NewOptBool(set), Infinite: v0044.NewOptBool(inf), Number: v0044.NewOptInt32(n)})
	}
	for _, tc := range []struct {
		in     v0044.OptV0044Uint32NoValStruct
		want   uint32
		finite bool
	}{
		{v0044.OptV0044Uint32NoValStruct{}, NoVal, false},
		{n32(false, false, 5), NoVal, false},
		{n32(true, true, 5), Infinite, false},
		{n32(false, true, 0), Infinite, false},
		{n32(true, false, 5), 5, true},
		{n32(true, false, 0), 0, true},
	} {
		if got := U32(tc.in); got != tc.want {
			t.Errorf("U32(%+v) = %#x, want %#x", tc.in, got, tc.want)
		}
		if n, ok := Finite32(tc.in); ok != tc.finite || (ok && n != int64(tc.want)) {
			t.Errorf("Finite32(%+v) = %d %v", tc.in, n, ok)
		}
	}
	if got := U64(v0044.OptV0044Uint64NoValStruct{}); got != NoVal64 {
		t.Errorf("U64(unset) = %#x", got)
	}
	inf64 := v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{Infinite: v0044.NewOptBool(true)})
	if got := U64(inf64); got != Infinite64 {
		t.Errorf("U64(infinite) = %#x", got)
	}
	if got := U16(v0044.OptV0044Uint16NoValStruct{}); got != NoVal16 {
		t.Errorf("U16(unset) = %#x", got)
	}
}
