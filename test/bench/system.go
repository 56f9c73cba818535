package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/jwtauth"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// system is what a figure is measured on: Drover (a fresh cluster of real
// processes each time) or the real Slurm of /work/shared/real-slurm.
type system interface {
	// Name is "Drover" or "Slurm".
	Name() string
	// Fresh returns an instance with no active jobs: a new cluster for
	// Drover; for Slurm, the running cluster once every job was cancelled
	// and has left the queue. Close releases it.
	Fresh(ctx context.Context, o freshOptions) (instance, error)
}

// freshOptions tune an instance.
type freshOptions struct {
	// Pprof starts Drover's controller with its profiler on, so that its
	// Go heap can be read.
	Pprof bool
	// NoCgroups starts Drover's node daemons with --no-cgroups: jobs are
	// tracked by process group, as Slurm's proctrack/pgid does.
	NoCgroups bool
	// Settle waits, on Slurm, until the records of earlier figures have
	// been purged (MinJobAge), so that a queue holds only its own jobs.
	Settle bool
	// Nodes and CPUs size a Drover cluster (the dev cluster's 4 x 8 when
	// 0); Slurm's is what up.sh started.
	Nodes, CPUs int
	// PlugStack is Drover's plugstack.conf ("": none).
	PlugStack string
	// Controllers replicates Drover's controller (clusterOptions); 0:
	// the system's own count.
	Controllers int
	// NoAccounting runs Drover's cluster with accounting_storage/none
	// whatever the system's setting.
	NoAccounting bool
	// ViaFollower sends REST clients (Submitters) to a follower's socket
	// or address rather than the leader's, when the controller is
	// replicated: every request is forwarded to the leader.
	ViaFollower bool
}

// instance is one measurable cluster.
type instance interface {
	// Env is the environment of commands run against it (SLURM_CONF, and
	// PATH with Drover's shims first for Drover).
	Env() []string
	// Command is the path of a command (sbatch, squeue): Drover's shims,
	// or /usr/bin for Slurm. The two are never mixed.
	Command(name string) string
	// WorkDir is where jobs run and write their output.
	WorkDir() string
	// Submitters returns n REST clients that submit trivial jobs, or nil
	// when the system offers no REST API over that transport.
	Submitters(t transport, n int, hold bool) ([]submitter, error)
	// Active counts the jobs that are pending, running or completing.
	Active(ctx context.Context) (int, error)
	// Records counts every job record the controller holds, finished ones
	// included.
	Records(ctx context.Context) (int, error)
	// ControllerPID is slurmctld's or the Drover controller's pid.
	ControllerPID() int
	// LiveHeap returns the controller's Go heap in use after a forced
	// collection, when it was started with Pprof (bytes, ok).
	LiveHeap() (int64, bool)
	// PollInterval is how often completion is polled.
	PollInterval() time.Duration
	// REST is a client of the REST API over the unix socket and the base
	// of its paths ("http://localhost/slurm/v0.0.44"); nil when there is
	// none.
	REST() (*http.Client, string)
	// Close stops the cluster Fresh started (Drover) or cancels the jobs
	// a figure left (Slurm).
	Close()
}

// droverSystem starts a new Drover cluster for each instance.
type droverSystem struct {
	drover, shims, base string
	seq                 int
	name                string
	// bareTCP: TCP clients name their user with no credential (a
	// build from before authentication, which trusted loopback).
	bareTCP bool
	// noAccounting runs the cluster with accounting_storage/none.
	noAccounting bool
	// controllers replicates the controller (-controllers) when a
	// figure asks for no count of its own.
	controllers int
}

func (s *droverSystem) Name() string { return s.name }

func (s *droverSystem) Fresh(_ context.Context, o freshOptions) (instance, error) {
	s.seq++
	dir := filepath.Join(s.base, fmt.Sprintf("drover-%03d", s.seq))
	co := clusterOptions{NoCgroups: o.NoCgroups, Pprof: o.Pprof, Nodes: o.Nodes, CPUs: o.CPUs, PlugStack: o.PlugStack, NoAccounting: s.noAccounting || o.NoAccounting,
		Controllers: cmp.Or(o.Controllers, s.controllers)}
	c, err := startCluster(dir, s.drover, s.shims, co)
	if err != nil {
		return nil, err
	}
	cl, err := c.client()
	if err != nil {
		c.stop()
		return nil, err
	}
	in := &droverInstance{c: c, dir: dir, poll: cl, bareTCP: s.bareTCP, socket: c.socket, addr: c.ctlAddr}
	if f := c.follower(); o.ViaFollower && f != nil {
		in.socket, in.addr = f.socket, f.addr
	}
	return in, nil
}

type droverInstance struct {
	c   *cluster
	dir string
	// poll is the harness's own client, kept across polls.
	poll    *v0044.Client
	bareTCP bool
	// socket and addr are where Submitters' clients connect: the
	// controller's (the leader's), or a follower's
	// (freshOptions.ViaFollower).
	socket, addr string
}

func (d *droverInstance) Env() []string { return d.c.env() }

func (d *droverInstance) Command(name string) string { return filepath.Join(d.c.shims, name) }

func (d *droverInstance) WorkDir() string { return d.c.workDir }

func (d *droverInstance) Submitters(t transport, n int, hold bool) ([]submitter, error) {
	token := ""
	if t == transportJWT {
		key, err := jwtauth.LoadKey(d.c.jwtKey)
		if err != nil {
			return nil, err
		}
		if token, err = jwtauth.Issue(key, "root", time.Hour, time.Now()); err != nil {
			return nil, err
		}
	}
	if t == transportTCP && d.bareTCP {
		t = transportBareTCP
	}
	out := make([]submitter, n)
	for i := range out {
		s, err := droverSubmitter(t, d.socket, d.addr, d.c.ctlPort, token, d.c.workDir, hold)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// Active asks /diag rather than listing every job: a listing of a
// thousand jobs every poll would load the controller it is measuring.
// /diag counts a job as running until it is terminal; a job that ends by
// itself is never left COMPLETING (its processes are gone when the node
// reports it).
func (d *droverInstance) Active(ctx context.Context) (int, error) {
	st, err := d.diag(ctx)
	if err != nil {
		return 0, err
	}
	return int(st.JobsPending.Or(0) + st.JobsRunning.Or(0)), nil
}

// Records is the number of jobs submitted: a bench cluster lives less
// than MinJobAge, so none has been purged.
func (d *droverInstance) Records(ctx context.Context) (int, error) {
	st, err := d.diag(ctx)
	if err != nil {
		return 0, err
	}
	return int(st.JobsSubmitted.Or(0)), nil
}

func (d *droverInstance) diag(ctx context.Context) (*v0044.V0044StatsMsg, error) {
	res, err := d.poll.SlurmV0044GetDiag(ctx)
	if err != nil {
		return nil, fmt.Errorf("diag: %w", err)
	}
	r, ok := res.(*v0044.V0044OpenapiDiagResp)
	if !ok {
		return nil, fmt.Errorf("diag: unexpected answer %T", res)
	}
	return &r.Statistics, nil
}

func (d *droverInstance) ControllerPID() int { return d.c.controllerPID() }

func (d *droverInstance) ProfileCPU(seconds int) ([]byte, error) { return d.c.profileCPU(seconds) }

func (d *droverInstance) DaemonCPU() map[string]time.Duration { return d.c.daemonCPU() }

func (d *droverInstance) LiveHeap() (int64, bool) {
	h, err := d.c.heapAlloc()
	return h, err == nil
}

func (d *droverInstance) PollInterval() time.Duration { return 20 * time.Millisecond }

func (d *droverInstance) REST() (*http.Client, string) {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DialContext: dialUnix(d.c.socket)}}, "http://localhost/slurm/v0.0.44"
}

func (d *droverInstance) Close() {
	d.c.stop()
	_ = os.RemoveAll(d.dir)
}

// slurmSystem is the real Slurm 22.05 cluster of /work/shared/real-slurm,
// started by its up.sh; the bench only submits, lists and cancels jobs.
type slurmSystem struct {
	conf, restSocket, restVersion, pidFile, workDir string
	// noSettle skips the wait for purged records (smoke runs).
	noSettle bool
}

func (s *slurmSystem) Name() string { return "Slurm" }

// Fresh cancels every job and waits until none is active; finished
// records stay in slurmctld for MinJobAge, as they always do.
func (s *slurmSystem) Fresh(ctx context.Context, o freshOptions) (instance, error) {
	in := &slurmInstance{s: s}
	if err := os.MkdirAll(s.workDir, 0o1777); err != nil {
		return nil, fmt.Errorf("create Slurm work folder: %w", err)
	}
	if _, err := in.run(ctx, "scancel", "--user=root", "--full"); err != nil {
		return nil, err
	}
	if err := waitIdle(ctx, in, 10*time.Minute); err != nil {
		return nil, err
	}
	if o.Settle && !s.noSettle {
		// slurmctld forgets a finished job MinJobAge (300 s here) after it
		// ended, checking about once a minute.
		deadline := time.Now().Add(8 * time.Minute)
		for {
			n, err := in.Records(ctx)
			if err != nil {
				return nil, err
			}
			if n == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Second)
		}
	}
	return in, nil
}

type slurmInstance struct {
	s *slurmSystem
}

func (in *slurmInstance) Env() []string { return append(os.Environ(), "SLURM_CONF="+in.s.conf) }

func (in *slurmInstance) Command(name string) string { return filepath.Join("/usr/bin", name) }

func (in *slurmInstance) WorkDir() string { return in.s.workDir }

func (in *slurmInstance) Submitters(t transport, n int, hold bool) ([]submitter, error) {
	if t != transportUnix || in.s.restSocket == "" {
		return nil, nil
	}
	if _, err := os.Stat(in.s.restSocket); err != nil {
		return nil, nil
	}
	out := make([]submitter, n)
	for i := range out {
		s, err := slurmSubmitter(in.s.restSocket, in.s.restVersion, in.s.workDir, hold)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (in *slurmInstance) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, in.Command(name), args...)
	cmd.Env = in.Env()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func (in *slurmInstance) Active(ctx context.Context) (int, error) {
	out, err := in.run(ctx, "squeue", "-h", "-o", "%i", "-t", "PENDING,RUNNING,COMPLETING,CONFIGURING,SUSPENDED")
	if err != nil {
		return 0, err
	}
	return bytes.Count(out, []byte("\n")), nil
}

func (in *slurmInstance) Records(ctx context.Context) (int, error) {
	out, err := in.run(ctx, "squeue", "-h", "-o", "%i", "-t", "all")
	if err != nil {
		return 0, err
	}
	return bytes.Count(out, []byte("\n")), nil
}

func (in *slurmInstance) ControllerPID() int {
	data, err := os.ReadFile(in.s.pidFile)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "slurmctld" {
			pid, _ := strconv.Atoi(f[1])
			return pid
		}
	}
	return 0
}

func (in *slurmInstance) LiveHeap() (int64, bool) { return 0, false }

func (in *slurmInstance) PollInterval() time.Duration { return 250 * time.Millisecond }

// Close cancels what the figure left queued or running, so that the
// bench leaves real Slurm as it found it (bar records awaiting purge).
func (in *slurmInstance) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, _ = in.run(ctx, "scancel", "--user=root", "--full")
}

func (in *slurmInstance) REST() (*http.Client, string) {
	if in.s.restSocket == "" {
		return nil, ""
	}
	if _, err := os.Stat(in.s.restSocket); err != nil {
		return nil, ""
	}
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DialContext: dialUnix(in.s.restSocket)}}, "http://localhost/slurm/" + in.s.restVersion
}

// waitIdle polls until no job is active.
func waitIdle(ctx context.Context, in instance, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		n, err := in.Active(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d jobs still active after %v", n, timeout)
		}
		time.Sleep(in.PollInterval())
	}
}

// memory is a process's resident memory from /proc/<pid>/status.
type memory struct {
	// RSS is VmRSS; Anon and File split it into anonymous memory (the Go
	// heap and stacks, malloc) and file pages (the binary, mmapped files
	// such as bbolt's).
	RSS, Anon, File int64
}

func (m memory) String() string {
	return fmt.Sprintf("RssAnon %.1f MiB, RssFile %.1f MiB", mib(m.Anon), mib(m.File))
}

// readMemory reads VmRSS, RssAnon and RssFile.
func readMemory(pid int) (memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, fmt.Errorf("read controller status: %w", err)
	}
	var m memory
	for _, line := range strings.Split(string(data), "\n") {
		key, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		var dst *int64
		switch key {
		case "VmRSS":
			dst = &m.RSS
		case "RssAnon":
			dst = &m.Anon
		case "RssFile":
			dst = &m.File
		default:
			continue
		}
		f := strings.Fields(v)
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return memory{}, fmt.Errorf("parse %q: %w", line, err)
		}
		*dst = kb << 10
	}
	if m.RSS == 0 {
		return memory{}, fmt.Errorf("no VmRSS for pid %d", pid)
	}
	return m, nil
}

// cpuSeconds reads a process's user+system CPU time from /proc/<pid>/stat.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read controller stat: %w", err)
	}
	// The command name may hold spaces; fields start after its ")".
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("short /proc/%d/stat", pid)
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	// USER_HZ is 100 on every Linux this runs on.
	return (ut + st) / 100, nil
}

// waitQuiet waits, at most limit, until the process has used less than a
// hundredth of a CPU over a quarter of a second: the controller done
// with what filling its queue left it (a snapshot of the state log, GC),
// so that a figure measures the request and not that work.
func waitQuiet(pid int, limit time.Duration) {
	if pid == 0 {
		return
	}
	deadline := time.Now().Add(limit)
	last, err := cpuSeconds(pid)
	for err == nil && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		now, e := cpuSeconds(pid)
		if e != nil || now-last < 0.0025 {
			return
		}
		last, err = now, e
	}
}
