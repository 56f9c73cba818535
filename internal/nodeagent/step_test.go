package nodeagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	stepcred "github.com/droverhq/drover/internal/step/cred"
	stepio "github.com/droverhq/drover/internal/step/stream"
	"github.com/droverhq/drover/internal/usercred"
)

// testWait bounds every wait in these tests: generous, since the machine
// may be loaded; nothing asserts that anything is fast.
const testWait = 15 * time.Second

var testStepKey = bytes.Repeat([]byte{0x5a}, stepcred.KeySize)

// logWriter sends the agent's log to t.Log until the test is over.
type logWriter struct {
	mu   sync.Mutex
	t    testing.TB
	over bool
	buf  strings.Builder
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	// A fuzz target may not log through its testing.F.
	if _, fuzz := w.t.(*testing.F); !w.over && !fuzz {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// testAgent is a node daemon "n1" serving on loopback, with a controller
// that accepts whatever it is sent.
type testAgent struct {
	a   *Agent
	url string
	lw  *logWriter
	// stop stops the agent as its daemon would at shutdown.
	stop func()
}

func startAgent(t testing.TB, mod func(*Config)) *testAgent {
	t.Helper()
	lw := &logWriter{t: t}
	t.Cleanup(func() { lw.mu.Lock(); lw.over = true; lw.mu.Unlock() })
	ctrl := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nodeproto.Reply(w, http.StatusOK, struct{}{})
	}))
	t.Cleanup(ctrl.Close)
	cfg := Config{
		Name: "n1", Controllers: []string{ctrl.URL}, Listen: "127.0.0.1:0",
		SpoolDir: t.TempDir(), CPUs: 2, Keys: clusterkey.NewHolder(clusterkey.FromSecret(testStepKey)),
	}
	if mod != nil {
		mod(&cfg)
	}
	a, err := New(cfg, slog.New(slog.NewTextHandler(lw, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() { errc <- a.Run(ctx, ready) }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-errc:
		t.Fatalf("agent stopped: %v", err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-errc; err != nil {
				t.Errorf("agent: %v", err)
			}
			if err := a.Close(); err != nil {
				t.Errorf("close agent: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return &testAgent{a: a, url: "http://" + addr.String(), stop: stop, lw: lw}
}

func (ta *testAgent) post(path string, v any) error {
	ctx, cancel := context.WithTimeout(context.Background(), testWait)
	defer cancel()
	return asController.Post(ctx, msgauth.Node("n1"), ta.url+path, v, nil)
}

// asController signs requests as the controller does.
var asController = &nodeproto.Client{HTTP: http.DefaultClient,
	Signer: &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(testStepKey)), Issuer: msgauth.Controller}}

// logs is what the agent logged so far.
func (ta *testAgent) logs() string {
	ta.lw.mu.Lock()
	defer ta.lw.mu.Unlock()
	return ta.lw.buf.String()
}

// fakeSrun plays srun's side of the step I/O connection.
type fakeSrun struct {
	t      *testing.T
	ln     net.Listener
	conn   net.Conn
	w      *stepio.Writer
	frames chan stepio.Frame
	// res is what arrived so far.
	res stepResult
	eof bool
	// handshaken, for a TLS srun, has the connections whose handshake
	// succeeded: the node finishes its handshake before it answers the
	// launch, so srun's side must run meanwhile, as srun's does.
	handshaken chan net.Conn
	// readErr is how reading the node's frames ended (io.EOF: closed).
	readErr error
}

// stepResult is what srun learnt of a node's tasks.
type stepResult struct {
	hello  *stepio.Frame
	stdout map[uint32]string
	stderr map[uint32]string
	failed map[uint32]string
	exits  map[uint32]stepio.Frame
}

func newFakeSrun(t *testing.T) *fakeSrun {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSrun{t: t, ln: ln, frames: make(chan stepio.Frame, 4096), res: stepResult{
		stdout: map[uint32]string{}, stderr: map[uint32]string{}, failed: map[uint32]string{}, exits: map[uint32]stepio.Frame{},
	}}
	t.Cleanup(func() {
		ln.Close()
		if f.conn != nil {
			f.conn.Close()
		}
	})
	return f
}

func (f *fakeSrun) addr() string { return f.ln.Addr().String() }

// accept waits for the node to dial back and starts reading its frames.
func (f *fakeSrun) accept() {
	f.t.Helper()
	var conn net.Conn
	if f.handshaken != nil {
		select {
		case conn = <-f.handshaken:
		case <-time.After(testWait):
			f.t.Fatalf("node did not connect over TLS")
		}
	} else {
		_ = f.ln.(*net.TCPListener).SetDeadline(time.Now().Add(testWait))
		var err error
		if conn, err = f.ln.Accept(); err != nil {
			f.t.Fatalf("node did not connect: %v", err)
		}
	}
	f.conn, f.w = conn, stepio.NewWriter(conn)
	go func() {
		defer close(f.frames)
		// Like srun, which has every exit once a node closes its side,
		// close ours then.
		defer conn.Close()
		r := stepio.NewReader(conn)
		for {
			fr, err := r.Next()
			if err != nil {
				f.readErr = err
				return
			}
			f.frames <- fr
		}
	}()
}

// until reads frames until cond holds; the connection ending first, or
// nothing coming for testWait, fails the test.
func (f *fakeSrun) until(what string, cond func(*stepResult) bool) {
	f.t.Helper()
	for !cond(&f.res) {
		if !f.next() {
			f.t.Fatalf("connection ended before %s; got %+v", what, f.res)
		}
	}
}

// next reads one frame into res; false at the end of the connection.
func (f *fakeSrun) next() bool {
	f.t.Helper()
	select {
	case fr, ok := <-f.frames:
		if !ok {
			f.eof = true
			return false
		}
		r := &f.res
		switch fr.Kind {
		case stepio.Hello:
			r.hello = &fr
		case stepio.Stdout:
			r.stdout[fr.Task] += string(fr.Data)
		case stepio.Stderr:
			r.stderr[fr.Task] += string(fr.Data)
		case stepio.Failed:
			r.failed[fr.Task] = string(fr.Data)
		case stepio.Exit:
			if _, dup := r.exits[fr.Task]; dup {
				f.t.Errorf("task %d reported twice", fr.Task)
			}
			if r.hello == nil {
				f.t.Errorf("Exit before Hello")
			}
			r.exits[fr.Task] = fr
		default:
			f.t.Errorf("unexpected frame %v from node", fr.Kind)
		}
		return true
	case <-time.After(testWait):
		f.t.Fatalf("nothing from the node for %v; got %+v", testWait, f.res)
		return false
	}
}

// finish reads to the end of the connection, which the node closes once
// every task is reported.
func (f *fakeSrun) finish() {
	f.t.Helper()
	for f.next() {
	}
}

func (f *fakeSrun) send(fr stepio.Frame) {
	f.t.Helper()
	if err := f.w.Write(fr); err != nil {
		f.t.Fatal(err)
	}
}

// sendAll sends frames in one write: a task that ends on the first may
// end the step, and the node close the connection, before a second write.
func (f *fakeSrun) sendAll(frames ...stepio.Frame) {
	f.t.Helper()
	var buf bytes.Buffer
	w := stepio.NewWriter(&buf)
	for _, fr := range frames {
		if err := w.Write(fr); err != nil {
			f.t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		f.t.Fatal(err)
	}
	if _, err := f.conn.Write(buf.Bytes()); err != nil {
		f.t.Fatal(err)
	}
}

// exited reports whether every task in n has reported its end.
func exited(n int) func(*stepResult) bool {
	return func(r *stepResult) bool { return len(r.exits) >= n }
}

// newLaunch describes a step of job 7 on n1 alone, run as the test's
// user, signed for srun at srun.
func newLaunch(t *testing.T, srun string, tasks int, argv ...string) nodeproto.StepLaunch {
	l := nodeproto.StepLaunch{
		JobID: 7, StepID: 0, Nodes: []string{"n1"}, TasksPerNode: []int{tasks},
		Argv: argv, Env: []string{"PATH=/usr/bin:/bin", "HOME=/"}, Cwd: t.TempDir(),
		UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), User: "tester",
		StdinTask: -1, KillWait: 200 * time.Millisecond,
	}
	for i := range tasks {
		l.Tasks = append(l.Tasks, i)
	}
	sign(t, &l, srun, nil)
	return l
}

// sign gives l a credential matching it, changed by mod.
func sign(t *testing.T, l *nodeproto.StepLaunch, srun string, mod func(*stepcred.Cred)) {
	t.Helper()
	c := stepcred.Cred{
		JobID: l.JobID, StepID: l.StepID, UID: l.UID, GID: l.GID, User: l.User,
		Nodes: l.Nodes, SrunAddr: srun, Expires: time.Now().Add(time.Minute),
	}
	if mod != nil {
		mod(&c)
	}
	tok, err := stepcred.Sign(testStepKey, c)
	if err != nil {
		t.Fatal(err)
	}
	l.Cred = tok
}

// runStep launches l on a fresh agent and returns srun's connection.
func runStep(t *testing.T, l nodeproto.StepLaunch, srun *fakeSrun) *testAgent {
	t.Helper()
	return runStepWith(t, startAgent(t, nil), l, srun)
}

// runStepWith launches l on ta and returns srun's connection.
func runStepWith(t *testing.T, ta *testAgent, l nodeproto.StepLaunch, srun *fakeSrun) *testAgent {
	t.Helper()
	if err := ta.post(nodeproto.PathStepLaunch, l); err != nil {
		t.Fatalf("launch: %v", err)
	}
	srun.accept()
	return ta
}

// TestStepStreamsOutputAndStdin checks that output reaches srun while the
// task runs (task 0 prints, then waits for input that the test sends only
// after seeing that output), that srun's input reaches task 0 only, and
// that every task's end follows its output.
func TestStepStreamsOutputAndStdin(t *testing.T) {
	srun := newFakeSrun(t)
	l := newLaunch(t, srun.addr(), 2, "sh", "-c", `echo "first $SLURM_PROCID"; read x; echo "got $x"; echo oops >&2; exit $((SLURM_PROCID+3))`)
	l.StdinTask = 0
	runStep(t, l, srun)

	srun.until("task 0's first line", func(r *stepResult) bool { return r.stdout[0] == "first 0\n" })
	if _, ok := srun.res.exits[0]; ok {
		t.Fatal("task 0 ended before its input was sent")
	}
	srun.sendAll(stepio.Frame{Kind: stepio.Stdin, Task: 0, Data: []byte("hello\n")}, stepio.Frame{Kind: stepio.StdinEOF, Task: 0})
	srun.finish()

	r := srun.res
	if r.hello == nil || string(r.hello.Data) != l.Cred || r.hello.Node != 0 {
		t.Errorf("hello = %+v, want the credential from node 0", r.hello)
	}
	want := map[uint32]string{0: "first 0\ngot hello\n", 1: "first 1\ngot \n"}
	if diff := cmp.Diff(want, r.stdout); diff != "" {
		t.Errorf("stdout (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[uint32]string{0: "oops\n", 1: "oops\n"}, r.stderr); diff != "" {
		t.Errorf("stderr (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[uint32]int32{0: 3, 1: 4}, exitCodes(r)); diff != "" {
		t.Errorf("exit codes (-want +got):\n%s", diff)
	}
}

func exitCodes(r stepResult) map[uint32]int32 {
	m := map[uint32]int32{}
	for id, f := range r.exits {
		m[id] = f.Code
		if f.Signaled {
			m[id] = -f.Code
		}
	}
	return m
}

// TestStepExitStatus checks exit codes and a death by signal (reported
// as negative numbers by exitCodes).
func TestStepExitStatus(t *testing.T) {
	srun := newFakeSrun(t)
	l := newLaunch(t, srun.addr(), 3, "sh", "-c", `case $SLURM_PROCID in 1) exit 3;; 2) kill -KILL $$;; esac`)
	runStep(t, l, srun)
	srun.finish()
	if diff := cmp.Diff(map[uint32]int32{0: 0, 1: 3, 2: -9}, exitCodes(srun.res)); diff != "" {
		t.Errorf("exit codes (-want +got):\n%s", diff)
	}
}

// TestStepEndsWithoutReset: srun may still be sending when a node's tasks
// end (here a stream of frames); the node closes its side without
// resetting the connection, which could discard exits srun has not read.
func TestStepEndsWithoutReset(t *testing.T) {
	for range 5 {
		srun := newFakeSrun(t)
		l := newLaunch(t, srun.addr(), 8, "true")
		runStep(t, l, srun)
		stop := make(chan struct{})
		flooded := make(chan struct{})
		go func() {
			defer close(flooded)
			w := stepio.NewWriter(srun.conn)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if w.Write(stepio.Frame{Kind: stepio.Stdin, Task: 5, Data: make([]byte, 4096)}) != nil {
					return
				}
			}
		}()
		srun.finish()
		close(stop)
		<-flooded
		if len(srun.res.exits) != 8 || !errors.Is(srun.readErr, io.EOF) {
			t.Fatalf("srun got %d exits of 8, and the connection ended with %v, want EOF", len(srun.res.exits), srun.readErr)
		}
	}
}

// TestStepMissingCommand checks slurmstepd's words and status for a
// program that is nowhere in PATH.
func TestStepMissingCommand(t *testing.T) {
	srun := newFakeSrun(t)
	l := newLaunch(t, srun.addr(), 1, "drover-no-such-command", "x")
	runStep(t, l, srun)
	srun.finish()
	want := map[uint32]string{0: "execve(): drover-no-such-command: No such file or directory"}
	if diff := cmp.Diff(want, srun.res.failed); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[uint32]int32{0: 2}, exitCodes(srun.res)); diff != "" {
		t.Errorf("exit codes (-want +got):\n%s", diff)
	}
}

// TestStepSignalFrame checks that srun's Signal frame reaches the tasks.
func TestStepSignalFrame(t *testing.T) {
	srun := newFakeSrun(t)
	l := newLaunch(t, srun.addr(), 1, "sh", "-c", `trap 'echo got USR1; exit 7' USR1; echo ready; while :; do sleep 0.05; done`)
	runStep(t, l, srun)
	srun.until("ready", func(r *stepResult) bool { return r.stdout[0] == "ready\n" })
	srun.send(stepio.Frame{Kind: stepio.Signal, Code: int32(syscall.SIGUSR1)})
	srun.finish()
	if got := srun.res.stdout[0]; got != "ready\ngot USR1\n" {
		t.Errorf("stdout = %q", got)
	}
	if diff := cmp.Diff(map[uint32]int32{0: 7}, exitCodes(srun.res)); diff != "" {
		t.Errorf("exit codes (-want +got):\n%s", diff)
	}
}

// TestStepCredentialRefused checks every way a launch's credential can be
// wrong, and a replayed one.
func TestStepCredentialRefused(t *testing.T) {
	tests := map[string]struct {
		noKey  bool
		mod    func(*stepcred.Cred)
		forged bool
		change func(*nodeproto.StepLaunch)
		want   string
	}{
		"forged":     {forged: true, want: "Invalid job credential"},
		"expired":    {mod: func(c *stepcred.Cred) { c.Expires = time.Now().Add(-time.Second) }, want: "Job credential expired"},
		"other node": {mod: func(c *stepcred.Cred) { c.Nodes = []string{"n2"} }, want: "Invalid job credential"},
		"other job":  {mod: func(c *stepcred.Cred) { c.JobID = 8 }, want: "Invalid job credential"},
		"other step": {mod: func(c *stepcred.Cred) { c.StepID = 1 }, want: "Invalid job credential"},
		"other user": {change: func(l *nodeproto.StepLaunch) { l.UID++ }, want: "Invalid job credential"},
		"no key":     {noKey: true, want: "Invalid job credential: node n1 has no usable credential key (slurm.key)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ta := startAgent(t, func(c *Config) {
				if tc.noKey {
					c.Keys = clusterkey.NewHolder(nil)
				}
			})
			l := newLaunch(t, "127.0.0.1:1", 1, "true")
			sign(t, &l, "127.0.0.1:1", tc.mod)
			if tc.forged {
				tok, err := stepcred.Sign(bytes.Repeat([]byte{1}, stepcred.KeySize), stepcred.Cred{
					JobID: 7, UID: l.UID, GID: l.GID, Nodes: l.Nodes, SrunAddr: "127.0.0.1:1", Expires: time.Now().Add(time.Minute),
				})
				if err != nil {
					t.Fatal(err)
				}
				l.Cred = tok
			}
			if tc.change != nil {
				tc.change(&l)
			}
			checkRefused(t, ta.post(nodeproto.PathStepLaunch, l), tc.want)
			if n := len(ta.a.stepsOf(7, nil)); n != 0 {
				t.Errorf("%d steps registered after a refused launch", n)
			}
		})
	}
}

func checkRefused(t *testing.T, err error, want string) {
	t.Helper()
	var se *nodeproto.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("launch: %v, want a refusal", err)
	}
	if se.Code != http.StatusForbidden || se.Msg != want {
		t.Errorf("refusal = %d %q, want %d %q", se.Code, se.Msg, http.StatusForbidden, want)
	}
}

// TestStepCredentialReplayed launches a step, then sends the very same
// launch again.
func TestStepCredentialReplayed(t *testing.T) {
	srun := newFakeSrun(t)
	l := newLaunch(t, srun.addr(), 1, "true")
	ta := runStep(t, l, srun)
	srun.finish()
	checkRefused(t, ta.post(nodeproto.PathStepLaunch, l), "Job credential replayed")
}

// TestStepSrunGone checks that tasks are ended when srun's connection
// drops, as slurmstepd ends a step whose srun is gone.
func TestStepSrunGone(t *testing.T) {
	srun := newFakeSrun(t)
	l := newLaunch(t, srun.addr(), 1, "sh", "-c", `echo $$; exec sleep 60`)
	ta := runStep(t, l, srun)
	srun.until("the task's pid", func(r *stepResult) bool { return strings.HasSuffix(r.stdout[0], "\n") })
	pid := atoi(t, srun.res.stdout[0])
	srun.conn.Close()
	waitGone(t, pid)
	waitNoSteps(t, ta)
}

// TestStepTerminateKillsStragglers checks that a task whose processes
// ignore SIGTERM is killed after KillWait, children included, when the
// controller ends the step: by process group, and by cgroup where the
// machine allows.
func TestStepTerminateKillsStragglers(t *testing.T) {
	for _, mode := range []string{"pgid", "cgroup"} {
		t.Run(mode, func(t *testing.T) {
			ta := startAgent(t, func(c *Config) {
				if mode == "cgroup" {
					c.CgroupRoot = fmt.Sprintf("drover-test/steps-%d", os.Getpid())
				}
			})
			if got := ta.a.tracker.Mode(); (mode == "pgid") != (got == "pgid") {
				t.Skipf("tracking by %s", got)
			}
			srun := newFakeSrun(t)
			l := newLaunch(t, srun.addr(), 1, "sh", "-c", `trap '' TERM; sleep 60 & echo $! $$; wait`)
			runStepWith(t, ta, l, srun)
			srun.until("the pids", func(r *stepResult) bool { return strings.HasSuffix(r.stdout[0], "\n") })
			pids := strings.Fields(srun.res.stdout[0])
			step := uint32(0)
			sig := nodeproto.Signal{JobID: 7, StepID: &step, Terminate: true, Kind: nodeproto.EndCancelled, KillWait: 300 * time.Millisecond}
			if err := ta.post(nodeproto.PathSignal, sig); err != nil {
				t.Fatal(err)
			}
			srun.finish()
			if diff := cmp.Diff(map[uint32]int32{0: -9}, exitCodes(srun.res)); diff != "" {
				t.Errorf("exit codes (-want +got):\n%s", diff)
			}
			for _, p := range pids {
				waitGone(t, atoi(t, p))
			}
		})
	}
}

// TestStepsOnlyTerminate ends a job's steps on a node that runs none of
// its batch script: the request is answered, the task ends with SIGTERM,
// and nothing is remembered against a later batch launch.
func TestStepsOnlyTerminate(t *testing.T) {
	srun := newFakeSrun(t)
	l := newLaunch(t, srun.addr(), 1, "sh", "-c", `echo ready; exec sleep 60`)
	ta := runStep(t, l, srun)
	srun.until("ready", func(r *stepResult) bool { return r.stdout[0] == "ready\n" })
	sig := nodeproto.Signal{JobID: 7, StepsOnly: true, Terminate: true, Kind: nodeproto.EndCancelled, KillWait: testWait}
	if err := ta.post(nodeproto.PathSignal, sig); err != nil {
		t.Fatal(err)
	}
	srun.finish()
	if diff := cmp.Diff(map[uint32]int32{0: -int32(syscall.SIGTERM)}, exitCodes(srun.res)); diff != "" {
		t.Errorf("exit codes (-want +got):\n%s", diff)
	}
	ta.a.mu.Lock()
	_, recorded := ta.a.ended[7]
	ta.a.mu.Unlock()
	if recorded {
		t.Error("a steps-only terminate was recorded against the job's batch launch")
	}
	// Again, with no step left: still answered.
	if err := ta.post(nodeproto.PathSignal, sig); err != nil {
		t.Errorf("steps-only signal with no step here: %v", err)
	}
}

// TestStepEndsWithDaemon stops the daemon while a step runs: its tasks
// are killed and srun hears of it, and the daemon does not wait for
// KillWait.
func TestStepEndsWithDaemon(t *testing.T) {
	srun := newFakeSrun(t)
	l := newLaunch(t, srun.addr(), 1, "sh", "-c", `trap '' TERM; echo $$; exec sleep 60`)
	l.KillWait = time.Hour
	ta := runStep(t, l, srun)
	srun.until("the task's pid", func(r *stepResult) bool { return strings.HasSuffix(r.stdout[0], "\n") })
	pid := atoi(t, srun.res.stdout[0])
	ta.stop()
	waitGone(t, pid)
	srun.finish()
	if diff := cmp.Diff(map[uint32]int32{0: -9}, exitCodes(srun.res)); diff != "" {
		t.Errorf("exit codes (-want +got):\n%s", diff)
	}
	if err := ta.post(nodeproto.PathStepLaunch, l); err == nil {
		t.Error("a stopped daemon accepted a launch")
	}
}

// TestStepOutputFiles checks -o with per-task patterns: the files are
// written on the node, error output follows standard output, and nothing
// goes through srun.
func TestStepOutputFiles(t *testing.T) {
	srun := newFakeSrun(t)
	l := newLaunch(t, srun.addr(), 2, "sh", "-c", `echo "out $SLURM_PROCID"; echo err >&2`)
	l.StdOut = "out-%t-%N-%j.%s.txt"
	runStep(t, l, srun)
	srun.finish()
	if len(srun.res.stdout)+len(srun.res.stderr) != 0 {
		t.Errorf("output went through srun: %+v", srun.res)
	}
	for task := range 2 {
		data, err := os.ReadFile(filepath.Join(l.Cwd, fmt.Sprintf("out-%d-n1-7.0.txt", task)))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("out %d\nerr\n", task); string(data) != want {
			t.Errorf("task %d's file = %q, want %q", task, data, want)
		}
	}
}

// TestStepCPUBind checks that --cpu-bind pins each task where it should.
func TestStepCPUBind(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skip(err)
	}
	var cpus []int
	for c := 0; c < len(set)*64 && len(cpus) < 2; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < 2 {
		t.Skip("needs two CPUs")
	}
	tests := map[string]struct {
		bind string
		want map[uint32]string
	}{
		"cores":   {"cores", map[uint32]string{0: fmt.Sprint(cpus[0]), 1: fmt.Sprint(cpus[1])}},
		"map_cpu": {fmt.Sprintf("verbose,map_cpu:%d,%d", cpus[1], cpus[0]), map[uint32]string{0: fmt.Sprint(cpus[1]), 1: fmt.Sprint(cpus[0])}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			srun := newFakeSrun(t)
			l := newLaunch(t, srun.addr(), 2, "sh", "-c", `sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status`)
			l.CPUs, l.CPUsPerTask, l.CPUBind = cpus, 1, tc.bind
			runStep(t, l, srun)
			srun.finish()
			got := map[uint32]string{}
			for id, out := range srun.res.stdout {
				got[id] = strings.TrimSpace(out)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CPUs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStepRunsAsUser runs a task as nobody, from a working folder nobody
// cannot enter: slurmstepd goes to /tmp and says so.
func TestStepRunsAsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	id, err := usercred.Lookup(65534)
	if err != nil {
		t.Skip("no user 65534:", err)
	}
	srun := newFakeSrun(t)
	l := newLaunch(t, srun.addr(), 1, "sh", "-c", `id -u; id -g; pwd`)
	l.UID, l.GID = id.UID, id.GID
	sign(t, &l, srun.addr(), nil)
	runStep(t, l, srun)
	srun.finish()
	if want := fmt.Sprintf("%d\n%d\n/tmp\n", id.UID, id.GID); srun.res.stdout[0] != want {
		t.Errorf("stdout = %q, want %q", srun.res.stdout[0], want)
	}
	want := fmt.Sprintf("slurmstepd: error: couldn't chdir to `%s': Permission denied: going to /tmp instead\n", l.Cwd)
	if srun.res.stderr[0] != want {
		t.Errorf("stderr = %q, want %q", srun.res.stderr[0], want)
	}
}

// TestStepLaunchSixteenTasks measures a 16-task launch on one node (a
// 1,024-task step on 64 nodes), from the request to the connection and
// to the last task's end, with process-group tracking and, where the
// machine allows, a cgroup per task.
func TestStepLaunchSixteenTasks(t *testing.T) {
	for _, mode := range []string{"pgid", "cgroup"} {
		t.Run(mode, func(t *testing.T) {
			ta := startAgent(t, func(c *Config) {
				if mode == "cgroup" {
					c.CgroupRoot = fmt.Sprintf("drover-test/launch-%d", os.Getpid())
				}
			})
			if got := ta.a.tracker.Mode(); (mode == "pgid") != (got == "pgid") {
				t.Skipf("tracking by %s", got)
			}
			srun := newFakeSrun(t)
			l := newLaunch(t, srun.addr(), 16, "true")
			began := time.Now()
			if err := ta.post(nodeproto.PathStepLaunch, l); err != nil {
				t.Fatal(err)
			}
			answered := time.Since(began)
			srun.accept()
			srun.until("hello", func(r *stepResult) bool { return r.hello != nil })
			hello := time.Since(began)
			srun.until("every end", exited(16))
			t.Logf("16 tasks (%s): launch answered in %v, node connected in %v, all 16 ended in %v",
				ta.a.tracker.Mode(), answered, hello, time.Since(began))
			srun.finish()
			for id, f := range srun.res.exits {
				if f.Code != 0 || f.Signaled {
					t.Errorf("task %d: %+v", id, f)
				}
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitGone polls until process pid has ended: it no longer exists, or
// is a zombie (an orphan waits for init, which may be slow, to reap it).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for syscall.Kill(pid, 0) == nil && !isZombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// isZombie says whether pid has exited and waits to be reaped.
func isZombie(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(data), ") ")
	return strings.HasPrefix(rest, "Z")
}

// waitNoSteps polls until the agent runs no step.
func waitNoSteps(t *testing.T, ta *testAgent) {
	t.Helper()
	deadline := time.Now().Add(testWait)
	for len(ta.a.stepsOf(7, nil)) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("step still registered")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestParseCPUBind(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    cpuBind
		wantErr bool
	}{
		"empty":       {in: "", want: cpuBind{}},
		"none":        {in: "none", want: cpuBind{}},
		"verbose":     {in: "verbose", want: cpuBind{}},
		"cores":       {in: "cores", want: cpuBind{blocks: true}},
		"quiet cores": {in: "quiet,cores", want: cpuBind{blocks: true}},
		"threads":     {in: "threads", want: cpuBind{blocks: true}},
		"map":         {in: "verbose,map_cpu:3,2,1*2", want: cpuBind{lists: [][]int{{3}, {2}, {1}, {1}}, list: "3,2,1,1"}},
		"mask":        {in: "mask_cpu:0x5,0x30", want: cpuBind{lists: [][]int{{0, 2}, {4, 5}}, list: "5,30"}},
		"sockets":     {in: "sockets", want: cpuBind{}},
		"bad map":     {in: "map_cpu:a", wantErr: true},
		"bad word":    {in: "everywhere", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseCPUBind(tc.in)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(cpuBind{})); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestTaskCPUsAndGPUs(t *testing.T) {
	l := &nodeproto.StepLaunch{Tasks: []int{0, 1, 2}, CPUs: []int{4, 5, 6, 7}, CPUsPerTask: 2, GPUs: []int{0, 1, 2, 3, 4, 5}}
	tests := map[string]struct {
		bind        string
		gpusPerTask int
		want        [][2][]int // per local task: CPUs, GPUs
		wantList    string
	}{
		"cores, all GPUs": {bind: "cores", want: [][2][]int{
			{{4, 5}, nil}, {{6, 7}, nil}, {{4, 5}, nil},
		}, wantList: "0x30,0xc0,0x30"},
		"map_cpu, GPU per task": {bind: "map_cpu:7,4", gpusPerTask: 1, want: [][2][]int{
			{{7}, {0}}, {{4}, {1}}, {{7}, {2}},
		}, wantList: "7,4"},
		"none, two GPUs per task": {bind: "none", gpusPerTask: 2, want: [][2][]int{
			{nil, {0, 1}}, {nil, {2, 3}}, {nil, {4, 5}},
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			b, err := parseCPUBind(tc.bind)
			if err != nil {
				t.Fatal(err)
			}
			l.GPUsPerTask = tc.gpusPerTask
			s := &step{agent: &Agent{}, l: l, bind: b}
			var got [][2][]int
			for local := range 3 {
				got = append(got, [2][]int{b.taskCPUs(l, local), s.taskGPUs(&stepTask{id: local, local: local})})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got := b.envList(l); got != tc.wantList {
				t.Errorf("SLURM_CPU_BIND_LIST = %q, want %q", got, tc.wantList)
			}
		})
	}
	if got := cpuMask([]int{0, 2, 64}); got != "0x10000000000000005" {
		t.Errorf("cpuMask = %q", got)
	}
}

func TestSearchPath(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prog"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := t.TempDir()
	if err := os.Mkdir(filepath.Join(other, "prog"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := "::" + other + ":" + dir
	tests := map[string]struct{ name, want string }{
		"absolute":       {"/bin/x", "/bin/x"},
		"relative":       {"./x", "/work/./x"},
		"found":          {"prog", dir + "/prog"},
		"folder skipped": {"sub", "sub"},
		"missing":        {"nothing", "nothing"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := searchPath(tc.name, path, "/work"); got != tc.want {
				t.Errorf("searchPath(%q) = %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}

func TestExecFailure(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s")
	if err := os.WriteFile(script, []byte("#!/no/such/sh -e\necho\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		path     string
		err      error
		wantMsg  string
		wantCode int32
	}{
		"missing":         {"foo", syscall.ENOENT, "execve(): foo: No such file or directory", 2},
		"not executable":  {"/x/foo", syscall.EACCES, "execve(): /x/foo: Permission denied", 13},
		"bad interpreter": {script, syscall.ENOENT, "execve(): bad interpreter(/no/such/sh -e): No such file or directory", 2},
		"not the execve":  {"foo", io.ErrUnexpectedEOF, "fork/exec: unexpected EOF", 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			msg, code := execFailure(tc.path, fmt.Errorf("fork/exec: %w", tc.err))
			if msg != tc.wantMsg || code != tc.wantCode {
				t.Errorf("got %q, %d; want %q, %d", msg, code, tc.wantMsg, tc.wantCode)
			}
		})
	}
}
