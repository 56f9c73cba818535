package controller

import (
	"context"
	"slices"

	"github.com/droverhq/drover/internal/depend"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/sched"
	"github.com/droverhq/drover/internal/slurmerr"
)

// checkDependency refuses, as slurmctld does at submission ("Job
// dependency problem", with no more said), a dependency that does not
// parse or names a job the controller does not know.
func (c *Controller) checkDependency(spec string) error {
	if spec == "" {
		return nil
	}
	d, err := depend.Parse(spec)
	if err != nil {
		return slurmerr.New(slurmerr.InvalidDependency, "")
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for _, cond := range d.Conds {
		if cond.Type == depend.Singleton {
			continue
		}
		if _, ok := c.st.Jobs[cond.JobID]; !ok {
			return slurmerr.New(slurmerr.InvalidDependency, "")
		}
	}
	return nil
}

// dependencyView answers depend.Evaluate from the controller's jobs for
// one scheduling cycle. Caller holds c.mu for reading while it is used.
type dependencyView struct {
	st *fsm
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
		for _, oid := range v.st.order {
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
		if r.IsArrayMeta() && containsTask(r.PendingTasks, task) {
			return []*job.Job{r}, true
		}
	}
	return nil, false
}

func containsTask(tasks []uint32, t uint32) bool {
	for _, x := range tasks {
		if x == t {
			return true
		}
	}
	return false
}

// SingletonBlocked: another job of the same user and name runs, or was
// submitted earlier and has not ended.
func (v *dependencyView) SingletonBlocked(j *job.Job) bool {
	if v.singletons == nil {
		v.singletons = map[singletonKey][]*job.Job{}
		for _, id := range v.st.order {
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

// dependencyReason is the pending reason a job's dependency gives it, or
// "" when it is satisfied (or there is none).
func (v *dependencyView) dependencyReason(j *job.Job, c *Controller) job.Reason {
	if j.Req.Dependency == "" {
		return ""
	}
	d, err := depend.Parse(j.Req.Dependency)
	if err != nil {
		// Accepted at submission, so the syntax is fine; a record from
		// an older controller may hold anything.
		return job.ReasonDependencyNever
	}
	switch depend.Evaluate(d, j, v, c.now()) {
	case depend.Waiting:
		return job.ReasonDependency
	case depend.Never:
		return job.ReasonDependencyNever
	}
	return ""
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
	cmd := &command{Op: opCancel, Cancel: &cancelCmd{JobIDs: ids, State: job.Cancelled, Reason: job.ReasonDependencyNever}}
	_, err := c.propose(ctx, cmd)
	return err
}
