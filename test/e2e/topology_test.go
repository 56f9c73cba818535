package e2e

import (
	"testing"
	"time"
)

// TestTopology: with topology/tree, a 2-node job lands on the leaf switch
// that has room for all of it rather than across the two.
func TestTopology(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 4, Extra: "TopologyPlugin=topology/tree\n",
		Topology: "SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Nodes=n[3-4]\nSwitchName=spine Switches=s[0-1]\n"})
	hold := c.Submit("", "-w", "n1", "--exclusive", "--wrap", "sleep 30")
	c.WaitState(hold, "RUNNING", 20*time.Second)
	pair := c.Submit("", "-N2", "--exclusive", "--wrap", "true")
	if j := c.WaitState(pair, "COMPLETED", 20*time.Second); j.Nodes.Or("") != "n[3-4]" {
		t.Errorf("2-node job on %q, want n[3-4] (one switch)", j.Nodes.Or(""))
	}
	c.MustRun("", "scancel", hold)
}
