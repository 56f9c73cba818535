package root

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/droverhq/drover/internal/sched"
	"github.com/droverhq/drover/internal/sim"
	"github.com/droverhq/drover/internal/trace"
)

func simCmd() *cobra.Command {
	var (
		c        sim.Cluster
		policies string
		chart    string
		params   string
		limit    int
	)
	cmd := &cobra.Command{
		Use:   "sim TRACE",
		Short: "replay a workload trace (SWF, or a GPU job trace) on simulated nodes with Drover's scheduler",
		Long: `Replays a workload trace in virtual time with the controller's own scheduler:
the Standard Workload Format of the Parallel Workloads Archive (plain or .gz),
or a GPU job trace (CSV: job_id,submission_time,duration,num_gpu; a .tar.gz
of such files is read whole, or one member with FILE.tar.gz:MEMBER).

An SWF trace runs on its machine's MaxProcs nodes of one processor unless
--nodes/--cpus say otherwise, and the site's own logged schedule is shown
beside the simulated ones. A GPU trace runs on --nodes nodes of --gpus GPUs;
a job of more GPUs than a node has takes whole nodes. Jobs' time limits are
the users' estimates, or their run times where the trace has none.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := trace.Open(args[0])
			if err != nil {
				return err
			}
			if limit > 0 && limit < len(t.Jobs) {
				t.Jobs = t.Jobs[:limit]
			}
			if err := simMachine(t, &c); err != nil {
				return err
			}
			bf, warnings := sched.ParseBackfillParams(params)
			if len(warnings) > 0 {
				return fmt.Errorf("--scheduler-parameters: %s", strings.Join(warnings, "; "))
			}
			capacity := c.Nodes * c.CPUs
			unit, unitName := c.CPUs, "CPU"
			if t.Kind == trace.GPU {
				capacity, unit, unitName = c.Nodes*c.GPUs, c.GPUs, "GPU"
			}
			var cols []sim.Column
			var series []sim.Series
			skipped := 0
			for _, p := range strings.Split(policies, ",") {
				res, err := sim.Run(t, sim.Config{Cluster: c, Policy: sim.Policy(strings.TrimSpace(p)), Backfill: bf})
				if err != nil {
					return err
				}
				skipped = res.Skipped
				cols = append(cols, sim.Column{Name: string(res.Policy), Metrics: sim.Summarise(res.Outcomes, capacity), Run: res})
				series = append(series, sim.Series{Name: string(res.Policy), Waits: sim.Waits(res.Outcomes)})
			}
			if site := sim.SiteOutcomes(t, c); len(site) > 0 {
				cols = append(cols, sim.Column{Name: "site log", Metrics: sim.Summarise(site, capacity)})
				series = append(series, sim.Series{Name: "site log", Waits: sim.Waits(site)})
			}
			header := []string{
				fmt.Sprintf("trace    %s: %s jobs (%d left out of the trace as unreplayable, %d larger than the machine)", t.Name, sim.Thousands(len(t.Jobs)), t.Skipped, skipped),
				fmt.Sprintf("machine  %d nodes x %d %s", c.Nodes, unit, unitName+plural(unit)),
				"",
			}
			if err := sim.Report(os.Stdout, header, cols); err != nil {
				return err
			}
			if chart != "" {
				if err := sim.Chart(chart, "Waits on "+t.Name, series); err != nil {
					return err
				}
				fmt.Printf("\nchart: %s\n", chart)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&c.Nodes, "nodes", 0, "simulated nodes (SWF default: the trace's MaxProcs / --cpus; required for GPU traces)")
	f.IntVar(&c.CPUs, "cpus", 0, "CPUs per node (default 1 for SWF traces, 64 for GPU traces)")
	f.IntVar(&c.GPUs, "gpus", 8, "GPUs per node, for GPU traces")
	f.StringVar(&policies, "policy", "fifo,backfill", "schedulers to compare: fifo (sched/builtin), backfill (sched/backfill)")
	f.StringVar(&params, "scheduler-parameters", "", "SchedulerParameters for backfill (bf_window=, bf_resolution=, bf_max_job_test=, bf_interval=...)")
	f.StringVar(&chart, "chart", "", "write a chart of the waits to this .svg or .png file")
	f.IntVar(&limit, "jobs", 0, "replay only the first N jobs of the trace")
	return cmd
}

// simMachine fills in the simulated machine's defaults for a trace.
func simMachine(t *trace.Trace, c *sim.Cluster) error {
	if t.Kind == trace.GPU {
		if c.Nodes <= 0 {
			return fmt.Errorf("a GPU trace needs --nodes (nodes of --gpus %d GPUs)", c.GPUs)
		}
		if c.GPUs <= 0 {
			return fmt.Errorf("a GPU trace needs --gpus of at least 1")
		}
		if c.CPUs <= 0 {
			c.CPUs = 64
		}
		return nil
	}
	c.GPUs = 0
	if c.CPUs <= 0 {
		c.CPUs = 1
	}
	if c.Nodes <= 0 {
		if t.MaxProcs <= 0 {
			return fmt.Errorf("the trace has no MaxProcs header: give --nodes")
		}
		c.Nodes = max(t.MaxProcs/c.CPUs, 1)
	}
	return nil
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
