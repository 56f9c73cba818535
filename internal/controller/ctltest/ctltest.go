// Package ctltest builds real controllers for tests: a small cluster
// configuration shaped like the reference cluster B (four 8-CPU nodes with
// four GPUs each, partitions gpu and debug), a settable clock, job request
// builders, and a fake node daemon. The fake daemon is the edge of the
// controller process: it answers the launch and signal posts a real node
// daemon would get and records them, so tests see exactly what the
// controller sent without running jobs. The state log, the scheduler and
// the HTTP transport are the real ones.
package ctltest

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/acctdb"
	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/node"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/partition"
	"github.com/droverhq/drover/internal/sched"
)

// Identities used by tests. Alice, Bob and Carol are ordinary users; Root may act
// on every job, as root does in slurmctld.
var (
	Root  = controller.Identity{UID: 0, GID: 0, User: "root", Group: "root"}
	Alice = controller.Identity{UID: 1000, GID: 1000, User: "alice", Group: "alice"}
	Bob   = controller.Identity{UID: 1001, GID: 1001, User: "bob", Group: "bob"}
	Carol = controller.Identity{UID: 1002, GID: 1002, User: "carol", Group: "carol"}
)

// Epoch is where a test clock starts: a fixed instant, so that recorded
// times compare exactly.
var Epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Clock is a settable clock, safe for concurrent use: the controller reads
// it from its launch goroutines too.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock stopped at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Key is the test cluster's key.
var Key = []byte("0123456789abcdef0123456789abcdef")

// NodeNames are the configured nodes, in configuration order.
var NodeNames = []string{"n1", "n2", "n3", "n4"}

// Config returns the test cluster's configuration with its state under
// stateDir: nodes n[1-4] (8 CPUs, 16000 MB, gpu:a100:4), partitions gpu
// (default, n[1-4], MaxTime=UNLIMITED), debug (n[1-2], MaxTime=30,
// DefaultTime=10), short (n[3-4], MaxTime=60, DefMemPerNode=2000) and
// closed (n1, State=INACTIVE); DefMemPerCPU=1000.
func Config(stateDir string) controller.Config {
	cfg := controller.Config{
		ClusterName:   "testcluster",
		ControlHost:   "ctl0",
		StateDir:      stateDir,
		SlurmConfPath: "/etc/slurm/slurm.conf",
		SlurmdTimeout: 300 * time.Second,
		KillWait:      30 * time.Second,
		MinJobAge:     300 * time.Second,
		Defaults:      sched.Defaults{DefMemPerCPU: 1000},
		Keys:          clusterkey.NewHolder(clusterkey.FromSecret(Key)),
		// The embedded store, as a plain controller has it.
		Accounting: acctdb.NewLazy(acctdb.Config{Kind: acctdb.SQLite, Path: filepath.Join(stateDir, acctdb.Embedded)}),
	}
	for _, name := range NodeNames {
		n := node.Node{
			Name: name, Addr: name, Hostname: name,
			CPUs: 8, Boards: 1, Sockets: 1, CoresPerSocket: 8, ThreadsPerCore: 1,
			RealMemory: 16000, GresConf: []string{"gpu:a100:4"},
		}
		for i := range 4 {
			n.GPUs = append(n.GPUs, node.GPU{Index: i, Type: "a100", Minor: i})
		}
		cfg.Nodes = append(cfg.Nodes, n)
	}
	cfg.Partitions = []partition.Partition{
		{Name: "gpu", Nodes: slices.Clone(NodeNames), Default: true, MaxTime: partition.Infinite},
		{Name: "debug", Nodes: []string{"n1", "n2"}, MaxTime: 30, DefaultTime: 10},
		{Name: "short", Nodes: []string{"n3", "n4"}, MaxTime: 60, DefMemPerNode: 2000},
		{Name: "closed", Nodes: []string{"n1"}, MaxTime: partition.Infinite, State: partition.Inactive},
	}
	return cfg
}

// Request returns a minimal valid batch request (a one-line script, an
// environment and a working directory), changed by each option in turn.
func Request(opts ...func(*job.Request)) job.Request {
	r := job.Request{
		Script:      "#!/bin/sh\ntrue\n",
		Environment: []string{"PATH=/usr/bin:/bin", "HOME=/home/alice"},
		WorkDir:     "/home/alice/project",
	}
	for _, o := range opts {
		o(&r)
	}
	return r
}

// FakeNode answers the node daemon's side of the node protocol (launch and
// signal) for every node, recording what it receives.
type FakeNode struct {
	Server *httptest.Server

	mu         sync.Mutex
	launches   []nodeproto.Launch
	signals    []nodeproto.Signal
	failLaunch bool
}

// NewFakeNode starts a fake node daemon; it stops when the test ends.
func NewFakeNode(t testing.TB) *FakeNode {
	f := &FakeNode{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+nodeproto.PathLaunch, func(w http.ResponseWriter, r *http.Request) {
		var l nodeproto.Launch
		if err := nodeproto.Decode(r, &l); err != nil {
			nodeproto.Fail(w, http.StatusBadRequest, err)
			return
		}
		f.mu.Lock()
		fail := f.failLaunch
		if !fail {
			f.launches = append(f.launches, l)
		}
		f.mu.Unlock()
		if fail {
			nodeproto.Fail(w, http.StatusInternalServerError, errLaunchRefused)
			return
		}
		nodeproto.Reply(w, http.StatusOK, struct{}{})
	})
	mux.HandleFunc("POST "+nodeproto.PathSignal, func(w http.ResponseWriter, r *http.Request) {
		var s nodeproto.Signal
		if err := nodeproto.Decode(r, &s); err != nil {
			nodeproto.Fail(w, http.StatusBadRequest, err)
			return
		}
		f.mu.Lock()
		f.signals = append(f.signals, s)
		f.mu.Unlock()
		nodeproto.Reply(w, http.StatusOK, struct{}{})
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Server.Close)
	return f
}

var errLaunchRefused = errors.New("launch refused by the test")

// Addr is the daemon's host:port, as a node registers it.
func (f *FakeNode) Addr() string { return f.Server.Listener.Addr().String() }

// FailLaunches makes later launches fail (true) or succeed (false).
func (f *FakeNode) FailLaunches(fail bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failLaunch = fail
}

// Launches returns the launches received so far.
func (f *FakeNode) Launches() []nodeproto.Launch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.launches)
}

// Signals returns the signal requests received so far.
func (f *FakeNode) Signals() []nodeproto.Signal {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.signals)
}

// WaitLaunches waits until at least n launches arrived and returns them.
func (f *FakeNode) WaitLaunches(t testing.TB, n int) []nodeproto.Launch {
	t.Helper()
	Eventually(t, func() bool { return len(f.Launches()) >= n }, "%d launches (have %d)", n, len(f.Launches()))
	return f.Launches()
}

// WaitSignals waits until at least n signal requests arrived and returns
// them.
func (f *FakeNode) WaitSignals(t testing.TB, n int) []nodeproto.Signal {
	t.Helper()
	Eventually(t, func() bool { return len(f.Signals()) >= n }, "%d signals (have %d)", n, len(f.Signals()))
	return f.Signals()
}

// Eventually polls cond until it holds, failing the test after five
// seconds; the controller's launches and signals are asynchronous.
func Eventually(t testing.TB, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for "+format, args...)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Cluster is a real controller over a state folder in t.TempDir(), with a
// test clock and a fake node daemon. It is not started: tests drive the
// scheduler and housekeeping steps themselves, or call Ctl.Start.
type Cluster struct {
	T     testing.TB
	Cfg   controller.Config
	Clock *Clock
	Node  *FakeNode
	Ctl   *controller.Controller
}

// New opens a controller on Config(t.TempDir()) with the clock at Epoch.
// Each mod changes the configuration first; a mod that sets Now to nil
// gives the controller the real clock.
func New(t testing.TB, mods ...func(*controller.Config)) *Cluster {
	t.Helper()
	c := &Cluster{T: t, Clock: NewClock(Epoch), Node: NewFakeNode(t)}
	c.Cfg = Config(t.TempDir())
	c.Cfg.Now = c.Clock.Now
	for _, m := range mods {
		m(&c.Cfg)
	}
	c.Open()
	t.Cleanup(c.Close)
	return c
}

// Open opens the controller on the cluster's state folder.
func (c *Cluster) Open() {
	c.T.Helper()
	ctl, err := controller.New(c.Cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		c.T.Fatalf("open controller: %v", err)
	}
	c.Ctl = ctl
}

// Close closes the controller (again is harmless).
func (c *Cluster) Close() {
	if c.Ctl == nil {
		return
	}
	if err := c.Ctl.Close(); err != nil {
		c.T.Errorf("close controller: %v", err)
	}
	if l, ok := c.Cfg.Accounting.(*acctdb.Lazy); ok {
		l.Close()
	}
	c.Ctl = nil
}

// Restart closes the controller and opens a new one on the same state, as
// a controller restart does; node registrations are volatile and must be
// sent again.
func (c *Cluster) Restart() {
	c.T.Helper()
	c.Close()
	c.Open()
}

// Register registers one node with the fake daemon's address, reporting
// jobs.
func (c *Cluster) Register(name string, jobs ...nodeproto.JobStatus) nodeproto.RegisterReply {
	c.T.Helper()
	// The GPUs slurm.conf gives the node, as a daemon without gres.conf
	// reports them.
	var gpus []nodeproto.GPU
	if ni, err := c.Ctl.Node(name); err == nil {
		for _, g := range ni.Node.GPUs {
			gpus = append(gpus, nodeproto.GPU{Index: g.Index, Type: g.Type, Minor: g.Minor})
		}
	}
	reply, err := c.Ctl.Register(context.Background(), nodeproto.Register{
		Name: name, Addr: c.Node.Addr(), CPUs: 8, RealMemory: 16000, FreeMemMB: 15000,
		Version: "25.11.0", Arch: "x86_64", OS: "Linux", Jobs: jobs, GPUs: gpus,
	})
	if err != nil {
		c.T.Fatalf("register %s: %v", name, err)
	}
	return reply
}

// RegisterAll registers every node without jobs.
func (c *Cluster) RegisterAll() {
	c.T.Helper()
	for _, n := range NodeNames {
		c.Register(n)
	}
}

// Submit submits a request as who and returns the job id.
func (c *Cluster) Submit(who controller.Identity, r job.Request) job.ID {
	c.T.Helper()
	res, err := c.Ctl.Submit(context.Background(), who, controller.Submission{Req: r})
	if err != nil {
		c.T.Fatalf("submit: %v", err)
	}
	return res.JobID
}

// Job returns the one record a job id names (the meta-record of an array).
func (c *Cluster) Job(id job.ID) *job.Job {
	c.T.Helper()
	for _, j := range c.Ctl.Jobs(controller.JobFilter{}) {
		if j.ID == id {
			return j
		}
	}
	c.T.Fatalf("job %d not found", id)
	return nil
}

// Finish reports the end of a running job's processes, as its node daemon
// would.
func (c *Cluster) Finish(id job.ID, kind nodeproto.EndKind, exitCode, signal int32) {
	c.T.Helper()
	j := c.Job(id)
	if err := c.Ctl.JobDone(context.Background(), nodeproto.JobDone{
		Node: j.BatchHost, JobID: uint32(id), Run: j.RestartCount, Kind: kind, ExitCode: exitCode, Signal: signal, EndTime: c.Now(),
	}); err != nil {
		c.T.Fatalf("job %d done: %v", id, err)
	}
}

// Now is the controller's time: the test clock, or the real one when the
// configuration has no clock.
func (c *Cluster) Now() time.Time {
	if c.Cfg.Now == nil {
		return time.Now()
	}
	return c.Cfg.Now()
}
