package msgauth

import (
	"sync"
	"time"
)

// Replay remembers the nonces of tokens until they expire, so that a
// token captured on the wire is refused the second time, as munge refuses
// a replayed credential. It is safe for concurrent use.
type Replay struct {
	mu        sync.Mutex
	seen      map[string]time.Time
	nextPrune time.Time
}

// NewReplay returns an empty cache.
func NewReplay() *Replay { return &Replay{seen: map[string]time.Time{}} }

// Use records nonce, kept until until, and reports whether it was new.
func (r *Replay) Use(nonce string, until, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.After(r.nextPrune) {
		// At most once a second: a sweep of the map costs little next
		// to the tokens of a second.
		for n, t := range r.seen {
			if now.After(t) {
				delete(r.seen, n)
			}
		}
		r.nextPrune = now.Add(time.Second)
	}
	if t, ok := r.seen[nonce]; ok && !now.After(t) {
		return false
	}
	r.seen[nonce] = until
	return true
}

// Len is how many nonces are remembered.
func (r *Replay) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen)
}
