package controller

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/sched"
	"github.com/droverhq/drover/internal/slurmerr"
	stepcred "github.com/droverhq/drover/internal/step/cred"
	steplayout "github.com/droverhq/drover/internal/step/layout"
)

// StepEnd is how a step ended, as srun reports it.
type StepEnd struct {
	ExitCode, Signal int32
	Cancelled        bool
}

// StepCredLifetime is how long a step's credential may be used to launch
// it (Slurm's cred_expire is 120 s by default); srun launches at once.
const StepCredLifetime = 10 * time.Minute

// StepRequest is srun's request for a step.
type StepRequest struct {
	JobID  job.ID
	Name   string
	Layout steplayout.Request
	// Overlap shares CPUs with other steps; Exact holds only the CPUs the
	// tasks need instead of every CPU of the job on the step's nodes.
	Overlap, Exact bool
	// GPUsPerNode (--gres=gpu:N, --gpus-per-node) and GPUsPerTask
	// (--gpus-per-task) narrow the job's GPUs on each node.
	GPUsPerNode, GPUsPerTask int
	// MemPerNode (--mem) and MemPerCPU (--mem-per-cpu), in MB, bound the
	// step's memory on each node; without them it has the job's.
	MemPerNode, MemPerCPU uint64
	TimeLimit             uint32
	// SrunAddr is where srun listens for the node daemons (host:port);
	// SrunHost and SrunPID describe srun for scontrol show step.
	SrunAddr string
	// SrunCert is the fingerprint of srun's certificate under TLS,
	// signed into the credential.
	SrunCert string
	SrunHost string
	SrunPID  uint32
	Argv     []string
	// HetStepID is the id the step already has in another component of
	// the same heterogeneous job (nil: a new id).
	HetStepID *uint32
}

// StepGrant is a created step and what srun needs to launch it.
type StepGrant struct {
	Step   job.Step
	Layout steplayout.Layout
	// NodeAddrs are the node daemons' addresses, one for each step node.
	NodeAddrs []string
	// Cred is the signed credential every node daemon checks.
	Cred string
	// Job is the job's record, for the step's environment.
	Job *job.Job
}

// CreateStep creates a step in a running job for its owner (or an
// operator): it lays the tasks out over the job's nodes, holds the CPUs
// the step needs, and signs the step's credential. A step that could run
// but for other steps' CPUs gets NodesBusy (from steplayout), which srun
// retries.
func (c *Controller) CreateStep(ctx context.Context, who Identity, req StepRequest) (StepGrant, error) {
	ring := c.cfg.Keys.Ring()
	if ring == nil {
		return StepGrant{}, slurmerr.New(slurmerr.Disabled, "job steps need the cluster key (slurm.key beside slurm.conf)")
	}
	rk := requestKey(ctx, who)
	c.mu.RLock()
	j := c.st.Jobs[req.JobID]
	if err := ctlstate.StepsAllowed(j); err != nil {
		c.mu.RUnlock()
		return StepGrant{}, err
	}
	if j.Req.UserID != who.UID && !c.privileged(who) {
		c.mu.RUnlock()
		return StepGrant{}, slurmerr.New(slurmerr.AccessDenied, "")
	}
	if rk != nil && c.st.StepFor(j.ID, *rk) != nil {
		// A retry of a request whose answer was lost: its step.
		c.mu.RUnlock()
		return c.repeatedStep(j.ID, *rk, req, ring)
	}
	left := c.st.StepCPUsLeft(j)
	avail := make([]steplayout.NodeAvail, len(j.Alloc.Nodes))
	for i, na := range j.Alloc.Nodes {
		avail[i] = steplayout.NodeAvail{Name: na.Node, CPUs: int(na.CPUs)}
		if !req.Overlap {
			// CPUs other steps hold: a step that needs them waits.
			avail[i] = steplayout.NodeAvail{Name: na.Node, CPUs: int(left[na.Node]), Busy: int(na.CPUs - left[na.Node])}
		}
	}
	jobCopy := *j
	addrs := map[string]string{}
	topo := map[string][]gres.TopoGPU{}
	for _, na := range j.Alloc.Nodes {
		if n := c.nodes[na.Node]; n != nil {
			addrs[na.Node] = n.DaemonAddr
			if len(na.GPUs) > 0 {
				topo[na.Node] = sched.TopoOf(n)
			}
		}
	}
	c.mu.RUnlock()

	req.Layout.Exact = req.Exact
	lay, err := steplayout.Place(avail, req.Layout)
	if err != nil {
		return StepGrant{}, err
	}
	if err := reachable(lay.Nodes, addrs); err != nil {
		return StepGrant{}, err
	}
	cpt := max(req.Layout.CPUsPerTask, 1)
	st := job.Step{
		JobID: j.ID, Name: req.Name, UserID: who.UID, UserName: who.User,
		Nodes: lay.Nodes, CPUsPerTask: uint32(cpt), Overlap: req.Overlap,
		TimeLimit: req.TimeLimit, SrunHost: req.SrunHost, SrunPID: req.SrunPID,
		Argv: req.Argv, Distribution: lay.Dist.String(), Partition: j.Req.Partition,
	}
	if st.TimeLimit == 0 {
		st.TimeLimit = job.Infinite
	}
	byName := map[string]job.NodeAlloc{}
	for _, na := range j.Alloc.Nodes {
		byName[na.Node] = na
	}
	addrList := make([]string, len(lay.Nodes))
	for i, n := range lay.Nodes {
		tasks := len(lay.Tasks[i])
		st.Tasks = append(st.Tasks, uint32(tasks))
		cpus := uint32(0)
		switch {
		case req.Overlap:
		case req.Exact:
			cpus = uint32(tasks * cpt)
		default:
			cpus = left[n]
		}
		st.CPUs = append(st.CPUs, cpus)
		st.GPUs = append(st.GPUs, stepGPUs(topo[n], byName[n].GPUs, tasks, req.GPUsPerNode, req.GPUsPerTask))
		mem, err := stepMem(req, byName[n].MemMB, tasks*cpt)
		if err != nil {
			return StepGrant{}, err
		}
		st.MemMB = append(st.MemMB, mem)
		addrList[i] = addrs[n]
	}
	if rk != nil {
		st.Request, st.TaskIDs, st.Warnings = rk.ID, lay.Tasks, lay.Warnings
	}
	res, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpStep, Step: &ctlstate.StepCmd{Step: st, HetStepID: req.HetStepID}})
	if err != nil {
		return StepGrant{}, err
	}
	if res.RepeatedStep {
		// Another try of the same request reached the log first.
		return c.repeatedStep(j.ID, *rk, req, ring)
	}
	st.ID = res.StepID
	cred, err := c.signStep(ring, j, st.ID, lay.Nodes, req)
	if err != nil {
		return StepGrant{}, errors.Join(err, c.EndStep(ctx, who, j.ID, st.ID, StepEnd{Cancelled: true}))
	}
	return StepGrant{Step: st, Layout: lay, NodeAddrs: addrList, Cred: cred, Job: &jobCopy}, nil
}

// reachable refuses a step on nodes whose daemons have not registered
// with this controller yet (a controller that just took the lead learns
// their addresses as they register again): srun could not launch its
// tasks there. NodesBusy, as slurmctld answers for a job's nodes that
// are not responding: srun retries until they are.
func reachable(nodes []string, addrs map[string]string) error {
	for _, n := range nodes {
		if addrs[n] == "" {
			return slurmerr.New(slurmerr.NodesBusy, "node %s has not registered with the controller", n)
		}
	}
	return nil
}

// signStep signs the credential of step id of job j, on nodes, for the
// srun that asked (req).
func (c *Controller) signStep(ring *clusterkey.Ring, j *job.Job, id uint32, nodes []string, req StepRequest) (string, error) {
	return stepcred.Sign(ring.Signing().Secret, stepcred.Cred{
		JobID: uint32(j.ID), StepID: id, UID: j.Req.UserID, GID: j.Req.GroupID, User: j.Req.UserName,
		Nodes: nodes, SrunAddr: req.SrunAddr, SrunCert: req.SrunCert, Expires: c.now().Add(StepCredLifetime),
	})
}

// repeatedStep answers a retry of the client request k with the step it
// made in job id, as the first try was answered, with a credential of
// its own: srun's retry after a failover makes no second step holding
// the job's CPUs.
func (c *Controller) repeatedStep(id job.ID, k ctlstate.RequestKey, req StepRequest, ring *clusterkey.Ring) (StepGrant, error) {
	c.mu.RLock()
	j := c.st.Jobs[id]
	prev := c.st.StepFor(id, k)
	if j == nil || prev == nil {
		c.mu.RUnlock()
		// It ended between the apply and here.
		return StepGrant{}, slurmerr.New(slurmerr.AlreadyDone, "")
	}
	st, jobCopy := *prev, *j
	byName := make(map[string]string, len(st.Nodes))
	for _, n := range st.Nodes {
		if nd := c.nodes[n]; nd != nil {
			byName[n] = nd.DaemonAddr
		}
	}
	c.mu.RUnlock()
	if err := reachable(st.Nodes, byName); err != nil {
		return StepGrant{}, err
	}
	addrs := make([]string, len(st.Nodes))
	for i, n := range st.Nodes {
		addrs[i] = byName[n]
	}
	c.logger.Info("step request repeats a client request, answered with its step", "request", k.ID, "uid", k.UID, "job", id, "step", st.ID)
	// What the answer carries of the layout; the distribution is the
	// step's own spelling (Step.Distribution).
	lay := steplayout.Layout{Nodes: st.Nodes, Tasks: st.TaskIDs, Warnings: st.Warnings}
	cred, err := c.signStep(ring, &jobCopy, st.ID, st.Nodes, req)
	if err != nil {
		return StepGrant{}, err
	}
	return StepGrant{Step: st, Layout: lay, NodeAddrs: addrs, Cred: cred, Job: &jobCopy}, nil
}

// stepMem is the memory (MB) a step may use on a node where the job holds
// jobMem and the step runs tasks needing cpus CPUs: what --mem or
// --mem-per-cpu asks for, within the job's (Slurm's "Memory required by
// task is not available" otherwise), else all of the job's. --mem=0 is
// the job's too.
func stepMem(req StepRequest, jobMem uint64, cpus int) (uint64, error) {
	want := req.MemPerNode
	if want == 0 && req.MemPerCPU > 0 {
		want = req.MemPerCPU * uint64(max(cpus, 1))
	}
	switch {
	case want == 0:
		return jobMem, nil
	case jobMem > 0 && want > jobMem:
		return 0, slurmerr.New(slurmerr.InvalidTaskMemory, "")
	}
	return want, nil
}

// stepGPUs are the GPUs a step gets on a node: every GPU of the job there,
// or the first perNode of them, or perTask for each task.
func stepGPUs(topo []gres.TopoGPU, job []int, tasks, perNode, perTask int) []int {
	n := len(job)
	switch {
	case perTask > 0:
		n = min(n, perTask*tasks)
	case perNode > 0:
		n = min(n, perNode)
	}
	if n > 1 && n < len(job) {
		return gres.PickGPUs(topo, job, n)
	}
	return slices.Clone(job[:n])
}

// EndStep removes a step that ended (srun reports it).
func (c *Controller) EndStep(ctx context.Context, who Identity, jobID job.ID, stepID uint32, how StepEnd) error {
	c.mu.RLock()
	var st *job.Step
	for _, s := range c.st.Steps[jobID] {
		if s.ID == stepID {
			st = s
		}
	}
	c.mu.RUnlock()
	if st == nil {
		return slurmerr.New(slurmerr.InvalidJobID, "no step %d.%d", jobID, stepID)
	}
	if st.UserID != who.UID && !c.privileged(who) {
		return slurmerr.New(slurmerr.AccessDenied, "")
	}
	_, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpStepEnd, StepEnd: &ctlstate.StepEndCmd{JobID: jobID, StepID: stepID,
		ExitCode: how.ExitCode, Signal: how.Signal, Cancelled: how.Cancelled}})
	return err
}

// Steps returns copies of the running steps, by job then step id, each
// running batch job's batch step first, as slurmctld lists them.
func (c *Controller) Steps() []job.Step {
	c.mu.RLock()
	defer c.mu.RUnlock()
	var out []job.Step
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if j.State == job.Running && j.RunsScript() && j.Alloc != nil && j.BatchHost != "" {
			var cpus uint32
			for _, na := range j.Alloc.Nodes {
				if na.Node == j.BatchHost {
					cpus = na.CPUs
				}
			}
			out = append(out, job.Step{
				JobID: id, ID: job.BatchStep, Name: "batch", UserID: j.Req.UserID, UserName: j.Req.UserName,
				Nodes: []string{j.BatchHost}, Tasks: []uint32{1}, CPUs: []uint32{cpus}, CPUsPerTask: j.Req.CPUsPerTask,
				TimeLimit: job.Infinite, StartTime: j.StartTime, Partition: j.Req.Partition, Argv: j.Req.Argv,
			})
		}
		for _, s := range c.st.Steps[id] {
			out = append(out, *s)
		}
	}
	return out
}

// SignalStep delivers a signal to one step's tasks on all its nodes
// (scancel JOB.STEP; SIGKILL, the default, ends the step).
func (c *Controller) SignalStep(ctx context.Context, who Identity, jobID job.ID, stepID uint32, sig int32) error {
	c.mu.RLock()
	j := c.st.Jobs[jobID]
	var st *job.Step
	for _, s := range c.st.Steps[jobID] {
		if s.ID == stepID {
			st = s
		}
	}
	c.mu.RUnlock()
	if j == nil || st == nil {
		return slurmerr.New(slurmerr.InvalidJobID, "")
	}
	if j.Req.UserID != who.UID && !c.privileged(who) {
		return slurmerr.New(slurmerr.AccessDenied, "")
	}
	id := stepID
	msg := nodeproto.Signal{JobID: uint32(jobID), Signal: sig, StepsOnly: true, StepID: &id}
	if sig == 0 || sig == 9 {
		msg.Signal, msg.Terminate, msg.Kind, msg.KillWait = 0, true, nodeproto.EndCancelled, c.cfg.KillWait
	}
	for _, n := range st.Nodes {
		c.sendSignalOn(jobID, n, msg)
	}
	return nil
}

// CompleteAllocation ends an allocation its owner releases (salloc or
// srun exiting, slurm_complete_job): COMPLETED, or FAILED with the
// command's exit code. Its steps are killed on the nodes.
func (c *Controller) CompleteAllocation(ctx context.Context, who Identity, id job.ID, exitCode int32) error {
	c.mu.RLock()
	j := c.st.Jobs[id]
	var owner uint32
	var interactive bool
	var state job.State
	if j != nil {
		owner, interactive, state = j.Req.UserID, j.Req.Interactive, j.State
	}
	c.mu.RUnlock()
	switch {
	case j == nil:
		return slurmerr.New(slurmerr.InvalidJobID, "")
	case owner != who.UID && !c.privileged(who):
		return slurmerr.New(slurmerr.AccessDenied, "")
	case !interactive:
		return slurmerr.New(slurmerr.BatchOnly, "")
	case state.Terminal():
		return slurmerr.New(slurmerr.AlreadyDone, "")
	case state == job.Pending:
		return c.Cancel(ctx, who, CancelRequest{Sel: JobSelector{ID: id}})
	}
	end := job.Completed
	if exitCode != 0 {
		end = job.Failed
	}
	if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpEnd, End: &ctlstate.EndCmd{JobID: id, State: end, ExitCode: exitCode}}); err != nil {
		return err
	}
	c.sendSignal(id, endSignal(id, nodeproto.EndExited, c.cfg.KillWait))
	c.Kick()
	return nil
}
