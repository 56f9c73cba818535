package scontrol

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
	stepproto "github.com/droverhq/drover/internal/step/proto"
)

// showSteps is "show step [JOB[.STEP]]": the running steps as
// _sprint_step_info lays them out.
func (c *cmd) showSteps(ctx context.Context, val *string) {
	var list stepproto.List
	if err := c.env.Call(ctx, "GET", stepproto.PathList, nil, &list); err != nil {
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "slurm_get_job_steps error: %v\n", err)
		return
	}
	shown := 0
	for _, s := range list.Steps {
		id := strconv.FormatUint(uint64(s.JobID), 10)
		full := id + "." + strconv.FormatUint(uint64(s.StepID), 10)
		if s.StepID == job.BatchStep {
			full = id + ".batch"
		}
		if val != nil && *val != id && *val != full {
			continue
		}
		shown++
		io.WriteString(c.env.Stdout, c.stepRecord(s, full))
	}
	if shown == 0 {
		if val == nil {
			fmt.Fprintln(c.env.Stdout, "No job steps in the system")
		} else {
			c.exitCode = 1
			fmt.Fprintf(c.env.Stderr, "Job step %s not found\n", *val)
		}
	}
}

func (c *cmd) stepRecord(s stepproto.Step, id string) string {
	w := newLineWriter(c.oneLiner)
	limit := "UNLIMITED"
	if s.TimeLimit != job.Infinite {
		limit = secs2time(int64(s.TimeLimit) * 60)
	}
	w.printf("StepId=%s UserId=%d StartTime=%s TimeLimit=%s", id, s.UserID, c.timeStr(s.StartTime.Unix()), limit)
	w.end()
	w.printf("State=RUNNING Partition=%s NodeList=%s", s.Partition, hostlist.CompressSorted(s.Nodes))
	w.end()
	var cpus, tasks uint32
	for i := range s.Nodes {
		cpus += s.CPUs[i]
		tasks += s.Tasks[i]
	}
	w.printf("Nodes=%d CPUs=%d Tasks=%d Name=%s Network=(null)", len(s.Nodes), cpus, tasks, s.Name)
	w.end()
	w.printf("TRES=cpu=%d,node=%d", cpus, len(s.Nodes))
	w.end()
	w.printf("ResvPorts=(null)")
	w.end()
	w.printf("CPUFreqReq=Default")
	if d := stepDist(s.Distribution); d != "" {
		w.printf(" Dist=%s", d)
	}
	w.end()
	w.printf("SrunHost:Pid=%s:%d", orNull(s.SrunHost), s.SrunPID)
	return w.finish(c.oneLiner)
}

// stepDist is slurm_step_layout_type_name's wording of a distribution:
// "Block", "Cyclic", "Plane", "Arbitrary", with the node part only.
func stepDist(d string) string {
	node, _, _ := strings.Cut(d, ":")
	switch {
	case node == "":
		return ""
	case strings.HasPrefix(node, "plane"):
		return "Plane"
	}
	return strings.ToUpper(node[:1]) + node[1:]
}
