package ctlstate

import (
	"strings"

	"github.com/droverhq/drover/internal/priority"
)

func (s *State) applyAcct(c *Command) Result {
	m, err := s.Acct.Apply(c.Acct.Change)
	if err != nil {
		return Result{Err: err}
	}
	s.Acct = m
	return Result{}
}

// upgradeUsage moves usage kept per user (before accounting) to the user's
// association under root, where such a user's jobs now count.
func upgradeUsage(u priority.Usage) priority.Usage {
	var old []string
	for k := range u {
		if !strings.Contains(k, "/") {
			old = append(old, k)
		}
	}
	for _, k := range old {
		u[priority.AssocKey("root", k)] += u[k]
		delete(u, k)
	}
	return u
}
