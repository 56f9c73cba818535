package nodeagent

import (
	"cmp"
	"fmt"
	"github.com/droverhq/drover/internal/stepproto"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/acctgather"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/proctrack"
)

// Accounting gather types (slurm.conf JobAcctGatherType).
const (
	GatherLinux  = "jobacct_gather/linux"
	GatherCgroup = "jobacct_gather/cgroup"
	GatherNone   = "jobacct_gather/none"
)

// DefaultGatherFrequency is JobAcctGatherFrequency's default.
const DefaultGatherFrequency = 30 * time.Second

// gatherer measures the tasks of one step on this node while they run,
// every JobAcctGatherFrequency and whenever sstat asks, keeping each
// task's peaks for the step's record (slurmstepd's jobacct_gather
// thread).
type gatherer struct {
	agent *Agent
	// tasks lists the live tasks and the step's process group.
	tasks func() ([]acctgather.Task, *proctrack.Group)
	peaks acctgather.Peaks

	stop     chan struct{}
	stopOnce sync.Once
}

// newGatherer starts sampling, unless the node gathers nothing.
func (a *Agent) newGatherer(tasks func() ([]acctgather.Task, *proctrack.Group)) *gatherer {
	g := &gatherer{agent: a, tasks: tasks, stop: make(chan struct{})}
	if a.cfg.AcctGather != GatherNone && a.cfg.AcctGatherFreq > 0 {
		go g.loop(a.cfg.AcctGatherFreq)
	}
	return g
}

func (g *gatherer) loop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
			g.sample()
		}
	}
}

// close stops the periodic samples.
func (g *gatherer) close() {
	if g != nil {
		g.stopOnce.Do(func() { close(g.stop) })
	}
}

// sample measures the live tasks now and returns every task's peaks so
// far, live ones first measured.
func (g *gatherer) sample() map[int]acctgather.Sample {
	if g == nil || g.agent.cfg.AcctGather == GatherNone {
		return nil
	}
	tasks, group := g.tasks()
	if len(tasks) == 0 {
		return nil
	}
	var inStep []int
	if group != nil && group.CgroupPath() != "" {
		inStep, _ = group.Pids()
	}
	now, err := acctgather.Measure(tasks, inStep)
	if err != nil {
		g.agent.logger.Debug("measure step tasks", "err", err)
		return nil
	}
	if len(tasks) == 1 && group != nil {
		// The cgroup counts everything the node's only task ran,
		// processes that escaped its tree included.
		if u, s, ok := group.CPUTimes(); ok {
			t := now[tasks[0].ID]
			t.UserCPU, t.SystemCPU = max(t.UserCPU, u), max(t.SystemCPU, s)
			now[tasks[0].ID] = t
		}
	}
	out := make(map[int]acctgather.Sample, len(now))
	for id, s := range now {
		out[id] = g.peaks.Add(id, s)
	}
	return out
}

// final completes a task's usage from the kernel (getrusage when it was
// reaped) with what the samples saw: virtual memory and page faults only
// samples know, and a resident set or I/O the samples saw larger. only
// says it was the node's only task of the step, whose cgroup then gives
// its CPU time; group must still exist.
func (g *gatherer) final(id int, u *job.Usage, only bool, group *proctrack.Group) {
	if g == nil || u == nil {
		return
	}
	p := g.peaks.Get(id)
	u.MaxRSS = max(u.MaxRSS, p.RSS)
	u.MaxVMSize = max(u.MaxVMSize, p.VMSize)
	u.MaxPages = max(u.MaxPages, p.Pages)
	u.MaxDiskRead = max(u.MaxDiskRead, p.DiskRead)
	u.MaxDiskWrite = max(u.MaxDiskWrite, p.DiskWrite)
	if only && group != nil && g.agent.cfg.AcctGather != GatherNone {
		if usr, sys, ok := group.CPUTimes(); ok {
			u.UserCPU, u.SystemCPU = max(u.UserCPU, usr), max(u.SystemCPU, sys)
		}
	}
}

// taskStats is a sample in the protocol's terms.
func taskStats(samples map[int]acctgather.Sample) []stepproto.TaskStat {
	out := make([]stepproto.TaskStat, 0, len(samples))
	for id, s := range samples {
		out = append(out, stepproto.TaskStat{
			Task: uint32(id), Pids: s.Pids,
			UserCPU: s.UserCPU, SystemCPU: s.SystemCPU,
			RSS: s.RSS, VMSize: s.VMSize, Pages: s.Pages,
			DiskRead: s.DiskRead, DiskWrite: s.DiskWrite,
		})
	}
	slices.SortFunc(out, func(a, b stepproto.TaskStat) int { return cmp.Compare(a.Task, b.Task) })
	return out
}

// handleStepStat answers what a running step's tasks here use now.
func (a *Agent) handleStepStat(w http.ResponseWriter, r *http.Request) {
	var req nodeproto.StepStatRequest
	if err := nodeproto.Decode(r, &req); err != nil {
		nodeproto.Fail(w, http.StatusBadRequest, err)
		return
	}
	var g *gatherer
	a.mu.Lock()
	j, s := a.jobs[req.JobID], a.steps[stepKey{req.JobID, req.StepID}]
	a.mu.Unlock()
	switch {
	case req.StepID == stepproto.BatchStep && j != nil:
		j.mu.Lock()
		g = j.gather
		j.mu.Unlock()
	case req.StepID != stepproto.BatchStep && s != nil:
		g = s.gatherer()
	}
	if g == nil {
		nodeproto.Fail(w, http.StatusNotFound, fmt.Errorf("StepId=%d.%s is not running here", req.JobID, stepName(req.StepID)))
		return
	}
	nodeproto.Reply(w, http.StatusOK, nodeproto.StepStat{Node: a.cfg.Name, Tasks: taskStats(g.sample())})
}

func stepName(id uint32) string {
	if id == stepproto.BatchStep {
		return "batch"
	}
	return strconv.FormatUint(uint64(id), 10)
}
