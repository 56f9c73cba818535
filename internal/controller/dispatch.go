package controller

import (
	"context"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/sched"
)

// launch sends a started job's batch script to its batch host. It runs in
// the background; a launch that cannot be delivered requeues the job, as
// slurmctld does on a batch launch failure.
func (c *Controller) launch(id job.ID) {
	c.mu.RLock()
	j := c.st.Jobs[id]
	if j == nil || j.State != job.Running || j.Alloc == nil || len(j.Alloc.Nodes) == 0 || !j.RunsScript() {
		c.mu.RUnlock()
		return
	}
	msg := c.launchMessageLocked(j)
	rec := shallowCopy(j)
	host := c.nodes[j.BatchHost]
	addr := ""
	if host != nil {
		addr = host.DaemonAddr
	}
	c.mu.RUnlock()
	c.stats.Launches.Add(1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		script, env, err := c.loadScript(rec)
		if err != nil {
			// Without its script the job can never run.
			c.logger.Error("batch script missing, failing job", "job", id, "err", err)
			if _, err := c.propose(context.Background(), &ctlstate.Command{Op: ctlstate.OpEnd, End: &ctlstate.EndCmd{JobID: id, State: job.Failed, ExitCode: 1}}); err != nil {
				c.logger.Error("fail job without script", "job", id, "err", err)
			}
			c.Kick()
			return
		}
		msg.Script, msg.Environment = script, env
		if addr == "" {
			err = errNoAddr
		} else {
			err = c.client.Post(ctx, msgauth.Node(msg.Nodes[0]), c.client.URL(addr, nodeproto.PathLaunch), msg, nil)
		}
		if err == nil {
			return
		}
		c.stats.LaunchFailures.Add(1)
		c.logger.Error("batch launch failed, requeueing", "job", id, "node", msg.Nodes[0], "err", err)
		c.mu.Lock()
		if n := c.nodes[msg.Nodes[0]]; n != nil {
			n.Responding = false
		}
		c.mu.Unlock()
		if _, err := c.propose(context.Background(), &ctlstate.Command{Op: ctlstate.OpRequeue, Requeue: &ctlstate.RequeueCmd{JobID: id, Reason: job.ReasonJobLaunchFailure, IfRunning: true}}); err != nil {
			c.logger.Error("requeue after launch failure", "job", id, "err", err)
		}
		c.Kick()
	}()
}

var errNoAddr = &launchError{"batch host has not registered"}

type launchError struct{ msg string }

func (e *launchError) Error() string { return e.msg }

func (c *Controller) launchMessageLocked(j *job.Job) nodeproto.Launch {
	r := &j.Req
	m := nodeproto.Launch{
		JobID:           uint32(j.ID),
		ArrayTaskID:     job.NoTask,
		Name:            r.Name,
		Cluster:         c.cfg.ClusterName,
		Partition:       r.Partition,
		Account:         r.Account,
		QOS:             r.QOS,
		UserName:        r.UserName,
		UID:             r.UserID,
		GID:             r.GroupID,
		WorkDir:         r.WorkDir,
		Script:          r.Script,
		Argv:            r.Argv,
		Environment:     r.Environment,
		StdOut:          r.StdOut,
		StdErr:          r.StdErr,
		StdIn:           r.StdIn,
		OpenAppend:      r.OpenMode == "append",
		SubmitHost:      r.SubmitHost,
		SubmitDir:       r.WorkDir,
		NumTasks:        r.NumTasks,
		CPUsPerTask:     r.CPUsPerTask,
		TasksPerNodeReq: r.TasksPerNode,
		MemPerNode:      r.MemPerNode,
		MemPerCPU:       r.MemPerCPU,
		TimeLimitMin:    r.TimeLimit,
		StartTime:       j.StartTime,
		RestartCount:    j.RestartCount,
		TopologyAddr:    c.cfg.Topology.Addr(j.BatchHost),
		TopologyPattern: c.cfg.Topology.Pattern(j.BatchHost),
		Nice:            r.Nice,
		Exclusive:       r.Exclusive,
		ConfPath:        c.cfg.SlurmConfPath,
	}
	if j.IsArray() {
		m.ArrayJobID = uint32(j.ArrayJobID)
		m.ArrayTaskID = j.ArrayTaskID
		if ts := r.Array.Tasks; len(ts) > 0 {
			m.ArrayMin, m.ArrayMax, m.ArrayCount = ts[0], ts[len(ts)-1], uint32(len(ts))
			m.ArrayStep = arrayStep(ts)
		}
	}
	var total uint32
	for _, na := range j.Alloc.Nodes {
		m.Nodes = append(m.Nodes, na.Node)
		m.CPUsPerNode = append(m.CPUsPerNode, na.CPUs)
		m.TasksPerNode = append(m.TasksPerNode, na.Tasks)
		total += na.Tasks
	}
	_ = total
	m.HetEnv = c.hetEnvLocked(j)
	m.GPUs = append([]int(nil), j.Alloc.Nodes[0].GPUs...)
	if m.MemPerNode == 0 && m.MemPerCPU == 0 {
		m.MemPerNode = j.Alloc.Nodes[0].MemMB
	}
	return m
}

// arrayStep is the common step of evenly spaced task ids (1 otherwise).
func arrayStep(ts []uint32) uint32 {
	if len(ts) < 2 {
		return 1
	}
	step := ts[1] - ts[0]
	for i := 2; i < len(ts); i++ {
		if ts[i]-ts[i-1] != step {
			return 1
		}
	}
	return step
}

// terminate asks the batch host to end a job: SIGCONT+SIGTERM, then SIGKILL
// after KillWait. The job keeps its resources until the node reports.
func (c *Controller) terminate(id job.ID, kind nodeproto.EndKind) {
	c.sendSignal(id, endSignal(id, kind, c.cfg.KillWait))
}

// endSignal ends a job's batch script: SIGTERM, SIGKILL after wait.
func endSignal(id job.ID, kind nodeproto.EndKind, wait time.Duration) nodeproto.Signal {
	return nodeproto.Signal{JobID: uint32(id), Signal: int32(syscall.SIGTERM), Terminate: true, Kind: kind, KillWait: wait}
}

// killBatch ends a batch script on a node whatever the job became since.
func (c *Controller) killBatch(k ctlstate.BatchOn) {
	c.sendSignalOn(k.JobID, k.Node, endSignal(k.JobID, nodeproto.EndCancelled, c.cfg.KillWait))
}

func (c *Controller) sendSignal(id job.ID, msg nodeproto.Signal) {
	c.mu.RLock()
	host := ""
	var others []string
	if j := c.st.Jobs[id]; j != nil {
		host = j.BatchHost
		if msg.Terminate && j.Alloc != nil {
			// The job's other nodes run only its steps, which end with
			// it; so do all the nodes of an allocation.
			for _, n := range j.Alloc.NodeNames() {
				if n != host || !j.RunsScript() {
					others = append(others, n)
				}
			}
		}
		if !j.RunsScript() {
			host = ""
		}
	}
	c.mu.RUnlock()
	c.sendSignalOn(id, host, msg)
	stepsOnly := msg
	stepsOnly.StepsOnly = true
	for _, n := range others {
		c.sendSignalOn(id, n, stepsOnly)
	}
}

func (c *Controller) sendSignalOn(id job.ID, host string, msg nodeproto.Signal) {
	c.mu.RLock()
	addr := ""
	if n := c.nodes[host]; n != nil {
		addr = n.DaemonAddr
	}
	c.mu.RUnlock()
	if addr == "" {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := c.client.Post(ctx, msgauth.Node(host), c.client.URL(addr, nodeproto.PathSignal), msg, nil)
		if err != nil {
			// The node's registration later reconciles what it still runs.
			c.logger.Warn("signal job", "job", id, "err", err)
		}
	}()
}

// preempt ends a running job so that a job of a higher partition
// PriorityTier (or, under preempt/qos, of a QOS that may preempt its own)
// can have its resources, as its partition's PreemptMode, or its QOS's
// under preempt/qos, says: REQUEUE puts it back in the queue once its processes are gone (a
// job that may not be requeued is cancelled instead), CANCEL ends it
// PREEMPTED. Either way it gets SIGTERM, then SIGKILL after the
// partition's GraceTime.
func (c *Controller) preempt(ctx context.Context, pr sched.Preemption) error {
	c.mu.RLock()
	j := c.st.Jobs[pr.Victim]
	var mode string
	var grace time.Duration
	requeue := false
	if j != nil {
		if p := c.parts[j.Req.Partition]; p != nil {
			mode, grace = p.PreemptMode, p.GraceTime
		}
		if c.cfg.PreemptByQOS {
			// preempt/qos: the victim's QOS decides, where it says.
			if q, ok := c.st.Acct.QOS(j.Req.QOS); ok && j.Req.QOS != "" {
				if q.PreemptMode != "" {
					mode = q.PreemptMode
				}
				grace = time.Duration(q.GraceTime) * time.Second
			}
		}
		requeue = mode == partition.PreemptRequeue && j.Req.Requeue
	}
	running := j != nil && j.State == job.Running && !j.Completing && !j.RequeueOnEnd
	c.mu.RUnlock()
	if !running {
		return nil
	}
	c.logger.Info("preempting job", "job", pr.Victim, "for", pr.For, "mode", mode)
	cmd := &ctlstate.Command{Op: ctlstate.OpCancel, Cancel: &ctlstate.CancelCmd{JobIDs: []job.ID{pr.Victim}, State: job.Preempted, Reason: job.ReasonNone}}
	if requeue {
		cmd = &ctlstate.Command{Op: ctlstate.OpRequeue, Requeue: &ctlstate.RequeueCmd{JobID: pr.Victim, OnEnd: true, As: job.Preempted}}
	}
	if _, err := c.propose(ctx, cmd); err != nil {
		return err
	}
	if grace <= 0 {
		grace = c.cfg.KillWait
	}
	c.sendSignal(pr.Victim, endSignal(pr.Victim, nodeproto.EndCancelled, grace))
	return nil
}
