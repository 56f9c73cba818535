package controller

import (
	"context"
	"slices"
	"time"

	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/depend"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/sched"
	"github.com/droverhq/drover/internal/slurmerr"
)

// checkDependency refuses, as slurmctld does at submission ("Job
// dependency problem", with no more said), a dependency that does not
// parse. A job id the controller does not know is accepted, as slurmctld
// 22.05 accepts it: the condition is taken as satisfied, like one on a
// job already purged.
func (c *Controller) checkDependency(spec string) error {
	if _, err := depend.Parse(spec); err != nil {
		return slurmerr.New(slurmerr.InvalidDependency, "")
	}
	return nil
}

// dependencyView answers depend.Assess from the controller's jobs for
// one scheduling cycle. Caller holds c.mu for reading while it is used.
type dependencyView struct {
	st *ctlstate.State
	// tasks and singletons are built on first use: most cycles have no
	// dependency to evaluate.
	tasks      map[job.ID][]*job.Job
	singletons map[singletonKey][]*job.Job
}

type singletonKey struct {
	uid  uint32
	name string
}

func (v *dependencyView) Records(id job.ID, task uint32) ([]*job.Job, bool) {
	j := v.st.Jobs[id]
	if j == nil {
		return nil, false
	}
	if !j.IsArray() {
		return []*job.Job{j}, true
	}
	if v.tasks == nil {
		v.tasks = map[job.ID][]*job.Job{}
		for _, oid := range v.st.JobIDs() {
			if o := v.st.Jobs[oid]; o.IsArray() {
				v.tasks[o.ArrayJobID] = append(v.tasks[o.ArrayJobID], o)
			}
		}
	}
	recs := v.tasks[j.ArrayJobID]
	if task == job.NoTask {
		return recs, true
	}
	for _, r := range recs {
		if r.ArrayTaskID == task {
			return []*job.Job{r}, true
		}
		if r.IsArrayMeta() && slices.Contains(r.PendingTasks, task) {
			return []*job.Job{r}, true
		}
	}
	return nil, false
}

// SingletonBlocked: another job of the same user and name runs, or was
// submitted earlier and has not ended.
func (v *dependencyView) SingletonBlocked(j *job.Job) bool {
	if v.singletons == nil {
		v.singletons = map[singletonKey][]*job.Job{}
		for _, id := range v.st.JobIDs() {
			o := v.st.Jobs[id]
			if !o.State.Terminal() || o.Completing {
				k := singletonKey{o.Req.UserID, o.Req.Name}
				v.singletons[k] = append(v.singletons[k], o)
			}
		}
	}
	for _, o := range v.singletons[singletonKey{j.Req.UserID, j.Req.Name}] {
		if o.ID == j.ID || o.IsArray() && o.ArrayJobID == j.ArrayJobID && j.IsArray() {
			continue
		}
		if o.State != job.Pending || o.ID < j.ID {
			return true
		}
	}
	return false
}

// evaluate returns the pending reason a job's dependency gives it ("" when
// it is satisfied or there is none) and the dependency as Slurm shows it
// (what is left of it).
func (v *dependencyView) evaluate(j *job.Job, now time.Time) (job.Reason, string) {
	if j.Req.Dependency == "" {
		return "", ""
	}
	d, err := depend.Parse(j.Req.Dependency)
	if err != nil {
		// Accepted at submission, so the syntax is fine; a record from
		// an older controller may hold anything.
		return job.ReasonDependencyNever, j.Req.Dependency
	}
	status, text := depend.Assess(d, j, v, now)
	switch status {
	case depend.Waiting:
		return job.ReasonDependency, text
	case depend.Never:
		return job.ReasonDependencyNever, text
	}
	return "", text
}

// dependencyText is a job's dependency as squeue %E and scontrol show it:
// what the last scheduling cycle found left of it, every condition
// unfulfilled before the first cycle, nothing once the job left the
// queue. Caller holds c.mu.
func (c *Controller) dependencyText(j *job.Job) string {
	if j.Req.Dependency == "" || j.State != job.Pending {
		return ""
	}
	if text, ok := c.depText[j.ID]; ok {
		return text
	}
	d, err := depend.Parse(j.Req.Dependency)
	if err != nil {
		return j.Req.Dependency
	}
	return depend.Unevaluated(d)
}

// killInvalidDepend cancels the jobs of a cycle whose dependency can never
// be satisfied, as slurmctld does with kill_invalid_depend: they end
// CANCELLED with reason DependencyNeverSatisfied.
func (c *Controller) killInvalidDepend(ctx context.Context, snap *sched.Snapshot) error {
	var ids []job.ID
	for id, r := range snap.Blocked {
		if r == job.ReasonDependencyNever {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	if len(ids) == 0 {
		return nil
	}
	cmd := &ctlstate.Command{Op: ctlstate.OpCancel, Cancel: &ctlstate.CancelCmd{JobIDs: ids, State: job.Cancelled, Reason: job.ReasonDependencyNever}}
	_, err := c.propose(ctx, cmd)
	return err
}
