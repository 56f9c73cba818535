package daemon

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/replog"
	"github.com/droverhq/drover/internal/restapi"
)

// A follower's forwarded requests share one connection to the leader,
// bodies intact; an idle connection the leader closed costs nothing but a
// new one; a body over the leader's limit reaches it as too large; with
// no leader nothing is sent.
func TestLeaderTransport(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, restapi.MaxBody+1))
		if err != nil || len(b) > restapi.MaxBody {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
			return
		}
		io.WriteString(w, r.Method+" "+string(b))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	var leads atomic.Bool
	leads.Store(true)
	lt := &leaderTransport{
		leader: func() (replog.Member, bool) { return replog.Member{ID: "ctl1", Addr: addr}, leads.Load() },
		scheme: "http", next: forwardTransport(nil),
	}
	post := func(body string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, "http://leader/slurm/v0.0.44/job/submit", io.NopCloser(strings.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := lt.RoundTrip(req)
		if err != nil {
			t.Fatalf("forward %q: %v", body[:min(len(body), 20)], err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out)
	}
	for i := range 5 {
		body := strings.Repeat("x", i*1000)
		if code, out := post(body); code != 200 || out != "POST "+body {
			t.Fatalf("request %d: HTTP %d %.40q", i, code, out)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("5 forwarded requests took %d connections, want 1", n)
	}
	// The leader closes the connection while it is idle (Go's server
	// closes idle ones only: a request it has begun reading is answered
	// first); the follower's transport sees it go and opens another.
	// (A request sent in the very instant of the close fails, and the
	// client is told so, as when the leader dies under it.)
	srv.CloseClientConnections()
	time.Sleep(300 * time.Millisecond)
	if code, out := post("after"); code != 200 || out != "POST after" {
		t.Errorf("after the leader closed the connection: HTTP %d %q", code, out)
	}
	if code, _ := post(strings.Repeat("y", restapi.MaxBody+100)); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over the limit: HTTP %d, want 413", code)
	}
	leads.Store(false)
	before := conns.Load()
	req, _ := http.NewRequest(http.MethodPost, "http://leader/x", strings.NewReader("z"))
	if _, err := lt.RoundTrip(req); err != errNoLeader {
		t.Errorf("no leader: %v, want errNoLeader", err)
	}
	if conns.Load() != before {
		t.Error("a request went out with no leader")
	}
}
