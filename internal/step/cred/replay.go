package cred

import (
	"fmt"
	"sync"
	"time"
)

// ReplayCache refuses a credential used twice for the same purpose on one
// node, as slurmd refuses a replayed job credential: a launch request
// captured on the wire cannot start the tasks a second time. It remembers
// each (nonce, purpose) until the credential expires; after that Verify
// refuses the credential anyway. It is safe for concurrent use.
type ReplayCache struct {
	mu   sync.Mutex
	seen map[replayKey]time.Time // -> the credential's Expires
	// next is the earliest Expires in seen: nothing can be pruned before.
	next time.Time
}

type replayKey struct{ nonce, purpose string }

// NewReplayCache returns an empty cache.
func NewReplayCache() *ReplayCache {
	return &ReplayCache{seen: make(map[replayKey]time.Time)}
}

// Use records that c is used for purpose (such as "launch") at now, and
// fails with ErrReplayed if it already was. It refuses an expired
// credential with ErrExpired, since the cache forgets a nonce once its
// credential expires, and one without a nonce with ErrBadCred. Entries
// whose credentials have expired by now are pruned.
func (r *ReplayCache) Use(c Cred, purpose string, now time.Time) error {
	if c.Nonce == "" {
		return fmt.Errorf("stepcred: credential for job %d step %d has no nonce: %w", c.JobID, c.StepID, ErrBadCred)
	}
	if !now.Before(c.Expires) {
		return fmt.Errorf("stepcred: credential for job %d step %d expired at %s: %w",
			c.JobID, c.StepID, c.Expires.Format(time.RFC3339), ErrExpired)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prune(now)
	k := replayKey{c.Nonce, purpose}
	if _, ok := r.seen[k]; ok {
		return fmt.Errorf("stepcred: credential for job %d step %d already used for %s: %w", c.JobID, c.StepID, purpose, ErrReplayed)
	}
	r.seen[k] = c.Expires
	if len(r.seen) == 1 || c.Expires.Before(r.next) {
		r.next = c.Expires
	}
	return nil
}

// Len returns the number of remembered uses.
func (r *ReplayCache) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}

// prune forgets the uses of credentials expired at now. r.mu is held.
func (r *ReplayCache) prune(now time.Time) {
	if len(r.seen) == 0 || now.Before(r.next) {
		return
	}
	r.next = time.Time{}
	for k, exp := range r.seen {
		if !now.Before(exp) {
			delete(r.seen, k)
		} else if r.next.IsZero() || exp.Before(r.next) {
			r.next = exp
		}
	}
}
