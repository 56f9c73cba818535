package ctlstate

import (
	"fmt"
	"maps"
	"sync"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
)

// submitTally counts the jobs that have not ended (an array's pending
// tasks each), by user, account, partition and QOS, so that the submit
// limits read a few thousand groups instead of every job. It is derived
// state: built from the jobs on first use, kept up to date from the jobs
// each command touched, never saved. Its own lock lets submissions read
// it under the controller's read lock.
type submitTally struct {
	mu      sync.Mutex
	built   bool
	byJob   map[job.ID]tallyEntry
	byGroup map[limitsKey]uint32
	// byKey counts the jobs of each limit group (submitKeys) under
	// model and the partitions' QOS partQOS, keys holds each group of
	// jobs' limit groups; a new model (a sacctmgr change) or partition
	// QOS counts them again.
	model   *assoc.Model
	partQOS map[string]string
	keys    map[limitsKey][]string
	byKey   map[string]uint32
}

// limitsKey is what the groups a job counts in depend on.
type limitsKey struct{ user, account, partition, qos string }

type tallyEntry struct {
	k limitsKey
	n uint32
}

// build counts every job of s.
func (t *submitTally) build(s *State) {
	t.built, t.model, t.keys, t.byKey = true, nil, nil, nil
	t.byJob, t.byGroup = map[job.ID]tallyEntry{}, map[limitsKey]uint32{}
	for _, id := range s.order {
		t.update(id, s.Jobs[id])
	}
}

// limitCounts sets the jobs of s that count against each of the limit
// groups wanted, under s's accounting model and the partitions' QOS.
func (s *State) limitCounts(wanted map[string]uint32, partQOS map[string]string) {
	t := s.tally
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.built {
		t.build(s)
	}
	t.count(s.Acct, partQOS, wanted)
}

// update counts job id as it is now (nil: gone).
func (t *submitTally) update(id job.ID, j *job.Job) {
	if old, ok := t.byJob[id]; ok {
		if t.byGroup[old.k] -= old.n; t.byGroup[old.k] == 0 {
			delete(t.byGroup, old.k)
		}
		delete(t.byJob, id)
		t.addKeys(old.k, -int64(old.n))
	}
	if j == nil || j.State.Terminal() {
		return
	}
	n := uint32(1)
	if j.IsArrayMeta() {
		n = uint32(len(j.PendingTasks))
	}
	if n == 0 {
		return
	}
	k := limitsKey{j.Req.UserName, j.Req.Account, j.Req.Partition, j.Req.QOS}
	t.byJob[id] = tallyEntry{k, n}
	t.byGroup[k] += n
	t.addKeys(k, int64(n))
}

// addKeys adds n jobs of group k to its limit groups' counts, once
// they are counted under a model.
func (t *submitTally) addKeys(k limitsKey, n int64) {
	if t.model == nil {
		return
	}
	keys, ok := t.keys[k]
	if !ok {
		keys = submitKeys(t.model, &job.Request{UserName: k.user, Account: k.account, Partition: k.partition, QOS: k.qos}, t.partQOS[k.partition])
		t.keys[k] = keys
	}
	for _, key := range keys {
		if v := int64(t.byKey[key]) + n; v > 0 {
			t.byKey[key] = uint32(v)
		} else {
			delete(t.byKey, key)
		}
	}
}

// count sets the jobs that count against each of the limit groups
// wanted, under model m and the partitions' QOS partQOS.
func (t *submitTally) count(m *assoc.Model, partQOS map[string]string, wanted map[string]uint32) {
	if t.model != m || !maps.Equal(t.partQOS, partQOS) {
		t.model, t.partQOS = m, maps.Clone(partQOS)
		t.keys, t.byKey = map[limitsKey][]string{}, map[string]uint32{}
		for k, n := range t.byGroup {
			t.addKeys(k, int64(n))
		}
	}
	for key := range wanted {
		wanted[key] = t.byKey[key]
	}
}

// tallyTouched brings the submit tally up to date with the jobs the
// command just applied changed.
func (s *State) tallyTouched() {
	t := s.tally
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.built {
		return
	}
	for _, id := range s.touched {
		t.update(id, s.Jobs[id])
	}
}

// CheckSubmitTally says whether the submit limits' running count of jobs
// matches a count of every job, under the partitions' QOS partQOS. The
// tally is derived state kept up to date command by command; tests call
// this after each step to catch a change the tally missed.
func (s *State) CheckSubmitTally(partQOS map[string]string) error {
	kept := s.tally
	kept.mu.Lock()
	defer kept.mu.Unlock()
	if !kept.built {
		return fmt.Errorf("no tally kept")
	}
	var fresh submitTally
	fresh.build(s)
	if !maps.Equal(fresh.byGroup, kept.byGroup) {
		return fmt.Errorf("tally %v, counted %v", kept.byGroup, fresh.byGroup)
	}
	kept.count(s.Acct, partQOS, map[string]uint32{})
	fresh.count(s.Acct, partQOS, map[string]uint32{})
	if !maps.Equal(fresh.byKey, kept.byKey) {
		return fmt.Errorf("limit groups %v, counted %v", kept.byKey, fresh.byKey)
	}
	return nil
}
