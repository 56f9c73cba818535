package main

// In-process benchmarks: the controller, its HTTP front and the drop-in
// commands of the real binary, in one process, so that `go test -bench
// -cpuprofile` shows where the time of a figure goes. They only run with
// -bench (never in `go test ./...`); see docs/BENCHMARKS.md for the
// commands.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/squeue"
	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/daemon"
	"github.com/droverhq/drover/internal/fieldsel"
	"github.com/droverhq/drover/internal/restapi"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/testutil"
	v0044 "github.com/droverhq/drover/openapi/v0044"
	"github.com/go-faster/jx"
	"github.com/spf13/viper"
)

// inproc is a controller serving its REST API on a unix socket and a
// loopback port inside the benchmark's process. Its nodes never register,
// so submitted jobs stay pending.
type inproc struct {
	ctl    *controller.Controller
	socket string
	port   int
	dir    string
}

func startInproc(b *testing.B) *inproc {
	b.Helper()
	dir := b.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	text := fmt.Sprintf("ClusterName=inproc\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=6817\nStateSaveLocation=%s/state\n"+
		"SlurmdSpoolDir=%s/spool/%%n\nMinJobAge=300\nDefMemPerCPU=1000\n"+
		"NodeName=n[1-4] NodeAddr=127.0.0.1 CPUs=8 RealMemory=16000 State=UNKNOWN\n"+
		"PartitionName=gpu Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP\n", dir, dir)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	sc, err := slurmconf.Load(conf)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := controller.ConfigFromSlurm(sc, conf)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(cfg.StateDir, 0o755); err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctl, err := controller.New(cfg, logger)
	if err != nil {
		b.Fatal(err)
	}
	ctl.Start()
	h, err := restapi.Handler(ctl, logger, restapi.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	socket := filepath.Join(cfg.StateDir, "drover.sock")
	addr, _, err := restapi.Serve(ctx, h, "127.0.0.1:0", socket, nil, logger)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cancel()
		ctl.Close()
	})
	return &inproc{ctl: ctl, socket: socket, port: addr.(*net.TCPAddr).Port, dir: dir}
}

// submitters returns 8 REST clients on the unix socket, submitting held
// jobs or not.
func (p *inproc) submitters(b *testing.B, hold bool) []submitter {
	b.Helper()
	subs := make([]submitter, 8)
	for i := range subs {
		s, err := droverSubmitter(transportUnix, p.socket, "127.0.0.1", p.port, "", p.dir, hold)
		if err != nil {
			b.Fatal(err)
		}
		subs[i] = s
	}
	return subs
}

// fill submits n held jobs from 8 clients.
func (p *inproc) fill(b *testing.B, n int) {
	b.Helper()
	if _, _, err := submitLoad(context.Background(), p.submitters(b, true), n); err != nil {
		b.Fatal(err)
	}
}

// submitRate times b.N submissions from subs and reports their rate.
func submitRate(b *testing.B, subs []submitter) {
	b.ResetTimer()
	wall, _, err := submitLoad(context.Background(), subs, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "jobs/s")
}

// BenchmarkSubmit is figure 1 in one process: durable REST submissions
// from 8 clients over the unix socket.
func BenchmarkSubmit(b *testing.B) {
	for _, hold := range []bool{true, false} {
		b.Run("hold="+strconv.FormatBool(hold), func(b *testing.B) {
			p := startInproc(b)
			submitRate(b, p.submitters(b, hold))
		})
	}
}

// BenchmarkSubmitQueued is BenchmarkSubmit (held jobs) into a controller
// that already holds a queue of held jobs: how submissions scale with the
// queue's length (DROVER_BENCH_QUEUE sets the lengths).
func BenchmarkSubmitQueued(b *testing.B) {
	for _, n := range queueSizes {
		b.Run(fmt.Sprintf("queued=%d", n), func(b *testing.B) {
			p := startInproc(b)
			p.fill(b, n)
			submitRate(b, p.submitters(b, true))
		})
	}
}

// queueSizes are the queue lengths of the squeue benchmarks.
var queueSizes = []int{5000}

func init() {
	// DROVER_BENCH_QUEUE=5000,100000 measures other lengths.
	if v := os.Getenv("DROVER_BENCH_QUEUE"); v != "" {
		queueSizes = nil
		for _, f := range strings.Split(v, ",") {
			if n, err := strconv.Atoi(f); err == nil {
				queueSizes = append(queueSizes, n)
			}
		}
	}
}

// BenchmarkSqueue is figure 4 in one process: the squeue command (its
// client, decoder and formatter) against the controller over the unix
// socket, output discarded.
func BenchmarkSqueue(b *testing.B) {
	for _, n := range queueSizes {
		p := startInproc(b)
		p.fill(b, n)
		for _, args := range [][]string{nil, {"--json"}} {
			b.Run(fmt.Sprintf("jobs=%d/args=%s", n, strings.Join(args, "_")), func(b *testing.B) {
				// The shipped commands' client, field selection included.
				cl, err := connect.Client(connect.Target{URL: "http://127.0.0.1:" + strconv.Itoa(p.port), Socket: p.socket}, "root")
				if err != nil {
					b.Fatal(err)
				}
				env := p.squeueEnv(cl)
				b.ResetTimer()
				for b.Loop() {
					if code := squeue.Run(context.Background(), env, args); code != 0 {
						b.Fatalf("squeue exit %d", code)
					}
				}
			})
		}
		// The server's half alone: GET /jobs, body read and dropped, for
		// whole records and for the members squeue's default format asks.
		hc := &http.Client{Transport: &http.Transport{DialContext: dialUnix(p.socket)}}
		get := func(b *testing.B, fields string) []byte {
			req, err := http.NewRequest(http.MethodGet, "http://localhost/slurm/v0.0.44/jobs/", nil)
			if err != nil {
				b.Fatal(err)
			}
			if fields != "" {
				req.Header.Set(fieldsel.Header, fields)
			}
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				b.Fatal(err)
			}
			return body
		}
		fields := squeueFields(b, p)
		for _, sel := range []struct{ name, fields string }{{"whole", ""}, {"selected", fields}} {
			b.Run(fmt.Sprintf("jobs=%d/server-only/%s", n, sel.name), func(b *testing.B) {
				var size int
				for b.Loop() {
					size = len(get(b, sel.fields))
				}
				b.ReportMetric(float64(size)/float64(n), "bytes/job")
			})
			// The client's half alone: the generated decoder and its
			// validation, as the generated client runs them.
			b.Run(fmt.Sprintf("jobs=%d/decode-only/%s", n, sel.name), func(b *testing.B) {
				body := get(b, sel.fields)
				for b.Loop() {
					var resp v0044.V0044OpenapiJobInfoResp
					if err := resp.Decode(jx.DecodeBytes(body)); err != nil {
						b.Fatal(err)
					}
					if err := resp.Validate(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// squeueEnv is a squeue run as root with cl, its output dropped.
func (p *inproc) squeueEnv(cl *v0044.Client) *clienv.Env {
	return &clienv.Env{
		Prog: "squeue", Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: os.Stderr,
		Getenv: func(string) string { return "" }, Environ: func() []string { return nil },
		Now: time.Now, Client: cl, User: clienv.User{Name: "root"}, Cwd: p.dir,
	}
}

// squeueFields runs the default squeue once and returns the field
// selection it sent.
func squeueFields(b *testing.B, p *inproc) string {
	var seen string
	hc := &http.Client{Transport: fieldsel.Transport(recordHeader{&seen, &http.Transport{DialContext: dialUnix(p.socket)}})}
	cl, err := v0044.NewClient("http://localhost", rootUser{socket: true}, v0044.WithClient(hc))
	if err != nil {
		b.Fatal(err)
	}
	env := p.squeueEnv(cl)
	if code := squeue.Run(context.Background(), env, nil); code != 0 || seen == "" {
		b.Fatalf("squeue exit %d, selection %q", code, seen)
	}
	return seen
}

type recordHeader struct {
	seen *string
	base http.RoundTripper
}

func (r recordHeader) RoundTrip(req *http.Request) (*http.Response, error) {
	*r.seen = req.Header.Get(fieldsel.Header)
	return r.base.RoundTrip(req)
}

// BenchmarkHeldJobMemory is figure 5 in one process: the Go heap that
// held jobs keep alive in the controller (the benchmark's own clients and
// their garbage are collected before the reading). Run it with
// -benchtime 1x: one reading per queue length. DROVER_BENCH_HEAPPROFILE
// names a file for the heap profile at the reading.
func BenchmarkHeldJobMemory(b *testing.B) {
	for _, n := range queueSizes {
		b.Run(fmt.Sprintf("jobs=%d", n), func(b *testing.B) {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			p := startInproc(b)
			p.fill(b, n)
			// The state log snapshots every 10,000 records: let one that
			// the last submissions started finish, or its buffer counts.
			time.Sleep(5 * time.Second)
			// Two collections: encoding/json pools its encoder buffers, and
			// a sync.Pool lets go of an entry only at the second collection
			// (the snapshot's buffer would otherwise count as held jobs).
			runtime.GC()
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if path := os.Getenv("DROVER_BENCH_HEAPPROFILE"); path != "" {
				// What the held jobs keep alive, by allocation site.
				f, err := os.Create(path)
				if err != nil {
					b.Fatal(err)
				}
				if err := pprof.WriteHeapProfile(f); err != nil {
					b.Fatal(err)
				}
				f.Close()
			}
			grown := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			b.ReportMetric(grown/float64(n), "heap-bytes/job")
			b.ReportMetric(grown*100000/float64(n)/(1<<20), "heap-MiB/100k-jobs")
		})
	}
}

// BenchmarkTrivialJobs is figure 3 in one process: a controller and four
// node daemons (8 CPUs each, as `drover dev` runs them), 1,000 jobs
// running `true` submitted by 8 REST clients, timed until none is left
// pending or running. The jobs themselves are processes of their own.
func BenchmarkTrivialJobs(b *testing.B) {
	const jobs = 1000
	dir := b.TempDir()
	ports, err := freePorts(5)
	if err != nil {
		b.Fatal(err)
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, "ClusterName=inproc\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=%d\nStateSaveLocation=%s/state\n", ports[0], dir)
	fmt.Fprintf(&conf, "SlurmdSpoolDir=%s/spool/%%n\nSlurmdTimeout=30\nKillWait=5\nMinJobAge=300\nReturnToService=2\n", dir)
	conf.WriteString("SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\nDefMemPerCPU=1000\n")
	for i := 1; i <= 4; i++ {
		fmt.Fprintf(&conf, "NodeName=n%d NodeAddr=127.0.0.1 Port=%d CPUs=8 RealMemory=16000 State=UNKNOWN\n", i, ports[i])
	}
	conf.WriteString("PartitionName=gpu Nodes=n[1-4] Default=YES MaxTime=INFINITE State=UP\n")
	path := filepath.Join(dir, "slurm.conf")
	if err := os.WriteFile(path, []byte(conf.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gres.conf"), nil, 0o644); err != nil {
		b.Fatal(err)
	}
	if err := clusterkey.WriteKey(clusterkey.KeyPath(path)); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "work"), 0o755); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 5)
	b.Cleanup(func() {
		cancel()
		for range 5 {
			<-done
		}
		testutil.KillJobProcesses(path)
	})
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ready := make(chan net.Addr, 1)
	v := daemon.Settings()
	v.Set("conf", path)
	failed := make(chan error, 1)
	go func() {
		defer func() { done <- struct{}{} }()
		if err := daemon.RunController(ctx, v, logger, func(a net.Addr) { ready <- a }); err != nil {
			failed <- err
		}
	}()
	select {
	case <-ready:
	case err := <-failed:
		// No node daemon runs: the clean-up waits for the controller's
		// goroutine alone.
		for range 4 {
			done <- struct{}{}
		}
		b.Fatalf("controller: %v", err)
	}
	for i := 1; i <= 4; i++ {
		nv := viper.New()
		nv.Set("conf", path)
		nv.Set("name", "n"+strconv.Itoa(i))
		// DROVER_NO_CGROUPS=true tracks jobs by process group only (Slurm's
		// proctrack/pgid), as real Slurm does on this kind of machine.
		nv.Set("no-cgroups", os.Getenv("DROVER_NO_CGROUPS") == "true")
		go func() {
			defer func() { done <- struct{}{} }()
			if err := daemon.RunNode(ctx, nv, logger); err != nil && ctx.Err() == nil {
				b.Error(err)
			}
		}()
	}
	c := &cluster{socket: filepath.Join(dir, "state", "drover.sock"), ctlAddr: "127.0.0.1", ctlPort: ports[0], nodes: 4, workDir: filepath.Join(dir, "work")}
	if err := c.waitNodesUp(30 * time.Second); err != nil {
		b.Fatal(err)
	}
	poll, err := c.client()
	if err != nil {
		b.Fatal(err)
	}
	in := &droverInstance{c: c, poll: poll, socket: c.socket, addr: c.ctlAddr}
	subs := make([]submitter, 8)
	for i := range subs {
		if subs[i], err = droverSubmitter(transportUnix, c.socket, c.ctlAddr, c.ctlPort, "", c.workDir, false); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		begin := time.Now()
		if _, _, err := submitLoad(ctx, subs, jobs); err != nil {
			b.Fatal(err)
		}
		submitted := time.Since(begin)
		if err := waitIdle(ctx, in, 5*time.Minute); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(submitted.Seconds(), "s-to-submit")
		b.ReportMetric(time.Since(begin).Seconds(), "s-to-complete")
	}
}

// BenchmarkBackfillPass is one scheduling cycle over 50,000 pending jobs
// on 5,000 busy GPU nodes, every job tested by backfill.
func BenchmarkBackfillPass(b *testing.B) {
	s := schedWorkload(5000, 50000, 1)
	for b.Loop() {
		schedPass(s, 50000)
	}
}
