package nodeagent

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/failover"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
)

// TestMessagesReachABackupController: with the primary controller down
// and the next in standby, the daemon's registration and heartbeats
// reach the third, each attempt signed afresh: the controllers check
// tokens against one replay cache (as replicated controllers would), so
// a token sent twice would be refused.
func TestMessagesReachABackupController(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()

	v := &msgauth.Verifier{Keys: clusterkey.NewHolder(clusterkey.FromSecret(testStepKey)), Audience: msgauth.Controller, Replay: msgauth.NewReplay()}
	var mu sync.Mutex
	var standbys int
	seen := map[string]int{}
	refused := 0
	check := func(r *http.Request) bool {
		if _, err := v.VerifyRequest(r, nodeproto.MaxBody); err != nil {
			mu.Lock()
			refused++
			mu.Unlock()
			t.Logf("refused %s: %v", r.URL.Path, err)
			return false
		}
		return true
	}
	standby := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !check(r) {
			nodeproto.Fail(w, http.StatusUnauthorized, errUnauthorizedTest)
			return
		}
		mu.Lock()
		standbys++
		mu.Unlock()
		w.Header().Set(droverapi.StandbyHeader, "1")
		nodeproto.Fail(w, http.StatusServiceUnavailable, errStandbyTest)
	}))
	defer standby.Close()
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !check(r) {
			nodeproto.Fail(w, http.StatusUnauthorized, errUnauthorizedTest)
			return
		}
		mu.Lock()
		seen[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == nodeproto.PathRegister {
			nodeproto.Reply(w, http.StatusOK, nodeproto.RegisterReply{HeartbeatEvery: 50 * time.Millisecond})
			return
		}
		nodeproto.Reply(w, http.StatusOK, struct{}{})
	}))
	defer leader.Close()

	startAgent(t, func(c *Config) {
		c.Controllers = []string{dead, standby.URL, leader.URL}
		c.Retry = failover.Options{ConnectWindow: 2 * time.Second, StandbyWindow: 2 * time.Second, DialTimeout: 500 * time.Millisecond}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		regs, hbs := seen[nodeproto.PathRegister], seen[nodeproto.PathHeartbeat]
		mu.Unlock()
		if regs >= 1 && hbs >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the backup controller saw %d registrations and %d heartbeats, want 1 and 3", regs, hbs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if refused != 0 {
		t.Errorf("%d messages refused: an attempt reused a token", refused)
	}
	// Once the third answered, the messages go straight to it.
	if standbys != 1 {
		t.Errorf("the controller in standby was asked %d times, want once", standbys)
	}
}

var (
	errUnauthorizedTest = &nodeproto.StatusError{Code: http.StatusUnauthorized, Msg: "bad token"}
	errStandbyTest      = &nodeproto.StatusError{Code: http.StatusServiceUnavailable, Msg: "in standby"}
)
