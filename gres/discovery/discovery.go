// Package discovery is the pure-Go side of GPU discovery: the JSON report
// that the drover-gres-nvml helper prints, and Run, which executes the
// helper and reads that report. The node daemon uses it so that the drover
// binary itself stays free of cgo and NVML.
package discovery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/droverhq/drover/gres"
)

// SourceNVML is the Source of a report read from the real NVML library.
const SourceNVML = "nvml"

// DefaultTimeout bounds a helper run when the context has no deadline of its
// own. NVML initialisation on a large node takes a few seconds at most; a
// hung driver must not hang node registration.
const DefaultTimeout = 30 * time.Second

// maxReportBytes bounds the helper's stdout, far above eight GPUs' worth.
const maxReportBytes = 8 << 20

// maxStderrBytes bounds how much of the helper's stderr goes into errors.
const maxStderrBytes = 4 << 10

// Report is what `drover-gres-nvml discover` prints on stdout, one JSON
// object: {"source": "nvml", "devices": [ {...}, ... ]}.
type Report struct {
	// Source says where the devices come from: "nvml" or "mock:<name>"
	// (see MockSource).
	Source string `json:"source"`
	// Devices are the GPUs found, in NVML index order; empty, not null,
	// on a node without GPUs.
	Devices []gres.Device `json:"devices"`
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
// UUID, a device file and an index equal to its position.
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
		case d.Index != i:
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

// Run executes `binary discover [--mock=mock]` and returns its report. An
// empty mock means the real NVML library. The run is bounded by ctx, or by
// DefaultTimeout when ctx has no deadline. Errors name the binary and carry
// the helper's stderr, which says why NVML failed (no driver, no
// permission).
func Run(ctx context.Context, binary, mock string) (*Report, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	args := []string{"discover"}
	if mock != "" {
		args = append(args, "--mock="+mock)
	}
	cmd := exec.CommandContext(ctx, binary, args...)
	stdout := &capped{max: maxReportBytes}
	stderr := &capped{max: maxStderrBytes}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// Do not wait for grandchildren holding the pipes once the helper is
	// killed.
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	name := binary + " " + strings.Join(args, " ")
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, fmt.Errorf("%s: %w%s", name, ctxErr, stderr.suffix())
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w%s", name, err, stderr.suffix())
	}
	if stdout.truncated {
		return nil, fmt.Errorf("%s: report larger than %d bytes", name, maxReportBytes)
	}
	rep, err := Decode(bytes.NewReader(stdout.buf.Bytes()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w%s", name, err, stderr.suffix())
	}
	return rep, nil
}

// capped keeps the first max bytes written to it and drops the rest, so a
// runaway helper cannot fill memory; it never fails a write, which would
// kill the helper with EPIPE before it reports why.
type capped struct {
	buf       bytes.Buffer
	max       int
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.max - c.buf.Len()
	if room < len(p) {
		c.truncated = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	c.buf.Write(p)
	return len(p), nil
}

// suffix renders captured stderr for an error message: ": <text>" or "".
func (c *capped) suffix() string {
	s := strings.TrimSpace(c.buf.String())
	if s == "" {
		return ""
	}
	if c.truncated {
		s += " [...]"
	}
	return ": " + s
}
