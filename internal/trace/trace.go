// Package trace reads workload traces for the simulator: the Standard
// Workload Format of the Parallel Workloads Archive and the GPU job traces
// of deep-learning clusters (job, submission time, duration, GPUs), plain,
// gzip-compressed or as members of a .tar.gz.
package trace

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Job is one job of a trace. Times are in seconds from the trace's start.
type Job struct {
	// ID is the trace's job number or name.
	ID     string
	Submit int64
	// Run is how long the job ran.
	Run int64
	// Estimate is the user's runtime estimate (the time limit asked for);
	// 0 when the trace has none.
	Estimate int64
	// Procs is the processors a CPU job used; GPUs the GPUs a GPU job used.
	Procs int
	GPUs  int
	// Wait is how long the job waited on the site's own machine (-1:
	// unknown, or not in the trace).
	Wait int64
	User int
}

// Kind says what a trace's jobs ask for.
type Kind int

// Trace kinds.
const (
	CPU Kind = iota // SWF: processors
	GPU             // GPU trace: GPUs
)

// Trace is a parsed workload.
type Trace struct {
	Name string
	Kind Kind
	Jobs []Job
	// MaxProcs is the machine's size from an SWF header (0: not given).
	MaxProcs int
	// MaxNodes is its number of nodes, from the same header (0: not
	// given); MaxProcs/MaxNodes is the processors of a node.
	MaxNodes int
	// Start is the Unix time submission times count from (an SWF
	// header's UnixStartTime; 0: not given).
	Start int
	// Skipped counts job lines left out because they cannot be replayed
	// (no run time, no processors), as the archive's own tools do.
	Skipped int
}

// Open reads a trace file. A ".tar.gz" is read member by member (CSV
// members only); "FILE.tar.gz:MEMBER" reads one member. Gzip is
// recognised by its magic number.
func Open(path string) (*Trace, error) {
	file, member, _ := strings.Cut(path, ".tar.gz:")
	if member != "" {
		file += ".tar.gz"
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := maybeGunzip(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	name := filepath.Base(path)
	if strings.HasSuffix(file, ".tar.gz") || strings.HasSuffix(file, ".tgz") {
		t, err := readTar(r, member, name)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return t, nil
	}
	t, err := Read(r, name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func maybeGunzip(br *bufio.Reader) (io.Reader, error) {
	magic, err := br.Peek(2)
	if err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		return gzip.NewReader(br)
	}
	return br, nil
}

// readTar merges the CSV members of a tar stream (or reads one), sorting
// the jobs by submission time.
func readTar(r io.Reader, member, name string) (*Trace, error) {
	tr := tar.NewReader(r)
	out := &Trace{Name: name, Kind: GPU}
	found := false
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		base := filepath.Base(h.Name)
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(base, ".csv") || (member != "" && base != member && h.Name != member) {
			continue
		}
		found = true
		t, err := ReadGPU(tr, base)
		if err != nil {
			return nil, err
		}
		out.Jobs = append(out.Jobs, t.Jobs...)
		out.Skipped += t.Skipped
	}
	if !found {
		if member != "" {
			return nil, fmt.Errorf("no member %q", member)
		}
		return nil, errors.New("no CSV member")
	}
	slices.SortStableFunc(out.Jobs, func(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) })
	return out, nil
}

// Read parses a trace, SWF or GPU CSV, telling them apart by their
// first line.
func Read(r io.Reader, name string) (*Trace, error) {
	br := bufio.NewReader(r)
	first, _ := br.Peek(64)
	if bytes.HasPrefix(bytes.TrimLeft(first, "\ufeff"), []byte("job_id,")) {
		return ReadGPU(br, name)
	}
	return ReadSWF(br, name)
}

// Scale makes the trace the workload of a machine n times as large with
// the same offered load: the machine's processors and nodes are
// multiplied by n and jobs arrive n times as fast (submission times,
// counted from the first, divided by n), each job as large and as long
// as in the log. The logged waits no longer apply and are dropped.
func (t *Trace) Scale(n int) error {
	if n < 1 {
		return fmt.Errorf("scale %d: at least 1", n)
	}
	if n == 1 || len(t.Jobs) == 0 {
		return nil
	}
	t.MaxProcs *= n
	t.MaxNodes *= n
	first := t.Jobs[0].Submit
	for i := range t.Jobs {
		first = min(first, t.Jobs[i].Submit)
	}
	for i := range t.Jobs {
		j := &t.Jobs[i]
		j.Submit = first + (j.Submit-first)/int64(n)
		j.Wait = -1
	}
	return nil
}
