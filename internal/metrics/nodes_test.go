package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctlstate"
)

// TestCountNode: each node counts in one base state and its derived
// ones, as statistics.c classes it: DRAIN on a node with jobs is
// draining, on one without drained (and drain).
func TestCountNode(t *testing.T) {
	tests := map[string]struct {
		n    controller.NodeMetrics
		want map[nodeCount]uint64
	}{
		"idle":                   {controller.NodeMetrics{Flags: []string{"IDLE"}}, map[nodeCount]uint64{nodesIdle: 1}},
		"mixed, draining":        {controller.NodeMetrics{Flags: []string{"MIXED", "DRAIN"}, Use: ctlstate.NodeUse{Jobs: 1}}, map[nodeCount]uint64{nodesMixed: 1, nodesDraining: 1}},
		"idle, drained":          {controller.NodeMetrics{Flags: []string{"IDLE", "DRAIN"}}, map[nodeCount]uint64{nodesIdle: 1, nodesDrain: 1, nodesDrained: 1}},
		"down, not responding":   {controller.NodeMetrics{Flags: []string{"DOWN", "NOT_RESPONDING"}}, map[nodeCount]uint64{nodesDown: 1, nodesNoResp: 1}},
		"allocated, completing":  {controller.NodeMetrics{Flags: []string{"ALLOCATED", "COMPLETING"}}, map[nodeCount]uint64{nodesAlloc: 1, nodesCompleting: 1}},
		"idle completing, drain": {controller.NodeMetrics{Flags: []string{"IDLE", "DRAIN", "COMPLETING"}}, map[nodeCount]uint64{nodesIdle: 1, nodesCompleting: 1, nodesDraining: 1}},
		"future, dynamic":        {controller.NodeMetrics{Flags: []string{"FUTURE"}, Dynamic: true}, map[nodeCount]uint64{nodesFuture: 1, nodesDynNormal: 1}},
		"unknown":                {controller.NodeMetrics{Flags: []string{"UNKNOWN", "NOT_RESPONDING"}}, map[nodeCount]uint64{nodesUnknown: 1, nodesNoResp: 1}},
	}
	for name, tc := range tests {
		var got, want nodeCounts
		got.countNode(&tc.n)
		for k, v := range tc.want {
			want[k] = v
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
}

// TestNamesUnique: no two metrics of a set share a name, and every
// name is a valid Prometheus name (a registry would refuse them at
// start-up otherwise; this says which).
func TestNamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, set := range [][]string{jobNames("slurm_"), jobNames("slurm_partition_"), jobNames("slurm_user_"), nodeNames(), schedNames()} {
		for _, n := range set {
			if seen[n] {
				t.Errorf("%s twice", n)
			}
			seen[n] = true
		}
	}
}

func jobNames(prefix string) []string {
	var out []string
	for _, m := range jobMetrics {
		out = append(out, prefix+m.name)
	}
	return out
}

func nodeNames() []string {
	var out []string
	for _, m := range nodeMetrics {
		if m.name != "" {
			out = append(out, "slurm_"+m.name)
		}
		out = append(out, "slurm_partition_"+m.partName)
	}
	for _, m := range perNode {
		out = append(out, m.name)
	}
	for _, m := range partExtra {
		out = append(out, m.name)
	}
	return out
}

func schedNames() []string {
	var out []string
	for _, m := range schedMetrics {
		out = append(out, m.name)
	}
	return out
}
