package nodeagent

import (
	"cmp"
	"context"
	"fmt"
	stepproto "github.com/droverhq/drover/internal/step/proto"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
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
	// gpus are the GPUs the tasks hold on this node, measured by the
	// GPU plugin when there is one.
	gpus  []int
	peaks acctgather.Peaks
	// gpuErr is set once the plugin could not measure (logged once);
	// gpuMeasured once it answered with devices.
	gpuErr      sync.Once
	gpuMeasured atomic.Bool
	// only says the node runs one task of the step: the step's cgroup
	// then counts that task's CPU.
	only bool

	stop     chan struct{}
	stopOnce sync.Once
}

// newGatherer starts sampling, unless the node gathers nothing.
func (a *Agent) newGatherer(tasks func() ([]acctgather.Task, *proctrack.Group), gpus []int, only bool) *gatherer {
	g := &gatherer{agent: a, tasks: tasks, gpus: gpus, only: only, stop: make(chan struct{})}
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
	if g.only && len(tasks) == 1 && group != nil {
		// The cgroup counts everything the node's only task ran,
		// processes that escaped its tree included.
		if u, s, ok := group.CPUTimes(); ok {
			t := now[tasks[0].ID]
			t.UserCPU, t.SystemCPU = max(t.UserCPU, u), max(t.SystemCPU, s)
			now[tasks[0].ID] = t
		}
	}
	g.measureGPUs(now)
	out := make(map[int]acctgather.Sample, len(now))
	for id, s := range now {
		out[id] = g.peaks.Add(id, s)
	}
	return out
}

// measuresGPUs says the tasks' GPU usage is measured: the step has GPUs
// here and the GPU plugin answered for them.
func (g *gatherer) measuresGPUs() bool {
	return g != nil && len(g.gpus) > 0 && g.agent.cfg.Gres != nil && g.gpuMeasured.Load()
}

// measureGPUs adds what each task's processes use on the GPUs: the
// device memory they hold, and the busy percentages of the GPUs they run
// on, summed.
func (g *gatherer) measureGPUs(now map[int]acctgather.Sample) {
	if g == nil || len(g.gpus) == 0 || g.agent.cfg.Gres == nil {
		return
	}
	owner := map[int]int{}
	var pids []int
	for id, s := range now {
		for _, p := range s.Pids {
			owner[p] = id
			pids = append(pids, p)
		}
	}
	if len(pids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rep, err := g.agent.cfg.Gres.Usage(ctx, g.gpus, pids)
	if err != nil {
		g.gpuErr.Do(func() { g.agent.logger.Warn("GPU usage not measured", "err", err) })
		return
	}
	if len(rep.Devices) > 0 {
		g.gpuMeasured.Store(true)
	}
	util := map[int]uint32{}
	for _, d := range rep.Devices {
		util[d.Index] = d.Utilization
	}
	on := map[int]map[int]bool{} // task -> devices
	for _, p := range rep.Processes {
		id, ok := owner[p.Pid]
		if !ok {
			continue
		}
		s := now[id]
		s.GPUMem += p.Memory
		now[id] = s
		if on[id] == nil {
			on[id] = map[int]bool{}
		}
		on[id][p.Device] = true
	}
	for id, devs := range on {
		s := now[id]
		for d := range devs {
			s.GPUUtil += uint64(util[d])
		}
		now[id] = s
	}
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
	u.MaxGPUMem = max(u.MaxGPUMem, p.GPUMem)
	u.MaxGPUUtil = max(u.MaxGPUUtil, p.GPUUtil)
	if only && group != nil && g.agent.cfg.AcctGather != GatherNone {
		if usr, sys, ok := group.CPUTimes(); ok {
			u.UserCPU, u.SystemCPU = max(u.UserCPU, usr), max(u.SystemCPU, sys)
		}
	}
}

// taskStats is a sample in the protocol's terms.
func taskStats(samples map[int]acctgather.Sample, gpus bool) []stepproto.TaskStat {
	out := make([]stepproto.TaskStat, 0, len(samples))
	for id, s := range samples {
		out = append(out, stepproto.TaskStat{
			Task: uint32(id), Pids: s.Pids,
			UserCPU: s.UserCPU, SystemCPU: s.SystemCPU,
			RSS: s.RSS, VMSize: s.VMSize, Pages: s.Pages,
			DiskRead: s.DiskRead, DiskWrite: s.DiskWrite,
			GPUMem: s.GPUMem, GPUUtil: s.GPUUtil, GPUs: gpus,
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
	nodeproto.Reply(w, http.StatusOK, nodeproto.StepStat{Node: a.cfg.Name, Tasks: taskStats(g.sample(), g.measuresGPUs())})
}

func stepName(id uint32) string {
	if id == stepproto.BatchStep {
		return "batch"
	}
	return strconv.FormatUint(uint64(id), 10)
}
