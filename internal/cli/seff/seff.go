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
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/timefmt"
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
	ans, err := readmodel.GetAcctJob(ctx, env.Client, head)
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", prog, readmodel.ClientError(err))
		return 1
	}
	if ans.Status > 0 {
		for _, e := range ans.Errors {
			if e.Description != "" {
				fmt.Fprintln(env.Stderr, e.Description)
				return 1
			}
		}
		fmt.Fprintf(env.Stderr, "%s: error: HTTP %d\n", prog, ans.Status)
		return 1
	}
	// The newest run of the job (or of the array task asked for).
	var j *readmodel.AcctJob
	for i := range ans.Records {
		c := &ans.Records[i]
		if isTask {
			if !finite(c.ArrayTaskID) || strconv.FormatUint(uint64(c.ArrayTaskID), 10) != task {
				continue
			}
		} else if strconv.FormatUint(uint64(c.JobID), 10) != head {
			continue
		}
		if j == nil || c.RestartCnt >= j.RestartCnt {
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

// finite reports a number that is neither unset nor infinite.
func finite(v uint32) bool { return v != readmodel.NoVal && v != readmodel.Infinite }

// reqMem reads a memory request: 0 when unset or infinite.
func reqMem(v uint64) int64 {
	if v == readmodel.NoVal64 || v == readmodel.Infinite64 {
		return 0
	}
	return int64(v)
}

func report(env *clienv.Env, j *readmodel.AcctJob) {
	w := env.Stdout
	state := j.State
	code := int64(0)
	if rc := j.ExitCode.ReturnCode; j.ExitCode.Present && finite(rc) {
		code = int64(rc)
	}
	if finite(j.ArrayTaskID) {
		fmt.Fprintf(w, "Job ID: %d\nArray Job ID: %d_%d\n", j.JobID, j.ArrayJobID, j.ArrayTaskID)
	} else {
		fmt.Fprintf(w, "Job ID: %d\n", j.JobID)
	}
	fmt.Fprintf(w, "Cluster: %s\nUser/Group: %s/%s\nState: %s (exit code %d)\n", j.Cluster, j.User, j.Group, state, code)
	cores, memMB := readmodel.Count(j.AllocTRES, "cpu"), readmodel.Count(j.AllocTRES, "mem")
	nodes := int64(j.AllocNodes)
	if nodes > 1 {
		fmt.Fprintf(w, "Nodes: %d\nCores per node: %d\n", nodes, cores/nodes)
	} else {
		fmt.Fprintf(w, "Cores: %d\n", cores)
	}
	if state == "PENDING" {
		fmt.Fprintln(w, "Efficiency not available for jobs in the PENDING state.")
		return
	}
	cpuUsed := float64(j.TotalCPUSecs) + float64(j.TotalCPUMicrosec)/1e6
	wall := int64(j.Elapsed)
	coreWall := wall * cores
	var rssBytes int64
	for _, s := range j.Steps {
		for _, x := range s.MaxTRES {
			if x.Type == "mem" {
				rssBytes = max(rssBytes, x.Count)
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
	perNode, perCPU := reqMem(j.ReqMemPerNode), reqMem(j.ReqMemPerCPU)
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
