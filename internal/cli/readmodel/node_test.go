package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

func decodeNode(t *testing.T, js string) *v0044.V0044Node {
	t.Helper()
	var w v0044.V0044Node
	if err := w.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
	return &w
}

func decodePartition(t *testing.T, js string) *v0044.V0044PartitionInfo {
	t.Helper()
	var w v0044.V0044PartitionInfo
	if err := w.UnmarshalJSON([]byte(js)); err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
	return &w
}

// The state list encoded as slurmctld holds it, and printed as scontrol
// prints the list: INVALID without a base state, "+?" for what Slurm's
// table does not name.
func TestNodeState(t *testing.T) {
	type read struct {
		State                   NodeState
		NoBase                  bool
		Unknown                 int
		Complete, String, Shown string
	}
	tests := map[string]struct {
		states []string
		want   read
	}{
		"none":    {want: read{NoBase: true, Complete: "UNKNOWN", String: "UNKNOWN", Shown: "INVALID"}},
		"idle":    {states: []string{"IDLE"}, want: read{State: NodeIdle, Complete: "IDLE", String: "IDLE", Shown: "IDLE"}},
		"drained": {states: []string{"IDLE", "DRAIN"}, want: read{State: NodeIdle | NodeDrain, Complete: "IDLE+DRAIN", String: "DRAINED", Shown: "IDLE+DRAIN"}},
		"flags in Slurm's order": {
			states: []string{"DOWN", "NOT_RESPONDING", "DRAIN", "DRAIN"},
			want:   read{State: NodeDown | NodeNoRespond | NodeDrain, Complete: "DOWN+DRAIN+NOT_RESPONDING", String: "DRAINED*", Shown: "DOWN+DRAIN+NOT_RESPONDING"},
		},
		"unprinted and unknown names": {
			states: []string{"MIXED", "UNDRAIN", "BOGUS", "BOGUS", "OTHER"},
			want:   read{State: NodeMixed | NodeUndrain, Unknown: 2, Complete: "MIXED+?", String: "MIXED", Shown: "MIXED+?+?+?"},
		},
		"later base wins": {states: []string{"IDLE", "DOWN"}, want: read{State: NodeDown, Complete: "DOWN", String: "DOWN", Shown: "DOWN"}},
		"flag alone":      {states: []string{"DRAIN"}, want: read{State: NodeDrain, NoBase: true, Complete: "UNKNOWN+DRAIN", String: "DRAINED", Shown: "INVALID+DRAIN"}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			s, noBase, unknown := NodeStateFromWire(tt.states)
			n := Node{State: s, NoBaseState: noBase, UnknownStates: unknown}
			got := read{s, noBase, unknown, s.Complete(), s.String(), n.StateComplete()}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Missing members read as zero, "" and the sentinels; timestamps keep
// INFINITE apart from unset.
func TestNodeValues(t *testing.T) {
	type read struct {
		CPULoad                          int32
		CPULoadSet, GresDrainSet         bool
		FreeMem                          uint64
		CurrentWatts                     uint32
		AveWatts                         int32
		BootTime, ResumeAfter, LastBusy  int64
		Features                         string
		NextState, CertFlags, Partitions []string
	}
	tests := map[string]struct {
		js   string
		want read
	}{
		"missing members": {js: `{}`, want: read{FreeMem: NoVal64, CurrentWatts: NoVal}},
		"unset and infinite": {
			js: `{"free_mem":{"set":false},"boot_time":{"set":false},"resume_after":{"infinite":true},
				"last_busy":{"set":true,"number":7},"energy":{"current_watts":{"set":false},"average_watts":3}}`,
			want: read{FreeMem: NoVal64, CurrentWatts: NoVal, AveWatts: 3, ResumeAfter: int64(Infinite), LastBusy: 7},
		},
		"set": {
			js: `{"cpu_load":0,"gres_drained":"","free_mem":{"set":true,"number":512},"features":["a","b"],
				"next_state_after_reboot":["IDLE"],"cert_flags":["TOKEN_SET"],"partitions":["debug"],
				"energy":{"current_watts":{"set":true,"number":40},"average_watts":30}}`,
			want: read{CPULoadSet: true, GresDrainSet: true, FreeMem: 512, CurrentWatts: 40, AveWatts: 30, Features: "a,b",
				NextState: []string{"IDLE"}, CertFlags: []string{"TOKEN_SET"}, Partitions: []string{"debug"}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			n := FromV0044Node(decodeNode(t, tt.js))
			got := read{n.CPULoad, n.CPULoadSet, n.GresDrainSet, n.FreeMem, n.CurrentWatts, n.AveWatts,
				n.BootTime, n.ResumeAfter, n.LastBusy, n.Features, n.NextState, n.CertFlags, []string(n.Partitions)}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// A partition's limits with their sentinels, its state and the
// oversubscription it allows.
func TestPartition(t *testing.T) {
	tests := map[string]struct {
		js   string
		want Partition
	}{
		"missing members": {
			js: `{}`,
			want: Partition{State: "UNKNOWN", DefaultTime: NoVal, MaxTime: NoVal, MaxNodes: NoVal, MaxCPUsPerNode: NoVal,
				MaxCPUsPerSocket: NoVal, OverTimeLimit: NoVal16, MaxShare: 1, DefMemPerCPU: NoVal64, DefMemPerNode: NoVal64,
				MaxMemPerCPU: NoVal64, MaxMemPerNode: NoVal64, ResumeTimeout: NoVal16, SuspendTimeout: NoVal16, SuspendTime: NoVal},
		},
		"set": {
			js: `{"name":"debug","partition":{"state":["UP","DRAIN"]},"maximums":{"time":{"infinite":true},"nodes":{"set":true,"number":4},
				"oversubscribe":{"jobs":0,"flags":["force"]},"over_time_limit":{"set":true,"number":5},
				"partition_memory_per_cpu":{"set":true,"number":100}},"defaults":{"time":{"set":false},"job":"cpu=2"},
				"minimums":{"nodes":1},"select_type":["CR_CPU"],"nodes":{"configured":"n[1-4]","total":4,"allowed_allocation":"login"},
				"accounts":{"deny":"x"},"qos":{"assigned":"normal"},"timeouts":{"resume":{"infinite":true}}}`,
			want: Partition{Name: "debug", State: "UP", DenyAccounts: "x", QOS: "normal", AllowAlloc: "login", Nodes: "n[1-4]", TotalNodes: 4,
				DefaultTime: NoVal, MaxTime: Infinite, MinNodes: 1, MaxNodes: 4, MaxCPUsPerNode: NoVal, MaxCPUsPerSocket: NoVal,
				OverTimeLimit: 5, MaxShare: 0, ForceShare: true, SelectType: []string{"CR_CPU"}, JobDefaults: "cpu=2",
				DefMemPerCPU: NoVal64, DefMemPerNode: NoVal64, MaxMemPerCPU: 100, MaxMemPerNode: NoVal64,
				ResumeTimeout: Infinite16, SuspendTimeout: NoVal16, SuspendTime: NoVal},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got := FromV0044Partition(decodePartition(t, tt.js))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// The state names sinfo prints (%t, %T, %E's complete state), from the
// list slurmrestd writes.
func TestNodeStateNames(t *testing.T) {
	type names struct{ Compact, Long, Complete string }
	tests := map[string]struct {
		rest []string
		want names
	}{
		"idle":              {[]string{"IDLE"}, names{"IDLE", "IDLE", "IDLE"}},
		"drained":           {[]string{"IDLE", "DRAIN"}, names{"DRAIN", "DRAINED", "IDLE+DRAIN"}},
		"draining":          {[]string{"ALLOCATED", "DRAIN"}, names{"DRNG", "DRAINING", "ALLOCATED+DRAIN"}},
		"mixed draining":    {[]string{"MIXED", "DRAIN"}, names{"DRNG", "DRAINING", "MIXED+DRAIN"}},
		"down":              {[]string{"DOWN", "NOT_RESPONDING"}, names{"DOWN*", "DOWN*", "DOWN+NOT_RESPONDING"}},
		"drained down":      {[]string{"DOWN", "DRAIN", "NOT_RESPONDING"}, names{"DRAIN*", "DRAINED*", "DOWN+DRAIN+NOT_RESPONDING"}},
		"completing":        {[]string{"IDLE", "COMPLETING"}, names{"COMP", "COMPLETING", "IDLE+COMPLETING"}},
		"alloc completing":  {[]string{"ALLOCATED", "COMPLETING"}, names{"ALLOC+", "ALLOCATED+", "ALLOCATED+COMPLETING"}},
		"maint":             {[]string{"IDLE", "MAINTENANCE"}, names{"MAINT", "MAINT", "IDLE+MAINTENANCE"}},
		"reserved":          {[]string{"IDLE", "RESERVED"}, names{"RESV", "RESERVED", "IDLE+RESERVED"}},
		"planned":           {[]string{"IDLE", "PLANNED"}, names{"PLND", "PLANNED", "IDLE+PLANNED"}},
		"mixed planned":     {[]string{"MIXED", "PLANNED"}, names{"MIX-", "MIXED-", "MIXED+PLANNED"}},
		"powered down":      {[]string{"IDLE", "POWERED_DOWN"}, names{"IDLE~", "IDLE~", "IDLE+POWERED_DOWN"}},
		"fail":              {[]string{"IDLE", "FAIL"}, names{"FAIL", "FAIL", "IDLE+FAIL"}},
		"failing":           {[]string{"ALLOCATED", "FAIL"}, names{"FAILG", "FAILING", "ALLOCATED+FAIL"}},
		"unknown":           {[]string{"UNKNOWN", "NOT_RESPONDING"}, names{"UNK*", "UNKNOWN*", "UNKNOWN+NOT_RESPONDING"}},
		"future":            {[]string{"FUTURE"}, names{"FUTR", "FUTURE", "FUTURE"}},
		"reboot":            {[]string{"IDLE", "REBOOT_REQUESTED"}, names{"BOOT", "REBOOT", "IDLE+REBOOT_REQUESTED"}},
		"alloc reboot":      {[]string{"ALLOCATED", "REBOOT_REQUESTED"}, names{"ALLOC@", "ALLOCATED@", "ALLOCATED+REBOOT_REQUESTED"}},
		"invalid reg":       {[]string{"IDLE", "INVALID_REG"}, names{"INVAL", "INVAL", "IDLE+INVALID_REG"}},
		"mixed powering up": {[]string{"MIXED", "POWERING_UP"}, names{"MIX#", "MIXED#", "MIXED+POWERING_UP"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s, _, _ := NodeStateFromWire(tc.rest)
			got := names{s.Compact(), s.String(), s.Complete()}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("state %v (-want +got):\n%s", tc.rest, diff)
			}
		})
	}
}
