// Package seff is the drop-in `seff` command: the efficiency report of
// one job that Slurm's contrib script prints, from the job's accounting
// record (GET /slurmdb/v0.0.44/job/{id}): the CPU time its steps used
// against the cores it held for its wall-clock time, and the largest
// resident set of its steps against the memory it asked for.
package seff

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/timefmt"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Run is the seff command.
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	prog := "seff"
	if len(args) == 1 && (args[0] == "-h" || args[0] == "--help") {
		fmt.Fprintf(env.Stdout, "Usage: %s [Options] <Jobid>\n       Options:\n       -h    Help menu\n       -v    Version\n       -d    Debug mode: display raw Slurm data\n", prog)
		return 0
	}
	if len(args) == 1 && (args[0] == "-v" || args[0] == "--version") {
		fmt.Fprintln(env.Stdout, "seff Version 2.1")
		return 0
	}
	if len(args) != 1 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(env.Stderr, "Usage: %s [Options] <Jobid>\n", prog)
		return 1
	}
	head, task, isTask := strings.Cut(args[0], "_")
	if _, err := strconv.ParseUint(head, 10, 32); err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: Invalid job id: %s\n", prog, args[0])
		return 1
	}
	res, err := env.Client.SlurmdbV0044GetJob(ctx, v0044.SlurmdbV0044GetJobParams{JobID: head})
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, err)
		return 1
	}
	var jobs v0044.V0044JobList
	switch r := res.(type) {
	case *v0044.V0044OpenapiSlurmdbdJobsResp:
		jobs = r.Jobs
	case *v0044.V0044OpenapiSlurmdbdJobsRespStatusCode:
		for _, e := range r.Response.Errors {
			if d := e.Description.Or(""); d != "" {
				fmt.Fprintln(env.Stderr, d)
				return 1
			}
		}
		fmt.Fprintf(env.Stderr, "%s: error: HTTP %d\n", prog, r.StatusCode)
		return 1
	}
	// The newest run of the job (or of the array task asked for).
	var j *v0044.V0044Job
	for i := range jobs {
		c := &jobs[i]
		arr := c.Array.Or(v0044.V0044JobArray{})
		if isTask {
			t, ok := arr.TaskID.Get()
			if !ok || !t.Set.Or(false) || strconv.Itoa(int(t.Number.Or(0))) != task {
				continue
			}
		} else if strconv.Itoa(int(c.JobID.Or(0))) != head {
			continue
		}
		if j == nil || c.RestartCnt.Or(0) >= j.RestartCnt.Or(0) {
			j = c
		}
	}
	if j == nil {
		fmt.Fprintln(env.Stderr, "Job not found.")
		return 1
	}
	report(env, j)
	return 0
}

func report(env *clienv.Env, j *v0044.V0044Job) {
	w := env.Stdout
	state := ""
	if cur := j.State.Or(v0044.V0044JobState{}).Current; len(cur) > 0 {
		state = string(cur[0])
	}
	exit := j.ExitCode.Or(v0044.V0044ProcessExitCodeVerbose{})
	code := int64(0)
	if rc, ok := exit.ReturnCode.Get(); ok && rc.Set.Or(false) {
		code = int64(rc.Number.Or(0))
	}
	arr := j.Array.Or(v0044.V0044JobArray{})
	if t, ok := arr.TaskID.Get(); ok && t.Set.Or(false) {
		fmt.Fprintf(w, "Job ID: %d\nArray Job ID: %d_%d\n", j.JobID.Or(0), arr.JobID.Or(0), t.Number.Or(0))
	} else {
		fmt.Fprintf(w, "Job ID: %d\n", j.JobID.Or(0))
	}
	fmt.Fprintf(w, "Cluster: %s\nUser/Group: %s/%s\nState: %s (exit code %d)\n", j.Cluster.Or(""), j.User.Or(""), j.Group.Or(""), state, code)
	var cores, memMB int64
	for _, t := range j.Tres.Or(v0044.V0044JobTres{}).Allocated {
		switch t.Type {
		case "cpu":
			cores = t.Count.Or(0)
		case "mem":
			memMB = t.Count.Or(0)
		}
	}
	nodes := int64(j.AllocationNodes.Or(0))
	if nodes > 1 {
		fmt.Fprintf(w, "Nodes: %d\nCores per node: %d\n", nodes, cores/nodes)
	} else {
		fmt.Fprintf(w, "Cores: %d\n", cores)
	}
	if state == "PENDING" {
		fmt.Fprintln(w, "Efficiency not available for jobs in the PENDING state.")
		return
	}
	t := j.Time.Or(v0044.V0044JobTime{})
	total := t.Total.Or(v0044.V0044JobTimeTotal{})
	cpuUsed := float64(total.Seconds.Or(0)) + float64(total.Microseconds.Or(0))/1e6
	wall := int64(t.Elapsed.Or(0))
	coreWall := wall * cores
	var rssBytes int64
	for _, s := range j.Steps {
		in := s.Tres.Or(v0044.V0044StepTres{}).Requested.Or(v0044.V0044StepTresRequested{})
		for _, x := range in.Max {
			if x.Type == "mem" {
				rssBytes = max(rssBytes, x.Count.Or(0))
			}
		}
	}
	fmt.Fprintf(w, "CPU Utilized: %s\n", timefmt.FormatDurationPadded(int64(math.Round(cpuUsed))))
	eff := 0.0
	if coreWall > 0 {
		eff = cpuUsed / float64(coreWall) * 100
	}
	fmt.Fprintf(w, "CPU Efficiency: %.2f%% of %s core-walltime\n", eff, timefmt.FormatDurationPadded(coreWall))
	fmt.Fprintf(w, "Job Wall-clock time: %s\n", timefmt.FormatDurationPadded(wall))
	fmt.Fprintf(w, "Memory Utilized: %s (estimated maximum)\n", kbytes(float64(rssBytes)/1024))
	req := j.Required.Or(v0044.V0044JobRequired{})
	perNode, perCPU := int64(0), int64(0)
	if m, ok := req.MemoryPerNode.Get(); ok && m.Set.Or(false) {
		perNode = m.Number.Or(0)
	}
	if m, ok := req.MemoryPerCPU.Get(); ok && m.Set.Or(false) {
		perCPU = m.Number.Or(0)
	}
	if memMB == 0 {
		memMB = perNode * max(nodes, 1)
		if perCPU > 0 {
			memMB = perCPU * cores
		}
	}
	memEff := 0.0
	if memMB > 0 {
		memEff = float64(rssBytes) / float64(memMB<<20) * 100
	}
	switch {
	case perCPU > 0:
		fmt.Fprintf(w, "Memory Efficiency: %.2f%% of %s (%s/core)\n", memEff, kbytes(float64(memMB)*1024), kbytes(float64(perCPU)*1024))
	default:
		fmt.Fprintf(w, "Memory Efficiency: %.2f%% of %s (%s/node)\n", memEff, kbytes(float64(memMB)*1024), kbytes(float64(memMB/max(nodes, 1))*1024))
	}
	if state == "RUNNING" {
		fmt.Fprintln(w, "WARNING: Efficiency statistics may be misleading for RUNNING jobs.")
	}
}

// kbytes is the script's kbytes2str: "0.00 MB" for nothing, else the
// largest unit below 1024 with two decimals ("500.00 KB", "1.50 GB").
func kbytes(kb float64) string {
	if kb <= 0 {
		return "0.00 MB"
	}
	units := []string{"K", "M", "G", "T", "P", "E"}
	exp := int(math.Log(kb) / math.Log(1024))
	exp = max(0, min(exp, len(units)-1))
	return fmt.Sprintf("%.2f %sB", kb/math.Pow(1024, float64(exp)), units[exp])
}
