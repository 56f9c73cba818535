package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/testutil"
)

// measurePlugins is issue 5's figures, Drover only: what a chain of three
// SPANK plugins (the NCCL plugin and two that do nothing per task) adds
// to a step's launch, against none; a task started in a container by the
// container plugin and runc against a bare one; and choosing GPUs on an
// 8-GPU NVLink node.
func measurePlugins(ctx context.Context, sys system, sz sizes, work string, rec *recorder) error {
	dir := filepath.Join(work, "plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	bins := map[string]string{}
	for name, pkg := range map[string]string{
		"nccl":      "github.com/droverhq/drover/cmd/drover-spank-nccl",
		"noop":      "github.com/droverhq/drover/test/bench/noopspank",
		"container": "github.com/droverhq/drover/cmd/drover-spank-container",
	} {
		bins[name] = filepath.Join(dir, name)
		build := exec.Command("go", "build", "-trimpath", "-o", bins[name], pkg)
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w: %s", pkg, err, out)
		}
	}
	noop2 := filepath.Join(dir, "noop2")
	if err := os.Link(bins["noop"], noop2); err != nil && !os.IsExist(err) {
		return err
	}
	chain := fmt.Sprintf("required %s\nrequired %s\nrequired %s\n", bins["nccl"], bins["noop"], noop2)
	steps := []struct {
		key, cmd string
		args     []string
	}{
		{"n1", "srun -n1 true", []string{"-n1", "true"}},
		{"n8", "srun -N1 -n8 true", []string{"-N1", "-n8", "true"}},
	}
	// Both clusters run side by side and take turns, one run each, so
	// that the machine's drift weighs on both alike.
	none, err := sys.Fresh(ctx, freshOptions{})
	if err != nil {
		return err
	}
	defer none.Close()
	three, err := sys.Fresh(ctx, freshOptions{PlugStack: chain})
	if err != nil {
		return err
	}
	defer three.Close()
	runs := max(sz.CommandRuns, 9)
	for _, s := range steps {
		if err := alternate(ctx, rec, sys.Name(), runs, "srun", s.args,
			[]figure{
				{Key: "plugins-" + s.key + "-none", Unit: "ms", Command: s.cmd, Title: s.cmd + " without SPANK plugins, start to exit"},
				{Key: "plugins-" + s.key + "-three", Unit: "ms", Command: s.cmd, Title: s.cmd + " with three SPANK plugins (NCCL, two no-ops), start to exit"},
			}, none, three); err != nil {
			return err
		}
	}

	if rootfs, why := containerImage(dir); why != "" {
		rec.log("container figure skipped: %s", why)
	} else {
		in, err := sys.Fresh(ctx, freshOptions{PlugStack: "required " + bins["container"] + "\n"})
		if err != nil {
			return err
		}
		defer in.Close()
		bare := figure{Key: "container-bare", Unit: "ms", Command: "srun -n1 true", Title: "srun -n1 true, bare task, start to exit"}
		ctr := figure{Key: "container-runc", Unit: "ms", Command: "srun -n1 --container-image=DIR true", Title: "srun -n1 true in a busybox container (runc), start to exit"}
		if err := alternateArgs(ctx, rec, sys.Name(), runs, in, "srun",
			[][]string{{"-n1", "true"}, {"-n1", "--container-image=" + rootfs, "true"}}, []figure{bare, ctr}); err != nil {
			return err
		}
	}

	gpus := meshGPUs()
	for _, want := range []int{2, 4} {
		free := []int{0, 1, 2, 4, 5, 6, 7}
		r := testing.Benchmark(func(b *testing.B) {
			for b.Loop() {
				gres.PickGPUs(gpus, free, want)
			}
		})
		f := figure{Key: fmt.Sprintf("gpu-pick-%d", want), Unit: "µs", Command: "gres.PickGPUs",
			Title: fmt.Sprintf("choose %d of 7 free GPUs on an 8-GPU NVLink mesh", want)}
		rec.add(f, sys.Name(), []float64{float64(r.NsPerOp()) / 1000}, "")
	}
	return nil
}

// alternate times one command on several instances in turn, after one
// warm-up run on each, and records figs[i] for instance i.
func alternate(ctx context.Context, rec *recorder, system string, runs int, name string, args []string, figs []figure, ins ...instance) error {
	samples := make([][]float64, len(ins))
	for i := -1; i < runs; i++ {
		for k, in := range ins {
			got, err := timeOnce(ctx, in, name, args...)
			if err != nil {
				return err
			}
			if i >= 0 {
				samples[k] = append(samples[k], got)
			}
		}
	}
	for k, f := range figs {
		rec.add(f, system, samples[k], "")
	}
	return nil
}

// alternateArgs times several commands on one instance in turn.
func alternateArgs(ctx context.Context, rec *recorder, system string, runs int, in instance, name string, args [][]string, figs []figure) error {
	samples := make([][]float64, len(args))
	for i := -1; i < runs; i++ {
		for k, a := range args {
			got, err := timeOnce(ctx, in, name, a...)
			if err != nil {
				return err
			}
			if i >= 0 {
				samples[k] = append(samples[k], got)
			}
		}
	}
	for k, f := range figs {
		rec.add(f, system, samples[k], "")
	}
	return nil
}

// timeOnce runs a command (a name, or a program's absolute path) once and
// returns its wall time in ms.
func timeOnce(ctx context.Context, in instance, name string, args ...string) (float64, error) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, err
	}
	defer devNull.Close()
	path := name
	if !filepath.IsAbs(path) {
		path = in.Command(name)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout = devNull
	wall, err := runTimed(cmd, in)
	if err != nil {
		return 0, fmt.Errorf("%s %v: %w", name, args, err)
	}
	return float64(wall.Microseconds()) / 1000, nil
}

// meshGPUs is the NVML mock overlay's node: two quads of GPUs, two links
// within a quad, one to the peer across; quads near different CPUs.
func meshGPUs() []gres.TopoGPU {
	var out []gres.TopoGPU
	for i := range 8 {
		g := gres.TopoGPU{Index: i, Cores: "0-7", Links: make([]int, 8)}
		if i >= 4 {
			g.Cores = "8-15"
		}
		for j := range 8 {
			switch {
			case j == i:
				g.Links[j] = -1
			case j/4 == i/4:
				g.Links[j] = 2
			case j == i^4:
				g.Links[j] = 1
			}
		}
		out = append(out, g)
	}
	return out
}

// containerImage makes a busybox root file system for the container
// figure, or says why it cannot (no root, no runc, no static busybox).
func containerImage(dir string) (string, string) {
	if os.Geteuid() != 0 {
		return "", "not root"
	}
	if _, err := exec.LookPath("runc"); err != nil {
		if _, err := os.Stat("/usr/sbin/runc"); err != nil {
			return "", "no runc"
		}
	}
	bb := testutil.StaticBusybox()
	if bb == "" {
		return "", "no static busybox"
	}
	root, err := testutil.BusyboxRootfs(dir, bb, []string{"true"}, nil)
	if err != nil {
		return "", err.Error()
	}
	return root, ""
}
