package controller_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
)

// quadGPUs are four GPUs in two NVLinked pairs (0-1 and 2-3, two links
// each, one link 1-2), pairs near different CPUs.
func quadGPUs() []nodeproto.GPU {
	links := []string{"-1,2,0,0", "2,-1,1,0", "0,1,-1,2", "0,0,2,-1"}
	var out []nodeproto.GPU
	for i := range 4 {
		cores := "0-3"
		if i >= 2 {
			cores = "4-7"
		}
		out = append(out, nodeproto.GPU{Index: i, Type: "a100", Minor: i, UUID: "GPU-" + string(rune('a'+i)), Cores: cores, Links: links[i]})
	}
	return out
}

// TestGPUsLowerThanConfigured drains a node that registers with fewer GPUs
// than slurm.conf gives it, with slurmctld's reason, and schedules no GPU
// work there.
func TestGPUsLowerThanConfigured(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	gpus := quadGPUs()[:3]
	if _, err := c.Ctl.Register(ctx, nodeproto.Register{Name: "n2", Addr: c.Node.Addr(), CPUs: 8, RealMemory: 16000, GPUs: gpus}); err != nil {
		t.Fatal(err)
	}
	ni, _ := c.Ctl.Node("n2")
	if !ni.Node.Drain || ni.Node.Reason != "gpu count reported lower than configured (3 < 4)" {
		t.Errorf("n2 drain %v reason %q", ni.Node.Drain, ni.Node.Reason)
	}
	if len(ni.Node.GPUs) != 3 {
		t.Errorf("n2 has %d GPUs, want the 3 reported", len(ni.Node.GPUs))
	}
	// Another registration keeps the first reason.
	if _, err := c.Ctl.Register(ctx, nodeproto.Register{Name: "n2", Addr: c.Node.Addr(), GPUs: gpus[:2]}); err != nil {
		t.Fatal(err)
	}
	if ni, _ := c.Ctl.Node("n2"); ni.Node.Reason != "gpu count reported lower than configured (3 < 4)" {
		t.Errorf("reason after a second registration: %q", ni.Node.Reason)
	}
	if ni, _ := c.Ctl.Node("n1"); ni.Node.Drain {
		t.Errorf("n1 drained: %q", ni.Node.Reason)
	}
}

// TestGPUSelectionFollowsNVLink places two-GPU jobs and steps on NVLinked
// pairs rather than the lowest free indices.
func TestGPUSelectionFollowsNVLink(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	if _, err := c.Ctl.Register(ctx, nodeproto.Register{Name: "n1", Addr: c.Node.Addr(), CPUs: 8, RealMemory: 16000, GPUs: quadGPUs()}); err != nil {
		t.Fatal(err)
	}
	onN1 := func(r *job.Request) { r.NodeList = []string{"n1"}; r.TimeLimit = 30 }
	one := c.Submit(ctltest.Alice, ctltest.Request(onN1, func(r *job.Request) { r.GPUsPerNode = 1 }))
	schedule(t, c)
	two := c.Submit(ctltest.Alice, ctltest.Request(onN1, func(r *job.Request) { r.GPUsPerNode = 2 }))
	schedule(t, c)
	got := map[string][]int{"one": c.Job(one).Alloc.Nodes[0].GPUs, "two": c.Job(two).Alloc.Nodes[0].GPUs}
	want := map[string][]int{"one": {0}, "two": {2, 3}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("GPUs (-want +got):\n%s", diff)
	}
}
