package sim

import (
	"os"
	"testing"

	"github.com/droverhq/drover/internal/trace"
)

func TestProfHPC2N(t *testing.T) {
	path := os.Getenv("SIMTRACE")
	if path == "" {
		t.Skip()
	}
	tr, err := trace.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) > 60000 && os.Getenv("SIMALL") == "" {
		tr.Jobs = tr.Jobs[:60000]
	}
	r, err := Run(tr, Config{Cluster: Cluster{Nodes: 240, CPUs: 1}, Policy: Backfill})
	if err != nil {
		t.Fatal(err)
	}
	var w int64
	h := uint64(14695981039346656037)
	for _, o := range r.Outcomes {
		w += o.Start - o.Submit
		h ^= uint64(o.Start)
		h *= 1099511628211
	}
	t.Logf("hash %x", h)
	t.Logf("cycles %d wall %v sumwait %d", r.Cycles, r.Wall, w)
}
