package discovery

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/gres"
)

// buildHelper builds cmd/drover-gres-nvml with cgo into a temporary folder.
func buildHelper(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH to build drover-gres-nvml")
	}
	cc, err := exec.Command(goTool, "env", "CC").Output()
	if err != nil {
		t.Fatalf("go env CC: %v", err)
	}
	if _, err := exec.LookPath(strings.Fields(string(cc) + " gcc")[0]); err != nil {
		t.Skipf("no C compiler (%s) to build the cgo helper drover-gres-nvml", strings.TrimSpace(string(cc)))
	}
	bin := filepath.Join(t.TempDir(), "drover-gres-nvml")
	cmd := exec.Command(goTool, "build", "-o", bin, "github.com/droverhq/drover/cmd/drover-gres-nvml")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build drover-gres-nvml: %v\n%s", err, out)
	}
	return bin
}

func TestRunHelper(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the cgo helper")
	}
	bin := buildHelper(t)
	ctx := t.Context()

	rep, err := Run(ctx, bin, "dgxa100")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Source != "mock:dgxa100" || len(rep.Devices) != 8 {
		t.Fatalf("Run = source %q, %d devices; want mock:dgxa100 with 8", rep.Source, len(rep.Devices))
	}
	uuids := map[string]bool{}
	for i, d := range rep.Devices {
		want := gres.Device{
			Index: i, Minor: i, Type: "a100", Name: "Mock NVIDIA A100-SXM4-40GB",
			UUID: d.UUID, File: "/dev/nvidia" + string(rune('0'+i)),
			PCIBusID: "00000000:0" + string(rune('0'+i)) + ":00.0", MemoryMiB: 40960,
		}
		if diff := cmp.Diff(want, d); diff != "" {
			t.Errorf("device %d mismatch (-want +got):\n%s", i, diff)
		}
		if !strings.HasPrefix(d.UUID, "GPU-") || uuids[d.UUID] {
			t.Errorf("device %d: bad or repeated UUID %q", i, d.UUID)
		}
		uuids[d.UUID] = true
	}
	// UUIDs of the mock are stable from one run to the next.
	again, err := Run(ctx, bin, "dgxa100")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rep, again); diff != "" {
		t.Errorf("second run differs (-first +second):\n%s", diff)
	}

	h100, err := Run(ctx, bin, "dgxh100")
	if err != nil {
		t.Fatal(err)
	}
	if len(h100.Devices) != 8 || h100.Devices[0].Type != "h100" || h100.Devices[0].MemoryMiB != 81920 {
		t.Errorf("dgxh100 report = %+v", h100.Devices)
	}

	if _, err := Run(ctx, bin, "dgx1"); err == nil || !strings.Contains(err.Error(), `unknown mock "dgx1"`) {
		t.Errorf("Run with unknown mock = %v, want the helper's complaint", err)
	}
}

// script writes an executable shell script standing in for the helper.
func script(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("shell scripts")
	}
	p := filepath.Join(t.TempDir(), "fake-helper")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestRun(t *testing.T) {
	okReport := `{"source":"nvml","devices":[{"index":0,"minor":2,"type":"h100","uuid":"GPU-1","file":"/dev/nvidia2","memory_mib":81920,"future_field":1}]}`
	tests := map[string]struct {
		body    string
		mock    string
		timeout time.Duration
		want    *Report
		wantErr string
	}{
		"report": {
			body: `[ "$1" = discover ] && [ $# = 1 ] || exit 9` + "\necho '" + okReport + "'",
			want: &Report{Source: "nvml", Devices: []gres.Device{{Index: 0, Minor: 2, Type: "h100", UUID: "GPU-1", File: "/dev/nvidia2", MemoryMiB: 81920}}},
		},
		"mock flag passed": {
			body: `[ "$2" = --mock=dgxh100 ] || exit 9` + "\necho '{\"source\":\"mock:dgxh100\",\"devices\":[]}'",
			mock: "dgxh100",
			want: &Report{Source: "mock:dgxh100", Devices: []gres.Device{}},
		},
		"null devices": {
			body: `echo '{"source":"nvml","devices":null}'`,
			want: &Report{Source: "nvml", Devices: []gres.Device{}},
		},
		"failure carries stderr": {
			body:    `echo "drover-gres-nvml: NVML library libnvidia-ml.so.1 not found" >&2; exit 1`,
			wantErr: "exit status 1: drover-gres-nvml: NVML library libnvidia-ml.so.1 not found",
		},
		"timeout": {
			body:    `echo starting >&2; exec sleep 10`,
			timeout: 200 * time.Millisecond,
			wantErr: "context deadline exceeded: starting",
		},
		"not json": {
			body:    `echo hello`,
			wantErr: "decode discovery report",
		},
		"trailing data": {
			body:    `echo '{"source":"nvml","devices":[]} {}'`,
			wantErr: "data after the report",
		},
		"no source": {
			body:    `echo '{"devices":[]}'`,
			wantErr: "discovery report has no source",
		},
		"index out of order": {
			body:    `echo '{"source":"nvml","devices":[{"index":1,"uuid":"GPU-1","file":"/dev/nvidia1"}]}'`,
			wantErr: "device 0 has index 1",
		},
		"no uuid": {
			body:    `echo '{"source":"nvml","devices":[{"index":0,"file":"/dev/nvidia0"}]}'`,
			wantErr: "device 0 has no UUID",
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			bin := script(t, tt.body)
			ctx := t.Context()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			got, err := Run(ctx, bin, tt.mock)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Run error = %v, want it to contain %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), bin) {
					t.Errorf("Run error %q does not name the helper", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Run mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunMissingBinary(t *testing.T) {
	_, err := Run(t.Context(), filepath.Join(t.TempDir(), "absent"), "")
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Run(absent) = %v, want ErrNotExist", err)
	}
}

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
