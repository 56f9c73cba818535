package discovery

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/gres"
)

func TestReportRoundTrip(t *testing.T) {
	rep := &Report{Source: MockSource("dgxa100"), Devices: []gres.Device{{
		Index: 0, Minor: 0, Type: "a100", Name: "NVIDIA A100-SXM4-40GB", UUID: "GPU-x", File: "/dev/nvidia0",
		PCIBusID: "00000000:07:00.0", MemoryMiB: 40960, Cores: "0-15", Links: "-1,2",
	}}}
	var b strings.Builder
	if err := rep.Write(&b); err != nil {
		t.Fatal(err)
	}
	got, err := Decode(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rep, got); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	var empty strings.Builder
	if err := (&Report{Source: SourceNVML}).Write(&empty); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"source\": \"nvml\",\n  \"devices\": []\n}\n"; empty.String() != want {
		t.Errorf("empty report = %q, want %q", empty.String(), want)
	}
}

func TestDecodeChecks(t *testing.T) {
	tests := map[string]struct{ in, wantErr string }{
		"gap from a lost GPU": {in: `{"source":"nvml","devices":[{"index":0,"uuid":"GPU-0","file":"/dev/nvidia0"},{"index":2,"uuid":"GPU-2","file":"/dev/nvidia2"}],"lost":[1]}`},
		"null devices":        {in: `{"source":"nvml","devices":null}`},
		"not json":            {in: `hello`, wantErr: "decode discovery report"},
		"trailing data":       {in: `{"source":"nvml","devices":[]} {}`, wantErr: "data after the report"},
		"no source":           {in: `{"devices":[]}`, wantErr: "discovery report has no source"},
		"index out of order":  {in: `{"source":"nvml","devices":[{"index":1,"uuid":"GPU-1","file":"/dev/nvidia1"},{"index":1,"uuid":"GPU-2","file":"/dev/nvidia2"}]}`, wantErr: "device 1 has index 1"},
		"no uuid":             {in: `{"source":"nvml","devices":[{"index":0,"file":"/dev/nvidia0"}]}`, wantErr: "device 0 has no UUID"},
		"no file":             {in: `{"source":"nvml","devices":[{"index":0,"uuid":"GPU-0"}]}`, wantErr: "device 0 has no device file"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			rep, err := Decode(strings.NewReader(tt.in))
			if tt.wantErr == "" {
				if err != nil || rep.Devices == nil {
					t.Fatalf("Decode = %+v, %v", rep, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Decode error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
