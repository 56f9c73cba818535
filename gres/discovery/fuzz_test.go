package discovery

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"source":"nvml","devices":[{"index":0,"minor":2,"type":"h100","uuid":"GPU-1","file":"/dev/nvidia2","memory_mib":81920}]}`,
		`{"source":"mock:dgxa100","devices":[]}`,
		`{"source":"nvml","devices":null}`,
		`{"source":"nvml","devices":[{"index":1,"uuid":"GPU-1","file":"/dev/nvidia1"}]}`,
		`{"devices":[]}`, `{} {}`, `[]`, ``,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rep, err := Decode(strings.NewReader(s))
		if err != nil {
			return
		}
		if rep.Source == "" || rep.Devices == nil {
			t.Fatalf("Decode(%q) accepted %+v", s, rep)
		}
		var buf bytes.Buffer
		if err := rep.Write(&buf); err != nil {
			t.Fatalf("Write(%+v): %v", rep, err)
		}
		again, err := Decode(&buf)
		if err != nil {
			t.Fatalf("Decode(Write(%+v)): %v", rep, err)
		}
		if diff := cmp.Diff(rep, again); diff != "" {
			t.Fatalf("round trip mismatch (-first +again):\n%s", diff)
		}
	})
}
