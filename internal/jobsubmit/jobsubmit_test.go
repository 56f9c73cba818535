package jobsubmit_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/jobsubmit"
	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/droverhq/drover/plugins/host"
	"github.com/droverhq/drover/plugins/protocol"
)

// chain builds the example plugin and runs it twice in a chain, as
// JobSubmitPlugins=a,b would.
func chain(t *testing.T) *jobsubmit.Chain {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the example plugin")
	}
	bin := filepath.Join(t.TempDir(), "job-submit-limits")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/droverhq/drover/examples/job-submit-limits").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c := jobsubmit.New(host.OpenJobSubmit(host.Spec{Path: bin, Name: "a"}), host.OpenJobSubmit(host.Spec{Path: bin, Name: "b"}))
	t.Cleanup(c.Close)
	return c
}

func TestChain(t *testing.T) {
	c := chain(t)
	ctx := context.Background()

	r := job.Request{Name: "train", UserID: 1000, GPUsPerNode: 4, GPUType: "a100", Gres: "gres/gpu:a100:4", Script: "#!/bin/sh\n"}
	msg, err := c.Submit(ctx, &r, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// The first plugin sets the limit and says so; the second sees it set.
	if msg != "no time limit given: the job gets 60 minutes" || r.TimeLimit != 60 {
		t.Errorf("Submit: msg %q, limit %d", msg, r.TimeLimit)
	}
	if r.GPUsPerNode != 4 || r.GPUType != "a100" || r.Name != "train" {
		t.Errorf("untouched fields changed: %+v", r)
	}

	big := job.Request{TimeLimit: 5, GPUsPerNode: 9}
	_, err = c.Submit(ctx, &big, 1000)
	if slurmerr.CodeOf(err) != slurmerr.InvalidGRES || detail(err) != "at most 8 GPUs per node (asked for 9)" {
		t.Errorf("9 GPUs: %v (code %d)", err, slurmerr.CodeOf(err))
	}

	cur := job.Request{TimeLimit: 60}
	upd := job.Request{TimeLimit: 300}
	if _, err := c.Modify(ctx, 7, &cur, &upd, 1000); slurmerr.CodeOf(err) != slurmerr.AccessDenied || detail(err) != "time limits above 120 minutes need an administrator" {
		t.Errorf("user raising to 300: %v", err)
	}
	if _, err := c.Modify(ctx, 7, &cur, &upd, 0); err != nil {
		t.Errorf("root raising to 300: %v", err)
	}
}

func detail(err error) string {
	var se *slurmerr.Error
	if !errors.As(err, &se) {
		return ""
	}
	return se.Detail
}

func TestDescApply(t *testing.T) {
	r := job.Request{Name: "a", Partition: "p", TimeLimit: 10, GPUsPerNode: 2, Gres: "gres/gpu:2", NumTasks: 4, Exclusive: true}
	d := jobsubmit.Desc(&r)
	if d.Gres != "gpu:2" || d.NumTasks != 4 || !d.Exclusive {
		t.Errorf("Desc = %+v", d)
	}
	d.Gres, d.Partition, d.UserID = "gpu:h100:3", "q", 99
	if err := jobsubmit.Apply(&r, &d); err != nil {
		t.Fatal(err)
	}
	want := job.Request{Name: "a", Partition: "q", TimeLimit: 10, GPUsPerNode: 3, GPUType: "h100", Gres: "gres/gpu:h100:3", NumTasks: 4, Exclusive: true}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("Apply (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"nic:2", "gpu:x:y:z"} {
		if err := jobsubmit.Apply(&r, &protocol.JobDesc{Gres: bad}); slurmerr.CodeOf(err) != slurmerr.InvalidGRES {
			t.Errorf("Apply gres %q: %v", bad, err)
		}
	}
}
