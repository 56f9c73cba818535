package daemon

import (
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/gres"
	gresconf "github.com/droverhq/drover/gres/conf"
)

func TestCheckDetected(t *testing.T) {
	var devs []gres.Device
	for i := range 4 {
		d := gres.Device{Index: i, Minor: i, Type: "a100", Name: "NVIDIA A100-SXM4-40GB", File: "/dev/nvidia" + string(rune('0'+i)), Cores: "0-15", Links: "-1,2,2,2"}
		if i >= 2 {
			d.Cores = "16-31"
		}
		devs = append(devs, d)
	}
	lines := []gresconf.Line{
		// Matches (the configured type names the model): kept, typed.
		{Name: "gpu", Type: "A100", Files: []string{"/dev/nvidia0"}, Cores: "0-7,8-15"},
		// Wrong cores: left out.
		{Name: "gpu", Files: []string{"/dev/nvidia2"}, Cores: "0-15"},
		// Wrong type: left out.
		{Name: "gpu", Type: "h100", Files: []string{"/dev/nvidia3"}},
		{Name: "nic", Files: []string{"/dev/nvidia1"}, Type: "x"},
	}
	got := checkDetected(devs, lines, slog.New(slog.DiscardHandler))
	var idx []int
	for _, d := range got {
		idx = append(idx, d.Index)
	}
	if diff := cmp.Diff([]int{0, 1}, idx); diff != "" {
		t.Errorf("kept (-want +got):\n%s", diff)
	}
	if got[0].Type != "A100" || got[1].Type != "a100" {
		t.Errorf("types %q %q", got[0].Type, got[1].Type)
	}
	if all := checkDetected(devs, nil, slog.New(slog.DiscardHandler)); len(all) != 4 {
		t.Errorf("no lines: %d devices", len(all))
	}
}
