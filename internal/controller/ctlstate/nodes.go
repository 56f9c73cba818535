package ctlstate

import (
	"time"
)

func (s *State) admin(name string) *NodeAdmin {
	a := s.Nodes[name]
	if a == nil {
		a = &NodeAdmin{}
		s.Nodes[name] = a
	}
	return a
}

func (s *State) applyNodeSet(c *Command) Result {
	n := c.NodeSet
	a := s.admin(n.Name)
	wasOut := a.Down || a.Drain
	defer s.nodeEvent(n.Name, a, wasOut, c.Time)
	if n.Drain != nil {
		a.Drain = *n.Drain
	}
	if n.Down != nil {
		a.Down = *n.Down
	}
	if a.Drain || a.Down {
		a.Reason, a.ReasonUID, a.ReasonTime = n.Reason, n.UID, c.Time
	} else {
		a.Reason, a.ReasonUID, a.ReasonTime = "", 0, time.Time{}
	}
	s.LastNodeUpdate = c.Time
	if n.Down != nil && *n.Down {
		return s.failJobsOn(n.Name, c.Time, c.RequeueDelay)
	}
	return Result{}
}

func (s *State) applyNodeFail(c *Command) Result {
	a := s.admin(c.NodeFail.Name)
	wasOut := a.Down || a.Drain
	defer s.nodeEvent(c.NodeFail.Name, a, wasOut, c.Time)
	a.Down = true
	a.Reason, a.ReasonUID, a.ReasonTime = c.NodeFail.Reason, 0, c.Time
	s.LastNodeUpdate = c.Time
	return s.failJobsOn(c.NodeFail.Name, c.Time, c.RequeueDelay)
}

func (s *State) applyNodeCreate(c *Command) Result {
	for i := range c.NodeCreate.Nodes {
		n := c.NodeCreate.Nodes[i]
		if _, ok := s.DynNodes[n.Name]; !ok {
			s.DynNodes[n.Name] = &n
		}
	}
	s.LastNodeUpdate = c.Time
	return Result{}
}

func (s *State) applyNodeDelete(c *Command) Result {
	for _, name := range c.NodeDelete.Names {
		delete(s.DynNodes, name)
		delete(s.Nodes, name)
	}
	s.LastNodeUpdate = c.Time
	return Result{}
}

func (s *State) applyPartSet(c *Command) Result {
	p := c.PartSet.Partition
	s.Parts[p.Name] = &p
	delete(s.PartsGone, p.Name)
	return Result{}
}

func (s *State) applyPartDelete(c *Command) Result {
	delete(s.Parts, c.PartDelete.Name)
	s.PartsGone[c.PartDelete.Name] = true
	return Result{}
}
