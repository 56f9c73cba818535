package ctlstate

import (
	"slices"
	"time"

	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/slurmerr"
)

func (s *State) applyStep(c *Command) Result {
	st := c.Step.Step
	j := s.Jobs[st.JobID]
	if err := StepsAllowed(j); err != nil {
		return Result{Err: err}
	}
	if st.Request != "" {
		// A retry of a request that made a step already: that step.
		if prev := s.StepFor(j.ID, RequestKey{UID: st.UserID, ID: st.Request}); prev != nil {
			return Result{JobID: j.ID, StepID: prev.ID, RepeatedStep: true}
		}
	}
	if !st.Overlap {
		// The CPUs each node has left after the other steps': checked
		// here, in log order, so that two steps racing for the same
		// CPUs cannot both have them.
		left := s.StepCPUsLeft(j)
		for i, n := range st.Nodes {
			if st.CPUs[i] > left[n] {
				return Result{Err: slurmerr.New(slurmerr.NodesBusy, "")}
			}
		}
	}
	// A heterogeneous job numbers its steps once for all components,
	// on its leader's count, so that one srun's step has one id in
	// every component.
	counter := j.ID
	if j.IsHet() {
		counter = j.HetJobID
	}
	if want := c.Step.HetStepID; want != nil {
		inUse := slices.ContainsFunc(s.Steps[j.ID], func(o *job.Step) bool { return o.ID == *want })
		if !j.IsHet() || *want >= s.NextStep[counter] || inUse {
			return Result{Err: slurmerr.New(slurmerr.InvalidJobID, "step id %d not given to heterogeneous job %d", *want, counter)}
		}
		st.ID = *want
	} else {
		st.ID = s.NextStep[counter]
		s.NextStep[counter]++
	}
	st.StartTime = c.Time
	s.Steps[j.ID] = append(s.Steps[j.ID], &st)
	s.putStep(j, &st, "RUNNING", time.Time{})
	return Result{JobID: j.ID, StepID: st.ID}
}

func (s *State) applyStepEnd(c *Command) Result {
	e := c.StepEnd
	steps := s.Steps[e.JobID]
	i := slices.IndexFunc(steps, func(st *job.Step) bool { return st.ID == e.StepID })
	if i < 0 {
		return Result{Err: slurmerr.New(slurmerr.InvalidJobID, "no step %d.%d", e.JobID, e.StepID)}
	}
	if j := s.Jobs[e.JobID]; j != nil {
		state := "COMPLETED"
		switch {
		case e.Cancelled:
			state = "CANCELLED"
		case e.Signal != 0 || e.ExitCode != 0:
			state = "FAILED"
		}
		s.putStepEnd(j, steps[i], state, c.Time, e.ExitCode, e.Signal)
	}
	s.Steps[e.JobID] = slices.Delete(steps, i, i+1)
	if len(s.Steps[e.JobID]) == 0 {
		delete(s.Steps, e.JobID)
	}
	return Result{JobID: e.JobID, StepID: e.StepID}
}

// StepFor is the running step of job id that the client request k
// created, if there is one.
func (s *State) StepFor(id job.ID, k RequestKey) *job.Step {
	for _, st := range s.Steps[id] {
		if st.Request != "" && st.Request == k.ID && st.UserID == k.UID {
			return st
		}
	}
	return nil
}

// StepsAllowed refuses steps in a job that does not run.
func StepsAllowed(j *job.Job) error {
	switch {
	case j == nil:
		return slurmerr.New(slurmerr.InvalidJobID, "")
	case j.State == job.Pending:
		return slurmerr.New(slurmerr.JobPending, "")
	case j.State != job.Running || j.Completing || j.Alloc == nil:
		return slurmerr.New(slurmerr.AlreadyDone, "")
	}
	return nil
}

// StepCPUsLeft is, for each node of a job, the CPUs no running step holds.
func (s *State) StepCPUsLeft(j *job.Job) map[string]uint32 {
	left := make(map[string]uint32, len(j.Alloc.Nodes))
	for _, na := range j.Alloc.Nodes {
		left[na.Node] = na.CPUs
	}
	for _, st := range s.Steps[j.ID] {
		for i, n := range st.Nodes {
			left[n] -= min(left[n], st.CPUs[i])
		}
	}
	return left
}
