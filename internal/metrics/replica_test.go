package metrics_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"

	"github.com/droverhq/drover/internal/metrics"
)

func TestWatchReplica(t *testing.T) {
	m := metrics.NewController()
	open := false
	r := metrics.Replica{State: "Follower", Term: 4, CommitIndex: 90, AppliedIndex: 89, LastContact: time.Now().Add(-2 * time.Second), LeaderChanges: 3}
	m.WatchReplica(func() (metrics.Replica, bool) { return r, open })
	gather := func() map[string]*dto.MetricFamily {
		t.Helper()
		fs, err := m.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]*dto.MetricFamily{}
		for _, f := range fs {
			out[f.GetName()] = f
		}
		return out
	}
	if fams := gather(); fams["drover_raft_term"] != nil {
		t.Fatal("raft series before the replica opened")
	}
	open = true
	fams := gather()
	got := map[string]float64{}
	for _, s := range []string{"Leader", "Follower", "Candidate", "Shutdown"} {
		got["state="+s] = value(fams, "drover_raft_state", "state", s)
	}
	for _, n := range []string{"drover_raft_term", "drover_raft_commit_index", "drover_raft_applied_index", "drover_raft_leader_changes_total"} {
		got[n] = value(fams, n)
	}
	want := map[string]float64{"state=Leader": 0, "state=Follower": 1, "state=Candidate": 0, "state=Shutdown": 0,
		"drover_raft_term": 4, "drover_raft_commit_index": 90, "drover_raft_applied_index": 89, "drover_raft_leader_changes_total": 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("raft series (-want +got):\n%s", diff)
	}
	if c := value(fams, "drover_raft_last_contact_seconds"); c < 2 || c > 60 {
		t.Errorf("last contact %v seconds ago, want about 2", c)
	}
	// The leader has no last contact.
	r.State, r.LastContact = "Leader", time.Time{}
	fams = gather()
	if value(fams, "drover_raft_state", "state", "Leader") != 1 || fams["drover_raft_last_contact_seconds"] != nil {
		t.Errorf("a leader's series: state %v, last contact %v", value(fams, "drover_raft_state", "state", "Leader"), fams["drover_raft_last_contact_seconds"])
	}
}
