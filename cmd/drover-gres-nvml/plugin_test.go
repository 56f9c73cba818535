//go:build cgo

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/gres/discovery"
	"github.com/droverhq/drover/plugins/host"
	"github.com/droverhq/drover/plugins/protocol"
)

// buildPlugin builds this command into a temporary folder.
func buildPlugin(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the plugin")
	}
	bin := filepath.Join(t.TempDir(), prog)
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestPlugin runs the plugin as the node daemon does, over go-plugin,
// on the DGX A100 mock with its overlay.
func TestPlugin(t *testing.T) {
	bin := buildPlugin(t)
	events := filepath.Join(t.TempDir(), "events")
	p := host.OpenGres(host.Spec{Path: bin, Args: []string{"mock=dgxa100", "mock_cpus=16", "mock_events=" + events}}, "n1")
	defer p.Close()
	ctx := t.Context()

	rep, err := p.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Source != "mock:dgxa100" || len(rep.Devices) != 8 {
		t.Fatalf("Discover = %s with %d devices", rep.Source, len(rep.Devices))
	}
	if d := rep.Devices[5]; d.Cores != "8-15" || d.Links != "0,1,0,0,2,-1,2,2" || d.Type != "a100" {
		t.Errorf("device 5 = %+v", d)
	}

	prep, err := p.Prepare(ctx, protocol.PrepareRequest{JobID: 7, StepGPUs: []int{4, 5}, ConstrainDevices: true,
		Tasks: []protocol.PrepareTask{{GlobalID: 0}, {GlobalID: 1, LocalID: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"/dev/nvidia0", "/dev/nvidia1", "/dev/nvidia2", "/dev/nvidia3", "/dev/nvidia6", "/dev/nvidia7"}
	if diff := cmp.Diff(want, prep.Deny); diff != "" {
		t.Errorf("Deny (-want +got):\n%s", diff)
	}
	if len(prep.Env) != 0 {
		t.Errorf("one GPU model, yet Env = %v", prep.Env)
	}

	// An application's XID is logged, not reported; a fatal one is.
	if err := os.WriteFile(events, []byte("2 13\n4 79\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []gres.HealthEvent
	for deadline := time.Now().Add(10 * time.Second); len(got) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		h, err := p.Health(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if h.Error != "" {
			t.Fatal(h.Error)
		}
		got = append(got, h.Events...)
	}
	wantEv := []gres.HealthEvent{{Index: 4, UUID: rep.Devices[4].UUID, XID: 79}}
	if diff := cmp.Diff(wantEv, got); diff != "" {
		t.Errorf("Health events (-want +got):\n%s", diff)
	}
	if r := got[0].Reason(); r != "GPU 4 XID 79: GPU has fallen off the bus" {
		t.Errorf("reason %q", r)
	}

	// A plugin started again finds the lost GPU gone.
	p.Close()
	again := host.OpenGres(host.Spec{Path: bin, Args: []string{"mock=dgxa100", "mock_events=" + events}}, "n1")
	defer again.Close()
	rep, err = again.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Devices) != 7 || !cmp.Equal(rep.Lost, []int{4}) {
		t.Errorf("after XID 79: %d devices, lost %v", len(rep.Devices), rep.Lost)
	}

	bad := host.OpenGres(host.Spec{Path: bin, Args: []string{"mock=dgx1"}}, "n1")
	defer bad.Close()
	if _, err := bad.Discover(ctx); err == nil || !strings.Contains(err.Error(), `unknown NVML mock "dgx1"`) {
		t.Errorf("bad argument: %v", err)
	}
}

func TestDiscoverCommand(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"discover", "mock=dgxh100"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	rep, err := discovery.Decode(&out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Source != "mock:dgxh100" || len(rep.Devices) != 8 || rep.Devices[0].Type != "h100" {
		t.Errorf("report %+v", rep)
	}
	for _, args := range [][]string{{}, {"list"}, {"discover", "mock=dgx1"}, {"discover", "junk"}} {
		if code := run(args, &out, &errOut); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
	}
}
