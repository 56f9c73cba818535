package drovercmd

import (
	"fmt"
	"os"
	"strings"
	"time"

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
		scale    int
	)
	cmd := &cobra.Command{
		Use:   "sim TRACE",
		Short: "replay a workload trace (SWF, or a GPU job trace) on simulated nodes with Drover's scheduler",
		Long: `Replays a workload trace in virtual time with the controller's own scheduler:
the Standard Workload Format of the Parallel Workloads Archive (plain or .gz),
or a GPU job trace (CSV: job_id,submission_time,duration,num_gpu; a .tar.gz
of such files is read whole, or one member with FILE.tar.gz:MEMBER).

An SWF trace runs on its machine as its header describes it: MaxNodes nodes
of MaxProcs/MaxNodes processors (MaxProcs nodes of one processor when the
header names no nodes) unless --nodes/--cpus say otherwise, and the site's
own logged schedule is shown beside the simulated ones. --scale N replays
it on a machine N times as large with jobs arriving N times as fast (the
same load; the site's schedule is then not shown). A GPU trace runs on --nodes nodes of --gpus GPUs;
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
			if err := t.Scale(scale); err != nil {
				return fmt.Errorf("--scale: %w", err)
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
				policy := sim.Policy(strings.TrimSpace(p))
				res, err := sim.Run(t, sim.Config{Cluster: c, Policy: policy, Backfill: bf,
					Progress: progressLine(os.Stderr, string(policy), t)})
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
			if len(cols) > 0 && cols[len(cols)-1].Run == nil {
				fmt.Println("\nsite log: the schedule the site logged, with what the simulation leaves out: jobs held by\n" +
					"their users or waiting on dependencies, outages and drained nodes, reservations, other\n" +
					"partitions and their limits, priorities other than submission order.")
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
	f.IntVar(&scale, "scale", 1, "replay on a machine N times the trace's, jobs arriving N times as fast")
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
		if t.MaxNodes > 0 && t.MaxProcs >= t.MaxNodes && t.MaxProcs%t.MaxNodes == 0 {
			c.CPUs = t.MaxProcs / t.MaxNodes
		}
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

// progressLine reports a long replay's progress on w about once a second:
// jobs ended, the simulated date, and the rate so far. On a terminal the
// line is rewritten in place.
func progressLine(w *os.File, policy string, t *trace.Trace) func(sim.Progress) {
	term := false
	if fi, err := w.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		term = true
	}
	begin := time.Now()
	last := begin
	shown := false
	return func(p sim.Progress) {
		now := time.Now()
		if !p.Done && now.Sub(last) < time.Second {
			return
		}
		if p.Done && !shown {
			return // a replay shorter than a second needs no progress line
		}
		last, shown = now, true
		date := fmt.Sprintf("day %d", p.Now/86400)
		if t.Start > 0 {
			date = time.Unix(int64(t.Start)+p.Now, 0).UTC().Format("2006-01-02 15:04")
		}
		rate := float64(p.Ended) / max(now.Sub(begin).Seconds(), 1e-9)
		line := fmt.Sprintf("sim %s: %s of %s jobs done, simulated %s, %s jobs/s", policy,
			sim.Thousands(p.Ended), sim.Thousands(p.Total), date, sim.Thousands(int(rate)))
		switch {
		case term && p.Done:
			fmt.Fprintf(w, "\r\033[K%s\n", line)
		case term:
			fmt.Fprintf(w, "\r\033[K%s", line)
		default:
			fmt.Fprintln(w, line)
		}
	}
}
