//go:build cgo

package nvml

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gonvml "github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/gres"
)

func TestOverlayNUMA(t *testing.T) {
	lib, err := NewMock("dgxh100", MockOptions{CPUs: 16})
	if err != nil {
		t.Fatal(err)
	}
	devs, _, err := Discover(lib)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range devs {
		want := "0-7"
		if d.Index >= 4 {
			want = "8-15"
		}
		if d.Cores != want {
			t.Errorf("GPU %d cores = %q, want %q", d.Index, d.Cores, want)
		}
		h, _ := lib.DeviceGetHandleByIndex(d.Index)
		if numa, ret := h.GetNumaNodeId(); ret != gonvml.SUCCESS || numa != d.Index/4 {
			t.Errorf("GPU %d NUMA node = %d, %v", d.Index, numa, ret)
		}
	}
}

// TestWatchEvents injects XIDs through the events file: events written
// before the watch are not delivered again, later ones are, with the
// device's index and UUID, and an XID 79 in the file makes the GPU lost
// for the next mock.
func TestWatchEvents(t *testing.T) {
	events := filepath.Join(t.TempDir(), "events")
	if err := os.WriteFile(events, []byte("1 48\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	lib, err := NewMock("dgxa100", MockOptions{Events: events})
	if err != nil {
		t.Fatal(err)
	}
	devs, _, err := Discover(lib)
	if err != nil {
		t.Fatal(err)
	}
	w, err := Watch(lib, devs)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, err := os.OpenFile(events, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A line in two writes is read once whole.
	if _, err := f.WriteString("5 4"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * mockEventPoll)
	if _, err := f.WriteString("3\n2 79\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var got []gres.HealthEvent
	deadline := time.Now().Add(5 * time.Second)
	for len(got) < 2 && time.Now().Before(deadline) {
		evs, err := w.Take()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, evs...)
		time.Sleep(10 * time.Millisecond)
	}
	want := []gres.HealthEvent{
		{Index: 5, UUID: devs[5].UUID, XID: 43},
		{Index: 2, UUID: devs[2].UUID, XID: 79},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	again, err := NewMock("dgxa100", MockOptions{Events: events})
	if err != nil {
		t.Fatal(err)
	}
	devs, lost, err := Discover(again)
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) != 7 || !cmp.Equal(lost, []int{2}) {
		t.Errorf("after XID 79: %d devices, lost %v; want 7 and [2]", len(devs), lost)
	}
}

func TestParseArgs(t *testing.T) {
	c, err := ParseArgs([]string{"mock=dgxh100", "mock_cpus=32", "mock_events=/tmp/e", "ignore_xids=74,92", "health=no"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Mock != "dgxh100" || c.MockOptions.CPUs != 32 || c.MockOptions.Events != "/tmp/e" || !c.NoHealth || c.Source() != "mock:dgxh100" {
		t.Errorf("ParseArgs = %+v", c)
	}
	for _, x := range []uint64{13, 31, 74, 92} {
		if c.Policy.Fatal(gres.HealthEvent{XID: x}) {
			t.Errorf("XID %d is fatal, want ignored", x)
		}
	}
	if !c.Policy.Fatal(gres.HealthEvent{XID: 79}) {
		t.Error("XID 79 ignored")
	}
	none, err := ParseArgs([]string{"ignore_xids=none"})
	if err != nil || !none.Policy.Fatal(gres.HealthEvent{XID: 13}) || none.Source() != "nvml" {
		t.Errorf("ignore_xids=none: %+v, %v", none, err)
	}
	for _, bad := range []string{"mock=dgx1", "mock_cpus=0", "mock_events=", "ignore_xids=x", "health=maybe", "color=blue", "mock"} {
		if _, err := ParseArgs([]string{bad}); err == nil {
			t.Errorf("ParseArgs(%q) succeeded", bad)
		}
	}
}

func FuzzParseArgs(f *testing.F) {
	f.Add("mock=dgxa100 mock_cpus=16 ignore_xids=13,31")
	f.Add("health=no")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseArgs(strings.Fields(s))
		if err == nil && c.Policy.Ignore == nil {
			t.Fatal("nil policy")
		}
	})
}
