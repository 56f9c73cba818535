// Package discovery is the JSON report of GPU discovery that
// `drover-gres-nvml discover` prints for an administrator (what slurmd -G
// shows in Slurm), and its reader.
package discovery

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/droverhq/drover/gres"
)

// SourceNVML is the Source of a report read from the real NVML library.
const SourceNVML = "nvml"

// Report is what `drover-gres-nvml discover` prints on stdout, one JSON
// object: {"source": "nvml", "devices": [ {...}, ... ]}.
type Report struct {
	// Source says where the devices come from: "nvml" or "mock:<name>"
	// (see MockSource).
	Source string `json:"source"`
	// Devices are the GPUs found, in NVML index order; empty, not null,
	// on a node without GPUs.
	Devices []gres.Device `json:"devices"`
	// Lost are the indices of GPUs NVML counts but cannot use.
	Lost []int `json:"lost,omitempty"`
}

// MockSource is the Source of a report made from go-nvml's mock name.
func MockSource(name string) string { return "mock:" + name }

// Write encodes the report as the helper prints it: indented JSON and a
// final newline.
func (r *Report) Write(w io.Writer) error {
	out := *r
	if out.Devices == nil {
		out.Devices = []gres.Device{}
	}
	b, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("encode discovery report: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write discovery report: %w", err)
	}
	return nil
}

// Decode reads one report and checks it: a source, and for every device a
// UUID, a device file and an index above the previous device's (a lost
// GPU leaves a gap).
func Decode(r io.Reader) (*Report, error) {
	dec := json.NewDecoder(r)
	var rep Report
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("decode discovery report: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("decode discovery report: data after the report")
	}
	if rep.Source == "" {
		return nil, errors.New("discovery report has no source")
	}
	for i, d := range rep.Devices {
		switch {
		case d.Index < 0 || (i > 0 && d.Index <= rep.Devices[i-1].Index):
			return nil, fmt.Errorf("discovery report: device %d has index %d", i, d.Index)
		case d.UUID == "":
			return nil, fmt.Errorf("discovery report: device %d has no UUID", i)
		case d.File == "":
			return nil, fmt.Errorf("discovery report: device %d has no device file", i)
		}
	}
	if rep.Devices == nil {
		rep.Devices = []gres.Device{}
	}
	return &rep, nil
}
