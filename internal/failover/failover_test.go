package failover_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/failover"
	stepproto "github.com/droverhq/drover/internal/step/proto"
)

// deadAddr is a controller whose host refuses the connection: a port
// that was listened on and closed.
func deadAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "http://" + l.Addr().String()
	l.Close()
	return addr
}

// controller is a test controller that records what reached it.
type controller struct {
	*httptest.Server
	mu   sync.Mutex
	hits []hit
}

type hit struct {
	Method, Path, RequestID, Body string
}

func (c *controller) record(r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.hits = append(c.hits, hit{r.Method, r.URL.Path, r.Header.Get(droverapi.RequestIDHeader), string(b)})
	c.mu.Unlock()
}

func (c *controller) got() []hit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]hit(nil), c.hits...)
}

func newController(t *testing.T, h func(c *controller, w http.ResponseWriter, r *http.Request)) *controller {
	c := &controller{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.record(r)
		h(c, w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

// leader answers every request.
func leader(_ *controller, w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, "leader "+r.URL.Path)
}

// inStandby answers as a follower that knows no leader.
func inStandby(_ *controller, w http.ResponseWriter, _ *http.Request) {
	w.Header().Set(droverapi.StandbyHeader, "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	io.WriteString(w, `{"errors":[{"error":"in standby"}]}`)
}

// lostOnce breaks the connection after reading the first request, as a
// controller that dies before it answers; later requests are answered.
func lostOnce() func(c *controller, w http.ResponseWriter, r *http.Request) {
	var n atomic.Int32
	return func(c *controller, w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		leader(c, w, r)
	}
}

func fast() failover.Options {
	return failover.Options{ConnectWindow: 2 * time.Second, StandbyWindow: 3 * time.Second,
		DialTimeout: 500 * time.Millisecond, Backoff: 20 * time.Millisecond, MaxBackoff: 100 * time.Millisecond}
}

func client(t *testing.T, o failover.Options, urls ...string) (*http.Client, *failover.Transport) {
	t.Helper()
	ft, err := failover.New(nil, urls, o)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Transport: ft}, ft
}

func do(t *testing.T, c *http.Client, method, url, body string, hdr ...string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestDeadStandbyLeader(t *testing.T) {
	dead := deadAddr(t)
	follower := newController(t, inStandby)
	lead := newController(t, leader)
	c, ft := client(t, fast(), dead, follower.URL, lead.URL)
	code, body := do(t, c, "GET", dead+"/slurm/v0.0.44/ping/", "")
	if code != 200 || body != "leader /slurm/v0.0.44/ping/" {
		t.Fatalf("got HTTP %d %q, want the leader's answer", code, body)
	}
	if ft.Current() != lead.URL {
		t.Errorf("Current() = %s, want the leader %s", ft.Current(), lead.URL)
	}
	// The next request goes straight to the controller that answered.
	do(t, c, "GET", dead+"/slurm/v0.0.44/diag/", "")
	want := []hit{{Method: "GET", Path: "/slurm/v0.0.44/ping/"}}
	if diff := cmp.Diff(want, follower.got()); diff != "" {
		t.Errorf("the follower saw (-want +got):\n%s", diff)
	}
	if n := len(lead.got()); n != 2 {
		t.Errorf("the leader saw %d requests, want 2", n)
	}
}

// Job submissions and step creations carry a request id, and are sent
// again with it when the first try's answer was lost.
func TestCreationRetriedWithItsRequestID(t *testing.T) {
	steps := strings.Replace(stepproto.PathCreate, "{job_id}", "42", 1)
	for _, path := range []string{"/slurm/v0.0.44/job/submit", "/slurm/v0.0.42/job/allocate", steps} {
		t.Run(path, func(t *testing.T) {
			first := newController(t, func(c *controller, w http.ResponseWriter, r *http.Request) {
				conn, _, _ := w.(http.Hijacker).Hijack()
				conn.Close()
			})
			second := newController(t, leader)
			c, _ := client(t, fast(), first.URL, second.URL)
			code, _ := do(t, c, "POST", first.URL+path, `{"job":{}}`)
			if code != 200 {
				t.Fatalf("HTTP %d, want the second controller's 200", code)
			}
			a, b := first.got(), second.got()
			if len(a) != 1 || len(b) != 1 {
				t.Fatalf("hits %v and %v, want one each", a, b)
			}
			if !failover.ValidRequestID(a[0].RequestID) {
				t.Errorf("request id %q not set to a valid one", a[0].RequestID)
			}
			if diff := cmp.Diff(a[0], b[0]); diff != "" {
				t.Errorf("the retry differs from the first try (-first +retry):\n%s", diff)
			}
		})
	}
}

func TestOwnRequestIDKept(t *testing.T) {
	first := newController(t, lostOnce())
	c, _ := client(t, fast(), first.URL)
	// Any POST carrying an id is safe to send again, to the same
	// controller too.
	code, _ := do(t, c, "POST", first.URL+"/drover/v1/anything", "x", droverapi.RequestIDHeader, "mine-1")
	if code != 200 {
		t.Fatalf("HTTP %d, want 200 on the retry", code)
	}
	want := []hit{{"POST", "/drover/v1/anything", "mine-1", "x"}, {"POST", "/drover/v1/anything", "mine-1", "x"}}
	if diff := cmp.Diff(want, first.got()); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
}

// A caller's own id (WithRequestID) goes on every request made with its
// context, a step creation's and its tries alike, and is kept across
// retries; a header the request sets itself wins.
func TestContextRequestID(t *testing.T) {
	first := newController(t, lostOnce())
	c, _ := client(t, fast(), first.URL)
	steps := strings.Replace(stepproto.PathCreate, "{job_id}", "42", 1)
	rctx := failover.WithRequestID(context.Background(), "srun-7")
	for range 2 {
		req, _ := http.NewRequestWithContext(rctx, "POST", first.URL+steps, strings.NewReader("s"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	req, _ := http.NewRequestWithContext(rctx, "POST", first.URL+"/drover/v1/other", strings.NewReader("o"))
	req.Header.Set(droverapi.RequestIDHeader, "own")
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
	}
	want := []hit{{"POST", steps, "srun-7", "s"}, {"POST", steps, "srun-7", "s"}, {"POST", steps, "srun-7", "s"}, {"POST", "/drover/v1/other", "own", "o"}}
	if diff := cmp.Diff(want, first.got()); diff != "" {
		t.Errorf("hits (-want +got):\n%s", diff)
	}
}

func TestOtherPostNotRetried(t *testing.T) {
	first := newController(t, lostOnce())
	second := newController(t, leader)
	c, _ := client(t, fast(), first.URL, second.URL)
	req, _ := http.NewRequest("POST", first.URL+"/slurm/v0.0.44/job/42", strings.NewReader(`{"comment":"x"}`))
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("HTTP %d, want the broken connection's error", resp.StatusCode)
	}
	if n := len(first.got()) + len(second.got()); n != 1 {
		t.Errorf("the update was sent %d times, want once", n)
	}
	if id := first.got()[0].RequestID; id != "" {
		t.Errorf("an update got request id %q", id)
	}
}

func TestGetRetriedAfterBadGateway(t *testing.T) {
	var n atomic.Int32
	first := newController(t, func(c *controller, w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		leader(c, w, r)
	})
	c, _ := client(t, fast(), first.URL)
	if code, _ := do(t, c, "GET", first.URL+"/slurm/v0.0.44/jobs/", ""); code != 200 {
		t.Errorf("GET: HTTP %d after a 502, want the retry's 200", code)
	}
	// A POST without an id gets the 502 itself.
	n.Store(0)
	if code, _ := do(t, c, "POST", first.URL+"/slurm/v0.0.44/job/7", "{}"); code != http.StatusBadGateway {
		t.Errorf("POST: HTTP %d, want the 502", code)
	}
}

func TestWindowEndsWithConnectFailure(t *testing.T) {
	o := fast()
	c, _ := client(t, o, deadAddr(t), deadAddr(t), deadAddr(t))
	start := time.Now()
	resp, err := c.Get("http://unused/slurm/v0.0.44/ping/")
	took := time.Since(start)
	if err == nil {
		resp.Body.Close()
		t.Fatal("no error with every controller down")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %v, want the last connection refusal", err)
	}
	if took < o.ConnectWindow || took > o.ConnectWindow+time.Second {
		t.Errorf("gave up after %s, want the window of %s", took, o.ConnectWindow)
	}
}

func TestStandbyWindowEndsWithStandbyAnswer(t *testing.T) {
	o := fast()
	follower := newController(t, inStandby)
	c, _ := client(t, o, deadAddr(t), follower.URL)
	start := time.Now()
	code, body := do(t, c, "GET", follower.URL+"/slurm/v0.0.44/ping/", "")
	took := time.Since(start)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "in standby") {
		t.Errorf("HTTP %d %q, want the standby answer", code, body)
	}
	if took < o.StandbyWindow || took > o.StandbyWindow+time.Second {
		t.Errorf("gave up after %s, want the standby window of %s", took, o.StandbyWindow)
	}
}

func TestSilentControllerPassedOver(t *testing.T) {
	// A host that accepts and then says nothing (no TLS handshake) is
	// left after the dial timeout, not the whole window.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			defer conn.Close()
		}
	}()
	lead := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer lead.Close()
	o := fast()
	ft, err := failover.New(lead.Client().Transport, []string{"https://" + l.Addr().String(), lead.URL}, o)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := (&http.Client{Transport: ft}).Get(lead.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if took := time.Since(start); took > o.DialTimeout+500*time.Millisecond {
		t.Errorf("took %s past a silent controller, want about the dial timeout %s", took, o.DialTimeout)
	}
	if ft.Current() != lead.URL {
		t.Errorf("Current() = %s, want %s", ft.Current(), lead.URL)
	}
	// With it alone, the request fails as a connection that timed out:
	// a dial error, which the commands report as a connect failure.
	o.ConnectWindow = time.Second
	ft, err = failover.New(lead.Client().Transport, []string{"https://" + l.Addr().String()}, o)
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&http.Client{Transport: ft}).Get(lead.URL + "/x")
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("error %v, want a dial error that timed out", err)
	}
}

func TestLeaderHeaderFollowed(t *testing.T) {
	lead := newController(t, leader)
	follower := newController(t, func(c *controller, w http.ResponseWriter, r *http.Request) {
		w.Header().Set(droverapi.LeaderHeader, strings.TrimPrefix(lead.URL, "http://"))
		io.WriteString(w, "forwarded")
	})
	c, ft := client(t, fast(), follower.URL, lead.URL)
	do(t, c, "GET", follower.URL+"/a", "")
	if ft.Current() != lead.URL {
		t.Errorf("Current() = %s after the follower named %s", ft.Current(), lead.URL)
	}
	// A leader that is not a controller is not followed.
	other := newController(t, func(c *controller, w http.ResponseWriter, r *http.Request) {
		w.Header().Set(droverapi.LeaderHeader, "elsewhere.example:6817")
	})
	c, ft = client(t, fast(), other.URL, lead.URL)
	do(t, c, "GET", other.URL+"/a", "")
	if ft.Current() != other.URL {
		t.Errorf("Current() = %s, want %s: an unknown leader must not be followed", ft.Current(), other.URL)
	}
}

func TestLargeBodySentOnce(t *testing.T) {
	first := newController(t, lostOnce())
	o := fast()
	o.MaxBody = 8
	c, _ := client(t, o, first.URL)
	req, _ := http.NewRequest("POST", first.URL+"/slurm/v0.0.44/job/submit", strings.NewReader("0123456789abcdef"))
	req.ContentLength = -1 // unknown: the transport reads up to the limit
	resp, err := c.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("HTTP %d, want the lost connection's error", resp.StatusCode)
	}
	got := first.got()
	if len(got) != 1 || got[0].Body != "0123456789abcdef" {
		t.Errorf("hits %+v, want the whole body once", got)
	}
}

func TestIdempotentRetried(t *testing.T) {
	first := newController(t, lostOnce())
	c, _ := client(t, fast(), first.URL)
	req, _ := http.NewRequestWithContext(failover.Idempotent(context.Background()), "POST", first.URL+"/drover/v1/node/heartbeat", strings.NewReader("{}"))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := len(first.got()); resp.StatusCode != 200 || n != 2 {
		t.Errorf("HTTP %d after %d tries, want 200 on the second", resp.StatusCode, n)
	}
}

// TestHungControllerPassedOver: a controller that takes requests and
// never answers costs one request its time; the next goes elsewhere.
func TestHungControllerPassedOver(t *testing.T) {
	release := make(chan struct{})
	hung := newController(t, func(c *controller, w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	lead := newController(t, leader)
	_, ft := client(t, fast(), hung.URL, lead.URL)
	c := &http.Client{Transport: ft, Timeout: 300 * time.Millisecond}
	if resp, err := c.Post(hung.URL+"/drover/v1/node/jobdone", "application/json", strings.NewReader("{}")); err == nil {
		resp.Body.Close()
		t.Fatalf("HTTP %d from a controller that never answers", resp.StatusCode)
	}
	resp, err := c.Post(hung.URL+"/drover/v1/node/jobdone", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("the next request: %v", err)
	}
	resp.Body.Close()
	if len(hung.got()) != 1 || len(lead.got()) != 1 {
		t.Errorf("the hung controller got %d requests, the leader %d; want 1 and 1", len(hung.got()), len(lead.got()))
	}
}
