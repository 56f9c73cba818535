package cred

import (
	"errors"
	"sync"
	"testing"
	"time"
)

func TestReplayCache(t *testing.T) {
	c := stepCred()
	c.Nonce = "n1"
	r := NewReplayCache()
	if err := r.Use(c, "launch", t0); err != nil {
		t.Fatalf("first use: %v", err)
	}
	err := r.Use(c, "launch", t0.Add(time.Second))
	if !errors.Is(err, ErrReplayed) {
		t.Fatalf("second use = %v, want ErrReplayed", err)
	}
	if err.Error() != "stepcred: credential for job 42 step 0 already used for launch: Job credential replayed" {
		t.Errorf("error = %q", err)
	}
	if err := r.Use(c, "hello", t0); err != nil {
		t.Errorf("same credential, other purpose: %v", err)
	}
	other := c
	other.Nonce = "n2"
	if err := r.Use(other, "launch", t0); err != nil {
		t.Errorf("other nonce: %v", err)
	}
	if got := r.Len(); got != 3 {
		t.Errorf("Len = %d, want 3", got)
	}
}

func TestReplayCacheRefuses(t *testing.T) {
	tests := map[string]struct {
		c    func(*Cred)
		now  time.Time
		want error
	}{
		"no nonce":       {c: func(c *Cred) { c.Nonce = "" }, now: t0, want: ErrBadCred},
		"expired":        {now: t0.Add(time.Hour), want: ErrExpired},
		"expiring now":   {now: t0.Add(10 * time.Minute), want: ErrExpired},
		"never expiring": {c: func(c *Cred) { c.Expires = time.Time{} }, now: t0, want: ErrExpired},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			c := stepCred()
			c.Nonce = "n"
			if tt.c != nil {
				tt.c(&c)
			}
			r := NewReplayCache()
			if err := r.Use(c, "launch", tt.now); !errors.Is(err, tt.want) {
				t.Errorf("Use = %v, want %v", err, tt.want)
			}
			if r.Len() != 0 {
				t.Errorf("refused use remembered: Len = %d", r.Len())
			}
		})
	}
}

func TestReplayCachePrunes(t *testing.T) {
	r := NewReplayCache()
	use := func(nonce string, expires, now time.Time) error {
		c := stepCred()
		c.Nonce, c.Expires = nonce, expires
		return r.Use(c, "launch", now)
	}
	for i, nonce := range []string{"a", "b", "c"} {
		if err := use(nonce, t0.Add(time.Duration(i+1)*time.Minute), t0); err != nil {
			t.Fatal(err)
		}
	}
	steps := []struct {
		nonce   string
		expires time.Duration // after t0
		now     time.Duration // after t0
		want    int           // uses remembered after this one
	}{
		{nonce: "d", expires: 10 * time.Minute, now: 30 * time.Second, want: 4},  // nothing expired yet
		{nonce: "e", expires: 10 * time.Minute, now: time.Minute, want: 4},       // a expires as e comes
		{nonce: "f", expires: 10 * time.Minute, now: 2*time.Minute + 1, want: 4}, // b gone
		{nonce: "g", expires: 20 * time.Minute, now: 10 * time.Minute, want: 1},  // c, d, e, f gone
		{nonce: "h", expires: 30 * time.Minute, now: 19 * time.Minute, want: 2},  // g still there
	}
	for _, s := range steps {
		if err := use(s.nonce, t0.Add(s.expires), t0.Add(s.now)); err != nil {
			t.Fatal(err)
		}
		if got := r.Len(); got != s.want {
			t.Errorf("after %s at %v: Len = %d, want %d", s.nonce, s.now, got, s.want)
		}
	}
	// A pruned nonce whose credential is still presented is refused as
	// expired, never accepted again.
	if err := use("a", t0.Add(time.Minute), t0.Add(time.Hour)); !errors.Is(err, ErrExpired) {
		t.Errorf("reuse of a pruned credential = %v, want ErrExpired", err)
	}
}

func TestReplayCacheConcurrent(t *testing.T) {
	r := NewReplayCache()
	c := stepCred()
	c.Nonce = "shared"
	var wg sync.WaitGroup
	var mu sync.Mutex
	accepted := 0
	for range 32 {
		wg.Go(func() {
			if r.Use(c, "launch", t0) == nil {
				mu.Lock()
				accepted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if accepted != 1 {
		t.Errorf("%d of 32 concurrent uses accepted, want 1", accepted)
	}
}
