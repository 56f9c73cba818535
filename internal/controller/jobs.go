package controller

import (
	"context"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/sched"
	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/droverhq/drover/internal/state"
	"github.com/droverhq/drover/internal/usercred"
)

// Submission is a job submission after the bridge decoded it.
type Submission struct {
	Req  job.Request
	Hold bool
	// UserIDSet means the request named a user (sbatch --uid); only root
	// and SlurmUser may name another one.
	UserIDSet bool
	// GroupIDSet means the request named a group (sbatch --gid), with the
	// same rule.
	GroupIDSet bool
	// RequeueSet means the request said --requeue or --no-requeue;
	// otherwise slurm.conf's JobRequeue decides.
	RequeueSet bool
}

// SubmitResult is the answer to a submission.
type SubmitResult struct {
	JobID job.ID
	// RC is the non-zero return code slurmctld pairs with some successful
	// submissions (JobHeld for a held job), which slurmrestd turns into
	// warnings.
	RC slurmerr.Code
	// Warnings are other remarks on an accepted submission.
	Warnings []string
	// UserMessage is what the job_submit plugins said to the user
	// (job_submit_user_msg).
	UserMessage string
}

// Submit validates, fills defaults and durably queues a job, as
// job_allocate/_job_create in slurmctld do. When ctx names a client
// request (WithRequestID) that who already submitted within
// ctlstate.RequestTTL, it makes no job and answers the first one.
func (c *Controller) Submit(ctx context.Context, who Identity, sub Submission) (SubmitResult, error) {
	return c.submit(ctx, who, []Submission{sub}, false)
}

// SubmitHet queues a heterogeneous job: its components are checked one by
// one as jobs of their own and queued together, with consecutive ids, the
// first (the leader) running the batch script for all. The result names
// the leader.
func (c *Controller) SubmitHet(ctx context.Context, who Identity, subs []Submission) (SubmitResult, error) {
	if len(subs) == 0 {
		return SubmitResult{}, slurmerr.New(slurmerr.InvalidQuery, "no job components")
	}
	for _, sub := range subs {
		if sub.Req.Array.Expr != "" || len(sub.Req.Array.Tasks) > 0 {
			// Slurm has no arrays of heterogeneous jobs.
			return SubmitResult{}, slurmerr.New(slurmerr.InvalidArray, "job arrays of heterogeneous jobs are not supported")
		}
	}
	return c.submit(ctx, who, subs, len(subs) > 1)
}

// preparedJob is one checked submission, ready for the state log.
type preparedJob struct {
	cmd     *ctlstate.SubmitCmd
	blobs   []state.Blob
	userMsg string
}

func (c *Controller) submit(ctx context.Context, who Identity, subs []Submission, het bool) (SubmitResult, error) {
	req := requestKey(ctx, who)
	if res, ok := c.submittedFor(req); ok {
		return res, nil
	}
	preps := make([]preparedJob, 0, len(subs))
	var blobs []state.Blob
	var msgs []string
	for i, sub := range subs {
		p, err := c.prepare(ctx, who, sub, i > 0 && het)
		if err != nil {
			return SubmitResult{}, err
		}
		preps = append(preps, p)
		blobs = append(blobs, p.blobs...)
		if p.userMsg != "" {
			msgs = append(msgs, p.userMsg)
		}
	}
	userMsg := strings.Join(msgs, "\n")
	cmd := &ctlstate.Command{Op: ctlstate.OpSubmit, Submit: preps[0].cmd}
	if req != nil {
		cmd.Request = &ctlstate.ClientRequest{RequestKey: *req, UserMsg: userMsg}
	}
	if het {
		cmd.Submit = nil
		for _, p := range preps {
			cmd.Het = append(cmd.Het, p.cmd)
		}
	}
	res, err := c.proposeWithBlobs(ctx, cmd, blobs)
	if err != nil {
		return SubmitResult{}, err
	}
	if res.Repeated != nil {
		// Another try of the request reached the log first, and this
		// one's scripts belong to no job. The replicated log deletes
		// them on every replica (fsmAdapter.ReleasedBlobs); a
		// controller's own log leaves that to the proposer, as for a
		// purge.
		if err := c.deleteScripts(res.Unreferenced); err != nil {
			c.logger.Warn("delete the scripts of a repeated submission", "err", err)
		}
		return c.repeatedResult(*res.Repeated), nil
	}
	first := preps[0].cmd
	c.mu.Lock()
	if _, known := c.fairShare[jobAssocKey(c.st.Acct, &job.Job{Req: first.Req})]; !known && c.fairShare != nil {
		// A new user takes a share at once, not at the next usage update.
		c.fairShareLocked()
	}
	c.mu.Unlock()
	// A held job cannot start and the scheduler leaves it out, so a cycle
	// would change nothing: skipping it keeps a burst of held submissions
	// from running one full scan of the queue each (docs/BENCHMARKS.md).
	rc := slurmerr.NoError
	if first.Hold == job.NotHeld {
		if first.Req.Interactive {
			// slurmctld tries to start an allocation in the request
			// itself, so that salloc and srun learn at once that
			// they have it rather than at their next poll.
			c.awaitCycle(ctx, allocateWait)
		} else {
			c.Kick()
		}
	} else {
		rc = slurmerr.JobHeld
	}
	return SubmitResult{JobID: res.JobID, RC: rc, UserMessage: userMsg}, nil
}

// prepare checks one submission and fills its defaults, as
// job_allocate/_job_create do; component marks a heterogeneous job's
// component after the first, which runs no script of its own.
func (c *Controller) prepare(ctx context.Context, who Identity, sub Submission, component bool) (preparedJob, error) {
	r := sub.Req
	if r.Interactive || component {
		// An allocation runs no script; steps bring their own
		// environment, and it is never requeued (Slurm requeues batch
		// jobs only). A component's steps run under its leader's
		// script.
		r.Script = ""
		if r.Interactive {
			r.Requeue, sub.RequeueSet = false, true
		}
	} else {
		if strings.TrimSpace(r.Script) == "" {
			return preparedJob{}, slurmerr.New(slurmerr.JobScriptMissing, "")
		}
		if len(r.Environment) == 0 {
			return preparedJob{}, slurmerr.New(slurmerr.EnvironmentMissing, "")
		}
	}
	if err := c.setOwner(who, sub, &r); err != nil {
		return preparedJob{}, err
	}
	if !sub.RequeueSet {
		r.Requeue = !c.cfg.NoJobRequeue
	}
	var userMsg string
	if c.cfg.JobSubmit != nil {
		// Before any check, as slurmctld calls job_submit plugins: what
		// they change is checked like the rest.
		begin := time.Now()
		msg, err := c.cfg.JobSubmit.Submit(ctx, &r, who.UID)
		c.observer().PluginCall("job_submit", "submit", time.Since(begin), err)
		if err != nil {
			return preparedJob{}, err
		}
		userMsg = msg
	}

	c.mu.RLock()
	partName := r.Partition
	if partName == "" {
		partName = c.defPart
	}
	// "a,b" lists: the first existing partition is used for now.
	if i := strings.IndexByte(partName, ','); i >= 0 {
		partName = partName[:i]
	}
	part := c.parts[partName]
	given := r.Partition
	r.Partition = partName
	acctErr := c.resolveAccountLocked(&r)
	var maxWall uint32
	if acctErr == nil && r.TimeLimit == 0 {
		maxWall = c.maxWallLocked(&r)
	}
	r.Partition = given
	resvErr := c.checkReservationLocked(who, &r)
	c.mu.RUnlock()
	if acctErr != nil {
		return preparedJob{}, acctErr
	}
	if resvErr != nil {
		return preparedJob{}, resvErr
	}
	if partName == "" {
		return preparedJob{}, slurmerr.New(slurmerr.DefaultPartitionNotSet, "")
	}
	if part == nil {
		return preparedJob{}, slurmerr.New(slurmerr.InvalidPartitionName, "invalid partition specified: %s", partName)
	}
	if !part.AcceptsJobs() {
		return preparedJob{}, slurmerr.New(slurmerr.RequestedPartConfigUnavailable, "partition %s is %s", partName, part.State)
	}
	r.Partition = partName
	if r.TimeLimit == 0 {
		r.TimeLimit = part.DefaultTime
		if r.TimeLimit == 0 {
			r.TimeLimit = part.MaxTime
		}
		if r.TimeLimit == 0 {
			r.TimeLimit = job.Infinite
		}
		// No time limit asked: the partition's, cut to the QOS's or
		// association's MaxWall as slurmctld's acct_policy_validate
		// does, so the job does not wait for ever on its own limit.
		if maxWall > 0 && (r.TimeLimit == job.Infinite || r.TimeLimit > maxWall) {
			r.TimeLimit = maxWall
		}
	}
	if r.Name == "" {
		r.Name = "sbatch"
	}
	if r.WorkDir == "" {
		return preparedJob{}, slurmerr.New(slurmerr.Unspecified, "current working directory is required")
	}
	if r.MaxNodes != 0 && r.MinNodes > r.MaxNodes {
		return preparedJob{}, slurmerr.New(slurmerr.InvalidNodeCount, "")
	}
	if r.MemPerNode > 0 && r.MemPerCPU > 0 {
		return preparedJob{}, slurmerr.New(slurmerr.InvalidTaskMemory, "--mem and --mem-per-cpu are mutually exclusive")
	}
	if len(r.Array.Tasks) > 0 {
		if last := r.Array.Tasks[len(r.Array.Tasks)-1]; last >= c.cfg.MaxArraySize {
			return preparedJob{}, slurmerr.New(slurmerr.InvalidArray, "array index %d exceeds MaxArraySize %d", last, c.cfg.MaxArraySize)
		}
	}
	if err := c.feasible(&r, part); err != nil {
		return preparedJob{}, err
	}
	if err := c.checkDependency(r.Dependency); err != nil {
		return preparedJob{}, err
	}
	// A job without a memory request gets the default, recorded as the
	// job's own (slurmctld does the same, so SLURM_MEM_PER_CPU shows it).
	if r.MemPerNode == 0 && r.MemPerCPU == 0 && !r.Exclusive {
		switch {
		case part.DefMemPerCPU > 0:
			r.MemPerCPU = part.DefMemPerCPU
		case part.DefMemPerNode > 0:
			r.MemPerNode = part.DefMemPerNode
		case c.cfg.Defaults.DefMemPerCPU > 0:
			r.MemPerCPU = c.cfg.Defaults.DefMemPerCPU
		case c.cfg.Defaults.DefMemPerNode > 0:
			r.MemPerNode = c.cfg.Defaults.DefMemPerNode
		}
	}

	hold := job.NotHeld
	if sub.Hold {
		hold = job.HeldUser
	}
	c.mu.RLock()
	prio := ctlstate.BasePriority(c.st.SubmitSeq + 1)
	var limitErr error
	var partQOS map[string]string
	if c.cfg.Enforce.Limits {
		// Refused before its script is stored; the apply checks again,
		// one submission after the other.
		partQOS = c.partQOSLocked()
		limitErr = c.st.SubmitLimitErr(&r, partQOS)
		if limitErr == nil {
			limitErr = c.denyOnLimitLocked(&r)
		}
	}
	c.mu.RUnlock()
	if limitErr != nil {
		return preparedJob{}, limitErr
	}
	if r.Nice != 0 {
		prio = uint32(max(int64(prio)-int64(r.Nice), 1))
	}
	p := preparedJob{userMsg: userMsg}
	key := ""
	if r.Script != "" {
		// The script and environment go to the store beside the log,
		// not into the record (and the in-memory state): see
		// state.Blob.
		key, p.blobs = scriptBlobs(r.Script, r.Environment)
	}
	r.Script, r.Environment = "", nil
	p.cmd = &ctlstate.SubmitCmd{Req: r, Hold: hold, Priority: prio, ScriptKey: key, Limits: c.cfg.Enforce.Limits, PartQOS: partQOS}
	return p, nil
}

// allocateWait bounds how long an allocation request waits for the
// scheduling cycle that may start it: a cycle over a long queue can take
// longer, and the caller then polls as for any pending job.
const allocateWait = time.Second

// setOwner decides whom a job runs as. The request's own names never
// count (a caller cannot pass as someone else by naming them); only root
// and SlurmUser may name another uid or gid (sbatch --uid/--gid), and then
// the job gets that account's name and, unless a gid was named too, its
// primary group, as slurmctld resolves them.
func (c *Controller) setOwner(who Identity, sub Submission, r *job.Request) error {
	otherUser := sub.UserIDSet && r.UserID != who.UID
	otherGroup := sub.GroupIDSet && r.GroupID != who.GID
	if (otherUser || otherGroup) && who.UID != 0 && who.UID != c.cfg.SlurmUserID {
		return slurmerr.New(slurmerr.AccessDenied, "only root may submit for another user or group")
	}
	if !otherUser {
		r.UserID, r.UserName = who.UID, who.User
		if !sub.GroupIDSet {
			r.GroupID = who.GID
		}
	} else {
		id, err := usercred.Lookup(r.UserID)
		if err != nil {
			return slurmerr.New(slurmerr.AccessDenied, "invalid user id %d", r.UserID)
		}
		r.UserName = id.Name
		if !sub.GroupIDSet {
			r.GroupID = id.GID
		}
	}
	r.GroupName = who.Group
	if r.GroupID != who.GID {
		r.GroupName = strconv.FormatUint(uint64(r.GroupID), 10)
		if g, err := user.LookupGroupId(r.GroupName); err == nil {
			r.GroupName = g.Name
		}
	}
	return nil
}

// feasible refuses what no configured node could ever run.
func (c *Controller) feasible(r *job.Request, part *partition.Partition) error {
	c.mu.RLock()
	nodes := make([]*node.Node, 0, len(c.nodeOrder))
	for _, name := range c.nodeOrder {
		nodes = append(nodes, c.nodeViewLocked(name))
	}
	c.mu.RUnlock()
	for _, name := range append(slices.Clone(r.NodeList), r.Exclude...) {
		if c.nodes[name] == nil {
			return slurmerr.New(slurmerr.InvalidNodeName, "invalid node name specified: %s", name)
		}
	}
	if n := int(max(r.MinNodes, 1, uint32(len(r.NodeList)))); n > 1 {
		if most := c.cfg.Topology.MostNodesFor(n, part.HasNode); most >= 0 && n > most {
			// More nodes than any one switch tree, or block aggregate, of
			// the partition joins.
			return slurmerr.New(slurmerr.RequestedNodeConfigUnavailable, "")
		}
	}
	return sched.Feasible(r, part, nodes, c.cfg.Defaults)
}

// Privileged reports whether who may act on every job: root, SlurmUser,
// and users whose AdminLevel is Operator or Administrator.
func (c *Controller) Privileged(who Identity) bool { return c.privileged(who) }

// IsSlurmUser reports whether uid is root or SlurmUser, who may act as
// anyone (a token for another user, X-SLURM-USER-NAME with their token).
func (c *Controller) IsSlurmUser(uid uint32) bool { return uid == 0 || uid == c.cfg.SlurmUserID }

func (c *Controller) privileged(who Identity) bool {
	return who.UID == 0 || who.UID == c.cfg.SlurmUserID || c.isAdmin(who.User)
}

// JobFilter selects jobs for listing.
type JobFilter struct {
	// ChangedSince keeps only records updated at or after this time.
	ChangedSince time.Time
}

// Jobs returns copies of the job records, in id order, with the current
// pending reasons.
func (c *Controller) Jobs(f JobFilter) []*job.Job {
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := make([]*job.Job, 0, len(c.st.JobIDs()))
	for _, id := range c.st.JobIDs() {
		j := c.st.Jobs[id]
		if !f.ChangedSince.IsZero() && j.LastUpdate.Before(f.ChangedSince) {
			continue
		}
		out = append(out, c.viewLocked(j))
	}
	return out
}

// LastJobUpdate is when any job last changed.
func (c *Controller) LastJobUpdate() time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.st.LastJobUpdate
}

// viewLocked copies a job record for a reader. The copy is shallow: the
// state machine replaces slices and the allocation rather than changing
// them in place, except PendingTasks, which is copied.
func (c *Controller) viewLocked(j *job.Job) *job.Job {
	v := shallowCopy(j)
	v.Priority = c.priorityLocked(j, c.now())
	if v.State == job.Pending {
		if r, ok := c.reasons[j.ID]; ok && v.Hold == job.NotHeld {
			v.Reason = r
		}
		if pl, ok := c.planned[j.ID]; ok && v.Hold == job.NotHeld {
			v.PlannedStart, v.SchedNodes = pl.Start, pl.Nodes
		}
		v.NodeGuess = v.ExpectedNodes(c.partMaxCPUs[v.Req.Partition])
		// A job waiting for its begin time is expected then at the
		// earliest, as slurmctld shows it (StartTime, squeue --start).
		if begin := v.Req.BeginTime; begin.After(c.now()) && begin.After(v.PlannedStart) {
			v.PlannedStart = begin
		}
	}
	v.Req.Dependency = c.dependencyText(j)
	return v
}

// JobSelector names a job as users write it: "123", "123_4", "123_[1-3]".
type JobSelector struct {
	ID job.ID
	// Tasks restricts an array to these task ids (nil: whole job/array).
	Tasks []uint32
	// Het names one component of the heterogeneous job ID leads
	// (ID+HetOffset); without it the leader's id names every component.
	Het       bool
	HetOffset uint32
}

// Job returns the records a selector names: a plain job, or every record of
// an array (meta-record first, then tasks), as GET /job/{id} answers.
func (c *Controller) Job(sel JobSelector) ([]*job.Job, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	recs := c.resolveLocked(sel)
	if len(recs) == 0 {
		return nil, slurmerr.New(slurmerr.InvalidJobID, "")
	}
	out := make([]*job.Job, len(recs))
	for i, j := range recs {
		out[i] = c.viewLocked(j)
	}
	return out, nil
}

// resolveLocked finds the records a selector names.
func (c *Controller) resolveLocked(sel JobSelector) []*job.Job {
	j := c.st.Jobs[sel.ID]
	if j == nil {
		// A task id may be named through its array: 131_1 -> the split-off
		// record, or the meta-record while still pending.
		return nil
	}
	if sel.Het {
		if !j.IsHetLeader() || sel.HetOffset >= j.HetSize || sel.Tasks != nil {
			return nil
		}
		if comp := c.st.Jobs[sel.ID+job.ID(sel.HetOffset)]; comp != nil {
			return []*job.Job{comp}
		}
		return nil
	}
	if j.IsHetLeader() && sel.Tasks == nil {
		// The leader's id stands for the whole job, as slurmctld
		// answers for every component.
		var recs []*job.Job
		for _, id := range j.HetComponents() {
			if comp := c.st.Jobs[id]; comp != nil {
				recs = append(recs, comp)
			}
		}
		return recs
	}
	if !j.IsArray() || j.ArrayJobID != j.ID {
		if sel.Tasks != nil && (!j.IsArray() || !slices.Contains(sel.Tasks, j.ArrayTaskID)) {
			return nil
		}
		return []*job.Job{j}
	}
	// j is the array's own record: collect every task of the array.
	var recs []*job.Job
	for _, id := range c.st.JobIDs() {
		t := c.st.Jobs[id]
		if t.ArrayJobID != j.ID {
			continue
		}
		if sel.Tasks == nil {
			recs = append(recs, t)
			continue
		}
		if t.IsArrayMeta() {
			for _, task := range sel.Tasks {
				if slices.Contains(t.PendingTasks, task) {
					recs = append(recs, t)
					break
				}
			}
		} else if slices.Contains(sel.Tasks, t.ArrayTaskID) {
			recs = append(recs, t)
		}
	}
	// The meta-record (array job id) first, as slurmctld lists it.
	slices.SortStableFunc(recs, func(a, b *job.Job) int {
		if a.ID == j.ID {
			return -1
		}
		if b.ID == j.ID {
			return 1
		}
		return 0
	})
	return recs
}

// CancelRequest describes scancel / DELETE /job.
type CancelRequest struct {
	Sel JobSelector
	// Signal is 0 or SIGKILL for a cancel (unless Flags.Batch); anything
	// else is only delivered to the running job.
	Signal int32
	Flags  KillFlags
}

// KillFlags say which steps a signal reaches, as scancel's --batch and
// --full: without either, slurmctld signals every step but the batch one
// (KILL_STEPS_ONLY); --batch signals only the batch step (even SIGKILL,
// which then does not cancel the job); --full signals all steps.
type KillFlags struct {
	Batch bool
	Full  bool
}

// Cancel cancels or signals a job. Unknown jobs give InvalidJobID; jobs
// already finished give AlreadyDone, as slurmctld answers.
func (c *Controller) Cancel(ctx context.Context, who Identity, req CancelRequest) error {
	c.mu.RLock()
	recs := c.resolveLocked(req.Sel)
	type target struct {
		id      job.ID
		running bool
	}
	var targets []target
	done := 0
	for _, j := range recs {
		if j.Req.UserID != who.UID && !c.privileged(who) {
			c.mu.RUnlock()
			return slurmerr.New(slurmerr.AccessDenied, "")
		}
		if j.IsHet() && j.State == job.Pending && (req.Sel.Het || req.Sel.ID != j.HetJobID) {
			// A pending heterogeneous job is cancelled whole, through
			// its leader, or not at all.
			c.mu.RUnlock()
			return slurmerr.New(slurmerr.NotWholeHetJob, "")
		}
		if j.State.Terminal() {
			done++
			continue
		}
		targets = append(targets, target{id: j.ID, running: j.State == job.Running})
	}
	c.mu.RUnlock()
	if len(recs) == 0 {
		return slurmerr.New(slurmerr.InvalidJobID, "")
	}
	if len(targets) == 0 {
		return slurmerr.New(slurmerr.AlreadyDone, "")
	}
	const sigKill = 9
	if (req.Signal != 0 && req.Signal != sigKill) || req.Flags.Batch {
		sig := req.Signal
		if sig == 0 {
			sig = sigKill
		}
		// slurmctld's job_signal: only SIGKILL reaches a job that has
		// not started; an array's tasks that run are signalled.
		var err error
		signalled := false
		for _, t := range targets {
			if !t.running {
				continue
			}
			signalled = true
			if e := c.signalRunning(t.id, sig, req.Flags); e != nil && err == nil {
				err = e
			}
		}
		if !signalled {
			return slurmerr.New(slurmerr.TransitionStateNoUpdate, "")
		}
		return err
	}
	cmd := &ctlstate.CancelCmd{UID: who.UID}
	for _, t := range targets {
		cmd.JobIDs = append(cmd.JobIDs, t.id)
	}
	if req.Sel.Tasks != nil {
		cmd.Tasks = req.Sel.Tasks
	}
	res, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpCancel, Cancel: cmd})
	if err != nil {
		return err
	}
	// Which jobs to kill is decided by the state the cancel was applied
	// to, not the one checked above: a job that started in between is
	// completing now and must be told to end.
	var kill []job.ID
	c.mu.RLock()
	for _, id := range res.Ended {
		if j := c.st.Jobs[id]; j != nil && (j.Completing || (!j.RunsScript() && j.Alloc != nil)) {
			kill = append(kill, id)
		}
	}
	c.mu.RUnlock()
	for _, id := range kill {
		c.terminate(id, nodeproto.EndCancelled)
	}
	c.Kick()
	return nil
}

// signalRunning delivers sig to a running job as slurmd does for
// scancel's flags: --batch to the batch script's shell alone (not its
// children), --full to the shell and its children (an srun among them
// passes it on to its step), neither to every step but the batch one, on
// every node of the job.
func (c *Controller) signalRunning(id job.ID, sig int32, f KillFlags) error {
	c.mu.RLock()
	j := c.st.Jobs[id]
	var host string
	var nodes []string
	interactive := true
	if j != nil {
		host, interactive = j.BatchHost, !j.RunsScript()
		if j.Alloc != nil {
			nodes = j.Alloc.NodeNames()
		}
	}
	c.mu.RUnlock()
	msg := nodeproto.Signal{JobID: uint32(id), Signal: sig}
	switch {
	case f.Batch && interactive:
		return slurmerr.New(slurmerr.JobScriptMissing, "")
	case f.Batch:
		msg.ShellOnly = true
		c.sendSignalOn(id, host, msg)
	case f.Full:
		// An allocation has no batch step to signal.
		if !interactive {
			c.sendSignalOn(id, host, msg)
		}
	default:
		msg.StepsOnly = true
		for _, n := range nodes {
			c.sendSignalOn(id, n, msg)
		}
	}
	return nil
}

// JobUpdate lists the changes of scontrol update / POST /job/{id}; nil
// fields are left alone.
type JobUpdate struct {
	TimeLimit *uint32
	Partition *string
	Name      *string
	Comment   *string
	Priority  *uint32
	Nice      *int32
	Hold      *bool
	BeginTime *time.Time
	MinNodes  *uint32
	NumTasks  *uint32
	Requeue   *bool
	// Dependency replaces the job's dependency ("" removes it).
	Dependency *string
}

// Update changes a job, with slurmctld's rules: users may lower their own
// job's limits and hold/release it; only privileged callers raise limits
// or set priorities.
func (c *Controller) Update(ctx context.Context, who Identity, sel JobSelector, upd JobUpdate) error {
	perJob, msgErr := c.filterUpdate(ctx, who, sel, upd)
	if msgErr != nil {
		return msgErr
	}
	c.mu.RLock()
	recs := c.resolveLocked(sel)
	var ids []job.ID
	var err error
	var metas []job.ID
	updates := map[job.ID]JobUpdate{}
	for _, j := range recs {
		u := upd
		if f, ok := perJob[j.ID]; ok {
			u = f
		}
		updates[j.ID] = u
		if j.Req.UserID != who.UID && !c.privileged(who) {
			err = slurmerr.New(slurmerr.AccessDenied, "")
			break
		}
		if j.State.Terminal() {
			err = slurmerr.New(slurmerr.AlreadyDone, "")
			break
		}
		if j.State != job.Pending && (u.Partition != nil || u.MinNodes != nil || u.NumTasks != nil || u.BeginTime != nil) {
			err = slurmerr.New(slurmerr.JobNotPending, "")
			break
		}
		if u.Dependency != nil && j.State != job.Pending {
			err = slurmerr.New(slurmerr.JobNotPending, "")
			break
		}
		if u.Dependency != nil {
			if err = c.checkDependency(*u.Dependency); err != nil {
				break
			}
		}
		if u.Hold != nil && j.State != job.Pending {
			err = slurmerr.New(slurmerr.JobNotPending, "")
			break
		}
		if u.Hold != nil && !*u.Hold && j.Hold == job.HeldAdmin && !c.privileged(who) {
			// Only an operator releases what an operator held.
			err = slurmerr.New(slurmerr.AccessDenied, "")
			break
		}
		if u.TimeLimit != nil && !c.privileged(who) && (*u.TimeLimit == job.Infinite || *u.TimeLimit > j.Req.TimeLimit) {
			err = slurmerr.New(slurmerr.AccessDenied, "only an operator may raise a time limit")
			break
		}
		if u.Priority != nil && !c.privileged(who) {
			err = slurmerr.New(slurmerr.AccessDenied, "")
			break
		}
		if u.Partition != nil && c.parts[*u.Partition] == nil {
			err = slurmerr.New(slurmerr.InvalidPartitionName, "invalid partition specified: %s", *u.Partition)
			break
		}
		if j.IsArrayMeta() && sel.Tasks != nil {
			// Only the named tasks change: they get records of their own
			// first, as slurmctld splits them off.
			metas = append(metas, j.ID)
			continue
		}
		ids = append(ids, j.ID)
	}
	c.mu.RUnlock()
	if len(recs) == 0 {
		return slurmerr.New(slurmerr.InvalidJobID, "")
	}
	if err != nil {
		return err
	}
	for _, meta := range metas {
		res, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpSplit, Split: &ctlstate.SplitCmd{JobID: meta, Tasks: sel.Tasks}})
		if err != nil {
			return err
		}
		ids = append(ids, res.Split...)
		for _, id := range res.Split {
			updates[id] = updates[meta]
		}
	}
	for _, id := range ids {
		u := updates[id]
		cmd := &ctlstate.UpdateCmd{JobID: id, TimeLimit: u.TimeLimit, Partition: u.Partition, Name: u.Name, Comment: u.Comment,
			Priority: u.Priority, Nice: u.Nice, BeginTime: u.BeginTime, MinNodes: u.MinNodes, NumTasks: u.NumTasks, Requeue: u.Requeue,
			Dependency: u.Dependency}
		if u.Hold != nil {
			// An operator's hold is an administrator hold, even on the
			// operator's own job (slurmrestd shows JobHeldAdmin after
			// root holds root's job); a user's hold is a user hold.
			h := job.NotHeld
			if *u.Hold {
				h = job.HeldUser
				if c.privileged(who) {
					h = job.HeldAdmin
				}
			}
			cmd.Hold = &h
		}
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpUpdate, Update: cmd}); err != nil {
			return err
		}
	}
	c.Kick()
	return nil
}

// filterUpdate runs the job_submit plugins' Modify over the change for
// each job it selects, as slurmctld calls job_submit's job_modify before
// checking an update; it returns each job's change as the plugins left
// it, or the first refusal.
func (c *Controller) filterUpdate(ctx context.Context, who Identity, sel JobSelector, u JobUpdate) (map[job.ID]JobUpdate, error) {
	if c.cfg.JobSubmit == nil {
		return nil, nil
	}
	c.mu.RLock()
	var reqs []job.Request
	var ids []job.ID
	for _, j := range c.resolveLocked(sel) {
		reqs = append(reqs, j.Req)
		ids = append(ids, j.ID)
	}
	c.mu.RUnlock()
	out := map[job.ID]JobUpdate{}
	for i, cur := range reqs {
		change := updateRequest(u)
		begin := time.Now()
		_, err := c.cfg.JobSubmit.Modify(ctx, ids[i], &cur, &change, who.UID)
		c.observer().PluginCall("job_submit", "modify", time.Since(begin), err)
		if err != nil {
			return nil, err
		}
		out[ids[i]] = mergeUpdate(u, updateRequest(u), change)
	}
	return out, nil
}

// updateRequest is an update in a request's form: the fields it changes
// set, the others zero.
func updateRequest(u JobUpdate) job.Request {
	var r job.Request
	if u.TimeLimit != nil {
		r.TimeLimit = *u.TimeLimit
	}
	if u.Partition != nil {
		r.Partition = *u.Partition
	}
	if u.Name != nil {
		r.Name = *u.Name
	}
	if u.Comment != nil {
		r.Comment = *u.Comment
	}
	if u.Nice != nil {
		r.Nice = *u.Nice
	}
	if u.MinNodes != nil {
		r.MinNodes = *u.MinNodes
	}
	if u.NumTasks != nil {
		r.NumTasks = *u.NumTasks
	}
	if u.Requeue != nil {
		r.Requeue = *u.Requeue
	}
	if u.Dependency != nil {
		r.Dependency = *u.Dependency
	}
	return r
}

// mergeUpdate applies to u what a plugin changed in its request form:
// every field that differs from before becomes part of the update.
func mergeUpdate(u JobUpdate, before, after job.Request) JobUpdate {
	if after.TimeLimit != before.TimeLimit {
		u.TimeLimit = &after.TimeLimit
	}
	if after.Partition != before.Partition {
		u.Partition = &after.Partition
	}
	if after.Name != before.Name {
		u.Name = &after.Name
	}
	if after.Comment != before.Comment {
		u.Comment = &after.Comment
	}
	if after.Nice != before.Nice {
		u.Nice = &after.Nice
	}
	if after.MinNodes != before.MinNodes {
		u.MinNodes = &after.MinNodes
	}
	if after.NumTasks != before.NumTasks {
		u.NumTasks = &after.NumTasks
	}
	if after.Requeue != before.Requeue {
		u.Requeue = &after.Requeue
	}
	if after.Dependency != before.Dependency {
		u.Dependency = &after.Dependency
	}
	return u
}

// Requeue puts a running or finished batch job back in the queue
// (scontrol requeue), optionally held (requeuehold).
func (c *Controller) Requeue(ctx context.Context, who Identity, sel JobSelector, hold bool) error {
	c.mu.RLock()
	recs := c.resolveLocked(sel)
	var running, finished []job.ID
	var err error
	if len(recs) > 0 && recs[0].IsHet() {
		// A heterogeneous job is requeued whole, through its leader;
		// the state requeues the other components with it.
		if sel.Het || !recs[0].IsHetLeader() {
			c.mu.RUnlock()
			return slurmerr.New(slurmerr.NotHetJobLeader, "")
		}
		recs = recs[:1]
	}
	for _, j := range recs {
		if j.Req.UserID != who.UID && !c.privileged(who) {
			err = slurmerr.New(slurmerr.AccessDenied, "")
			break
		}
		switch {
		case j.State == job.Pending:
			err = slurmerr.New(slurmerr.JobPending, "")
		case j.State == job.Running && !j.Completing:
			running = append(running, j.ID)
		case j.State.Terminal() && !j.Completing:
			finished = append(finished, j.ID)
		default:
			err = slurmerr.New(slurmerr.TransitionStateNoUpdate, "")
		}
	}
	c.mu.RUnlock()
	if len(recs) == 0 {
		return slurmerr.New(slurmerr.InvalidJobID, "")
	}
	if err != nil {
		return err
	}
	for _, id := range finished {
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpRequeue, Requeue: &ctlstate.RequeueCmd{JobID: id, Hold: hold}}); err != nil {
			return err
		}
	}
	for _, id := range running {
		// The job is requeued once its processes are gone (JobDone sees
		// the mark, which survives a restart of the controller).
		if _, err := c.propose(ctx, &ctlstate.Command{Op: ctlstate.OpRequeue, Requeue: &ctlstate.RequeueCmd{JobID: id, Hold: hold, OnEnd: true}}); err != nil {
			return err
		}
		c.terminate(id, nodeproto.EndCancelled)
	}
	c.Kick()
	return nil
}

// CheckPartition returns nil when a partition exists.
func (c *Controller) CheckPartition(name string) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.parts[name] == nil {
		return slurmerr.New(slurmerr.InvalidPartitionName, "invalid partition specified: %s", name)
	}
	return nil
}

func shallowCopy(j *job.Job) *job.Job {
	v := *j
	v.PendingTasks = slices.Clone(j.PendingTasks)
	return &v
}
