package e2e

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDynamicNodes grows a cluster at run time as Slurm's dynamic nodes
// do: scontrol create makes a FUTURE node whose daemon then registers,
// a node daemon started with a definition of its own (slurmd -Z) makes
// itself, jobs run on both through the partition that takes ALL nodes,
// and scontrol delete takes a dynamic node away but not a slurm.conf one.
func TestDynamicNodes(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 2, Extra: "MaxNodeCount=3\nPartitionName=every Nodes=ALL State=UP\n"})
	ports := freePorts(t, 2)
	startDynamic := func(name string, port int) {
		cmd := c.daemon(name, "node", "--conf", c.Conf, "--name", name, "--listen", "127.0.0.1:"+strconv.Itoa(port),
			"--dynamic", "CPUs=2 RealMemory=2000 NodeAddr=127.0.0.1 Port="+strconv.Itoa(port))
		c.mu.Lock()
		c.nodes[name] = cmd
		c.mu.Unlock()
	}
	if r := c.Run("", "scontrol", "create", "NodeName=d1", "CPUs=2", "RealMemory=2000", "State=FUTURE"); r.Code != 0 || r.Stdout+r.Stderr != "" {
		t.Fatalf("scontrol create: %+v", r)
	}
	if out := c.MustRun("", "sinfo", "-h", "-n", "d1", "-o", "%N %T"); strings.TrimSpace(out) != "d1 future" {
		t.Errorf("sinfo of the new node: %q", out)
	}
	if r := c.Run("", "scontrol", "create", "NodeName=d1", "CPUs=2", "State=FUTURE"); r.Code != 1 || !strings.HasPrefix(r.Stderr, "Error creating node(s): Node already exists in the node table\n") {
		t.Errorf("create d1 again: %+v", r)
	}
	startDynamic("d1", ports[0])
	startDynamic("d2", ports[1])
	c.opts.Nodes = 3
	c.WaitNodesUp()
	if out := c.MustRun("", "sinfo", "-h", "-p", "every", "-o", "%D %N"); strings.TrimSpace(out) != "3 d[1-2],n1" {
		t.Errorf("sinfo -p every: %q", out)
	}
	if out := c.MustRun("", "srun", "-p", "every", "-w", "d2", "printenv", "SLURMD_NODENAME"); strings.TrimSpace(out) != "d2" {
		t.Errorf("srun on d2: %q", out)
	}
	if r := c.Run("", "scontrol", "create", "NodeName=d3", "CPUs=2", "State=FUTURE"); r.Code != 1 || !strings.Contains(r.Stderr, "node table is full") {
		t.Errorf("create past MaxNodeCount: %+v", r)
	}
	if r := c.Run("", "scontrol", "delete", "NodeName=n1"); r.Code != 1 || !strings.HasPrefix(r.Stderr, "delete_node NodeName=n1: Invalid node state specified\n") {
		t.Errorf("delete a slurm.conf node: %+v", r)
	}
	job := c.Submit("#!/bin/sh\nsleep 60\n", "-p", "every", "-w", "d1")
	c.WaitState(job, "RUNNING", 20*time.Second)
	if r := c.Run("", "scontrol", "delete", "NodeName=d1"); r.Code != 1 || !strings.HasPrefix(r.Stderr, "delete_node NodeName=d1: Requested nodes are busy\n") {
		t.Errorf("delete a node running a job: %+v", r)
	}
	c.MustRun("", "scancel", job)
	c.WaitState(job, "CANCELLED", 20*time.Second)
	c.KillNode("d2")
	if r := c.Run("", "scontrol", "delete", "NodeName", "d2"); r.Code != 0 {
		t.Errorf("delete d2: %+v", r)
	}
	if out := c.MustRun("", "sinfo", "-h", "-p", "every", "-o", "%N"); strings.TrimSpace(out) != "d1,n1" {
		t.Errorf("partition every after deleting d2: %q", out)
	}
}
