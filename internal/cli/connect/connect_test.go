package connect

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/failover"
	"github.com/droverhq/drover/internal/slurmconf"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// threeLoopbacks listens on the same port of 127.0.0.1, .2 and .3, as
// three controller hosts share SlurmctldPort.
func threeLoopbacks(t *testing.T) (int, []net.Listener) {
	t.Helper()
	for range 20 {
		l1, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l1.Addr().(*net.TCPAddr).Port
		ls := []net.Listener{l1}
		for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
			l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
			if err != nil {
				break
			}
			ls = append(ls, l)
		}
		if len(ls) == 3 {
			return port, ls
		}
		for _, l := range ls {
			l.Close()
		}
	}
	t.Skip("no port free on 127.0.0.1, .2 and .3 at once")
	return 0, nil
}

// writeConf writes a slurm.conf naming the three controllers, with
// MessageTimeout short so that the window ends soon.
func writeConf(t *testing.T, port int, extra string) string {
	t.Helper()
	dir := t.TempDir()
	conf := fmt.Sprintf(`ClusterName=ha
SlurmctldHost=ctl1(127.0.0.1)
SlurmctldHost=ctl2(127.0.0.2)
SlurmctldHost=ctl3(127.0.0.3)
SlurmctldPort=%d
StateSaveLocation=%s
MessageTimeout=2
SlurmctldTimeout=2
NodeName=n1 CPUs=1
PartitionName=p Nodes=n1 Default=YES
%s`, port, filepath.Join(dir, "state"), extra)
	path := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLURM_CONF", path)
	t.Setenv("DROVER_SOCKET", "")
	t.Setenv("DROVER_URL", "")
	t.Setenv("SLURM_JWT", "test-token")
	return path
}

func serve(t *testing.T, l net.Listener, h http.HandlerFunc) {
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

func TestResolveEveryController(t *testing.T) {
	port, ls := threeLoopbacks(t)
	writeConf(t, port, "")
	ls[0].Close() // the primary is down
	var standbys, answers atomic.Int32
	serve(t, ls[1], func(w http.ResponseWriter, r *http.Request) {
		standbys.Add(1)
		w.Header().Set(droverapi.StandbyHeader, "1")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	serve(t, ls[2], func(w http.ResponseWriter, r *http.Request) {
		answers.Add(1)
		io.WriteString(w, `{"answer":"ctl3"}`)
	})
	tg, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	p := strconv.Itoa(port)
	want := []string{"http://127.0.0.1:" + p, "http://127.0.0.2:" + p, "http://127.0.0.3:" + p}
	if diff := cmp.Diff(want, tg.Controllers); diff != "" {
		t.Errorf("controllers (-want +got):\n%s", diff)
	}
	if tg.URL != want[0] || tg.Socket != "" {
		t.Errorf("URL %q, Socket %q: want the first controller over TCP", tg.URL, tg.Socket)
	}
	if tg.Retry.ConnectWindow != 2*time.Second || tg.Retry.StandbyWindow != 3*time.Second {
		t.Errorf("retry windows %v, want MessageTimeout's 2s and SlurmctldTimeout*1.5's 3s", tg.Retry)
	}
	for i := range 2 {
		var out struct{ Answer string }
		if err := CallTarget(context.Background(), tg, http.MethodGet, "/drover/v1/anything", nil, &out); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if out.Answer != "ctl3" {
			t.Errorf("call %d answered by %q, want ctl3", i, out.Answer)
		}
	}
	// The second call went straight to the controller that answered.
	if standbys.Load() != 1 || answers.Load() != 2 {
		t.Errorf("standby answers %d, leader answers %d; want 1 and 2", standbys.Load(), answers.Load())
	}
}

// A command waits out the whole standby window, and a controller's
// answer after it: a long SlurmctldTimeout is not cut short by the
// answer's own limit.
func TestTimeoutCoversStandbyWindow(t *testing.T) {
	for _, c := range []struct {
		msg, ctld time.Duration
		want      time.Duration
	}{
		{0, 0, 180*time.Second + answerTimeout},
		{10 * time.Second, 300 * time.Second, 450*time.Second + answerTimeout},
		{100 * time.Second, 2 * time.Second, 100*time.Second + answerTimeout},
	} {
		tg := Target{URL: "http://127.0.0.1:1", Retry: failover.Windows(c.msg, c.ctld)}
		if got := tg.timeout(); got != c.want {
			t.Errorf("MessageTimeout %v, SlurmctldTimeout %v: timeout %v, want %v", c.msg, c.ctld, got, c.want)
		}
	}
	if got := (Target{URL: "http://127.0.0.1:1"}).timeout(); got != failover.DefaultStandbyWindow+answerTimeout {
		t.Errorf("no windows: timeout %v", got)
	}
}

func TestResolveNoControllerUp(t *testing.T) {
	port, ls := threeLoopbacks(t)
	writeConf(t, port, "")
	for _, l := range ls {
		l.Close()
	}
	tg, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = CallTarget(context.Background(), tg, http.MethodGet, "/slurm/v0.0.44/ping/", nil, nil)
	took := time.Since(start)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %v, want the last refused connection (the commands' connect failure)", err)
	}
	if took < 2*time.Second || took > 4*time.Second {
		t.Errorf("gave up after %s, want MessageTimeout's 2s", took)
	}
}

func TestControllerHere(t *testing.T) {
	me, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	short, _, _ := strings.Cut(me, ".")
	tests := map[string]struct {
		conf string
		want bool
	}{
		"first by name":   {conf: "SlurmctldHost=" + short + "(192.0.2.1)\nSlurmctldHost=other(192.0.2.2)\n", want: true},
		"backup by name":  {conf: "SlurmctldHost=other(192.0.2.1)\nSlurmctldHost=" + short + "(192.0.2.2)\n", want: true},
		"backup loopback": {conf: "SlurmctldHost=other(192.0.2.1)\nSlurmctldHost=mine(127.0.0.1)\n", want: true},
		"none of them":    {conf: "SlurmctldHost=other(192.0.2.1)\nSlurmctldHost=another-" + short + "(192.0.2.2)\n", want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "slurm.conf")
			os.WriteFile(path, []byte("ClusterName=c\n"+tc.conf), 0o644)
			sc, err := slurmconf.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if got := controllerHere(sc); got != tc.want {
				t.Errorf("controllerHere = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestDeadLocalControllerFallsBackToTCP: on a controller's host whose
// controller is down (its socket left behind, refusing), a caller with
// a token goes over TCP to the others; one without keeps the socket and
// fails as before.
func TestDeadLocalControllerFallsBackToTCP(t *testing.T) {
	port, ls := threeLoopbacks(t)
	for _, l := range ls {
		defer l.Close()
	}
	path := writeConf(t, port, "")
	state := filepath.Join(filepath.Dir(path), "state")
	os.MkdirAll(state, 0o755)
	sock := filepath.Join(state, "drover.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	// Up: the socket is used.
	tg, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if tg.Socket != sock {
		t.Errorf("Socket %q with the controller up, want %q", tg.Socket, sock)
	}
	l.Close()
	tg, err = Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if tg.Socket != "" {
		t.Errorf("Socket %q with the local controller down and SLURM_JWT set, want TCP", tg.Socket)
	}
	t.Setenv("SLURM_JWT", "")
	t.Setenv("DROVER_SACK_SOCKET", filepath.Join(state, "no-sack"))
	tg, err = Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if tg.Socket != sock {
		t.Errorf("Socket %q without a token or credential service, want %q as before", tg.Socket, sock)
	}
}

// TestSubmitRetriedOnce: the generated client's submission, its answer
// lost when the first controller's connection broke, is sent to the next
// with the request id the failover gave it, so that the controllers
// apply it once; the command gets the job id.
func TestSubmitRetriedOnce(t *testing.T) {
	type hit struct{ id, body string }
	var mu sync.Mutex
	var hits []hit
	record := func(r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, hit{r.Header.Get(droverapi.RequestIDHeader), string(b)})
		mu.Unlock()
	}
	lost := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}))
	defer lost.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"job_id":7,"step_id":"batch","errors":[],"warnings":[]}`)
	}))
	defer up.Close()
	t.Setenv("SLURM_JWT", "")
	tg := Target{URL: lost.URL, Controllers: []string{lost.URL, up.URL}}
	c, err := Client(tg, "alice")
	if err != nil {
		t.Fatal(err)
	}
	desc := v0044.V0044JobDescMsg{Script: v0044.NewOptString("#!/bin/sh\ntrue\n")}
	res, err := c.SlurmV0044PostJobSubmit(context.Background(), v0044.NewOptV0044JobSubmitReq(v0044.V0044JobSubmitReq{Job: v0044.NewOptV0044JobDescMsg(desc)}))
	if err != nil {
		t.Fatal(err)
	}
	ok, isOK := res.(*v0044.V0044OpenapiJobSubmitResponse)
	if !isOK || ok.JobID.Or(0) != 7 {
		t.Fatalf("answer %#v, want job 7", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hits) != 2 || hits[0] != hits[1] || hits[0].id == "" || !strings.Contains(hits[0].body, "true") {
		t.Errorf("hits %q: want the same submission twice with one request id", hits)
	}
}
