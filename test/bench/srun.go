package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// outputBytes is what the output figure's task writes: lines of 64 bytes.
const outputBytes = 64 << 20

// measureSrun is the job step figures of issue 4: srun's launch latency
// from its start to its exit (tasks started, run and reported back) for 8
// tasks on 4 nodes and for one task, output throughput through srun with
// --label, and 1,024 tasks on 64 nodes (Drover only: real Slurm here has
// four nodes). srun runs outside any job, so each run includes getting and
// releasing its allocation, as `srun hostname` at a prompt does.
func measureSrun(ctx context.Context, sys system, sz sizes, rec *recorder) error {
	in, err := sys.Fresh(ctx, freshOptions{})
	if err != nil {
		return err
	}
	for _, f := range []struct {
		fig  figure
		args []string
	}{
		{figure{Key: "srun-n8", Title: "srun -N4 -n8 hostname, start to exit", Unit: "ms", Command: "srun -N4 -n8 hostname"}, []string{"-N4", "-n8", "hostname"}},
		{figure{Key: "srun-n1", Title: "srun -n1 true, start to exit", Unit: "ms", Command: "srun -n1 true"}, []string{"-n1", "true"}},
	} {
		samples, err := timeCommand(ctx, in, max(sz.CommandRuns, 5), "srun", f.args...)
		if err != nil {
			in.Close()
			return err
		}
		rec.add(f.fig, sys.Name(), samples, "")
	}
	outF := figure{Key: "srun-output", Title: fmt.Sprintf("srun -l output throughput, %d MiB of 64-byte lines from one task", outputBytes>>20),
		Unit: "MiB/s", Higher: true, Command: fmt.Sprintf("srun -n1 -l sh -c 'yes <63 bytes> | head -c %d' > /dev/null", outputBytes)}
	var rates []float64
	for range sz.Runs {
		script := fmt.Sprintf("yes %s | head -c %d", "x23456789012345678901234567890123456789012345678901234567890ab", outputBytes)
		samples, err := timeCommand(ctx, in, 1, "srun", "-n1", "-l", "sh", "-c", script)
		if err != nil {
			in.Close()
			return err
		}
		rates = append(rates, float64(outputBytes>>20)/(samples[0]/1000))
	}
	rec.add(outF, sys.Name(), rates, "")
	in.Close()

	if sys.Name() != "Drover" {
		return nil
	}
	big, err := sys.Fresh(ctx, freshOptions{Nodes: 64, CPUs: 16})
	if err != nil {
		return err
	}
	defer big.Close()
	bigF := figure{Key: "srun-1024", Title: "srun -N64 -n1024 true on 64 node daemons, start to exit", Unit: "s", Command: "srun -N64 -n1024 true"}
	var walls []float64
	for range sz.Runs {
		devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, big.Command("srun"), "-N64", "-n1024", "true")
		cmd.Stdout = devNull
		wall, err := runTimed(cmd, big)
		devNull.Close()
		if err != nil {
			return fmt.Errorf("srun -N64 -n1024: %w", err)
		}
		walls = append(walls, wall.Seconds())
	}
	rec.add(bigF, sys.Name(), walls, "")
	return nil
}
