package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestPartitionsAtRunTime makes, changes and deletes partitions with
// scontrol as an administrator does without editing slurm.conf; what was
// set outlives a controller restart, and each refusal is scontrol's.
func TestPartitionsAtRunTime(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2})
	quiet := func(args ...string) {
		t.Helper()
		if r := c.Run("", "scontrol", args...); r.Code != 0 || r.Stdout+r.Stderr != "" {
			t.Errorf("scontrol %s: %+v", strings.Join(args, " "), r)
		}
	}
	refused := func(want string, args ...string) {
		t.Helper()
		if r := c.Run("", "scontrol", args...); r.Code != 1 || !strings.HasPrefix(r.Stderr, want) {
			t.Errorf("scontrol %s: %+v, want %q", strings.Join(args, " "), r, want)
		}
	}
	sinfo := func(p string) string {
		return strings.TrimSpace(c.MustRun("", "sinfo", "-h", "-p", p, "-o", "%P %a %l %N"))
	}
	quiet("create", "PartitionName=extra", "Nodes=n[1-2]", "MaxTime=60", "State=UP")
	if got := sinfo("extra"); got != "extra up 1:00:00 n[1-2]" {
		t.Errorf("sinfo -p extra: %q", got)
	}
	quiet("update", "PartitionName=extra", "State=DOWN", "MaxTime=2:00:00")
	if got := sinfo("extra"); got != "extra down 2:00:00 n[1-2]" {
		t.Errorf("sinfo -p extra after update: %q", got)
	}
	refused("Error creating the partition: Invalid partition name specified\n", "create", "PartitionName=extra")
	refused("slurm_update error: Invalid partition name specified\n", "update", "PartitionName=nosuch", "State=DOWN")
	refused("scontrol: error: Update of this parameter is not supported: Colour=red\n", "update", "PartitionName=extra", "Colour=red")
	refused("Error creating the partition: Invalid node name specified\n", "create", "PartitionName=other", "Nodes=n9")

	quiet("update", "PartitionName=extra", "State=UP")
	// A partition QOS must exist; QOS= clears it.
	refused("slurm_update error: Invalid qos specification\n", "update", "PartitionName=extra", "QOS=nosuch")
	quiet("update", "PartitionName=extra", "QOS=normal")
	qos := func() string {
		out := c.MustRun("", "scontrol", "show", "partition", "extra")
		if i := strings.Index(out, " QoS="); i >= 0 {
			return strings.Fields(out[i:])[0]
		}
		return ""
	}
	if got := qos(); got != "QoS=normal" {
		t.Errorf("partition QOS after update: %q", got)
	}
	quiet("update", "PartitionName=extra", "QOS=")
	if got := qos(); got != "QoS=N/A" {
		t.Errorf("partition QOS after clearing it: %q", got)
	}
	job := c.Submit("#!/bin/sh\ntrue\n", "-H", "-p", "extra")
	refused("delete_partition PartitionName=extra: Partition is in use\n", "delete", "PartitionName=extra")
	c.MustRun("", "scancel", job)
	c.WaitState(job, "CANCELLED", 10*time.Second)
	quiet("delete", "PartitionName=extra")
	if got := sinfo("extra"); got != "" {
		t.Errorf("sinfo -p extra after delete: %q", got)
	}

	quiet("create", "partition", "PartitionName=keep", "Nodes=n2", "MaxTime=30")
	quiet("delete", "partition", "short")
	c.KillController()
	c.StartController()
	c.WaitNodesUp()
	if got := sinfo("keep"); got != "keep up 30:00 n2" {
		t.Errorf("partition keep after a restart: %q", got)
	}
	if got := sinfo("short"); got != "" {
		t.Errorf("deleted partition short after a restart: %q", got)
	}
}
