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
	want := "SwitchName=s0 Level=0 LinkSpeed=1 Nodes=n[1-2]\nSwitchName=s1 Level=0 LinkSpeed=1 Nodes=n[3-4]\nSwitchName=spine Level=1 LinkSpeed=1 Nodes=n[1-4] Switches=s[0-1]\n"
	if got := c.MustRun("", "scontrol", "show", "topology"); got != want {
		t.Errorf("scontrol show topology:\n%s", got)
	}
	hold := c.Submit("", "-w", "n1", "--exclusive", "--wrap", "sleep 30")
	c.WaitState(hold, "RUNNING", 20*time.Second)
	pair := c.Submit("", "-N2", "--exclusive", "-o", "pair.out", "--wrap", "echo $SLURM_TOPOLOGY_ADDR $SLURM_TOPOLOGY_ADDR_PATTERN")
	if j := c.WaitState(pair, "COMPLETED", 20*time.Second); j.Nodes.Or("") != "n[3-4]" {
		t.Errorf("2-node job on %q, want n[3-4] (one switch)", j.Nodes.Or(""))
	}
	if out := c.ReadFile("pair.out"); out != "spine.s1.n3 switch.switch.node\n" {
		t.Errorf("job's topology address: %q", out)
	}
	c.MustRun("", "scancel", hold)
}

// TestBlockTopology: with topology/block, a 2-node job stays within one
// block, taking the block that has room for all of it.
func TestBlockTopology(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 4, Extra: "TopologyPlugin=topology/block\n",
		Topology: "BlockName=b1 Nodes=n[1-2]\nBlockName=b2 Nodes=n[3-4]\nBlockSizes=2,4\n"})
	hold := c.Submit("", "-w", "n1", "--exclusive", "--wrap", "sleep 30")
	c.WaitState(hold, "RUNNING", 20*time.Second)
	pair := c.Submit("", "-N2", "--exclusive", "--wrap", "true")
	if j := c.WaitState(pair, "COMPLETED", 20*time.Second); j.Nodes.Or("") != "n[3-4]" {
		t.Errorf("2-node job on %q, want n[3-4] (one block)", j.Nodes.Or(""))
	}
	c.MustRun("", "scancel", hold)
}
