package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// sizes are the job counts of the figures.
type sizes struct {
	// Runs is how many times each figure is measured (the median is
	// quoted).
	Runs int
	// RESTJobs is the number of submissions of one REST run.
	RESTJobs int
	// Clients is the number of concurrent REST clients.
	Clients int
	// SbatchJobs is the length of the sbatch loop.
	SbatchJobs int
	// TrivialJobs is the number of trivial jobs run to completion.
	TrivialJobs int
	// Queue lists the queue lengths squeue is timed on and the
	// controller's memory read at, in growing order.
	Queue []int
	// CommandRuns is how many times squeue is timed on each queue.
	CommandRuns int
	// AcctJobs is the number of job records sacct is timed over.
	AcctJobs int
	// AcctPG also measures a PostgreSQL store's size.
	AcctPG bool
	// SchedPending and SchedNodes size the scheduling-pass figure.
	SchedPending int
	SchedNodes   int
	// ProfileDir, when set, receives a CPU profile of the controller
	// over the first second of each REST run (SYSTEM-FIGURE-N.pprof).
	ProfileDir string
}

// result is one figure measured on one system.
type result struct {
	Figure  string `json:"figure"`
	Title   string `json:"title"`
	Command string `json:"command,omitempty"`
	System  string `json:"system"`
	Unit    string `json:"unit"`
	// Better is "higher" or "lower": which way is an improvement.
	Better  string    `json:"better"`
	Samples []float64 `json:"samples"`
	Median  float64   `json:"median"`
	Note    string    `json:"note,omitempty"`
}

// figure describes a row of the table.
type figure struct {
	Key     string
	Title   string
	Unit    string
	Higher  bool // a higher value is better
	Command string
}

// recorder collects results and reports progress.
type recorder struct {
	results []result
	log     func(format string, args ...any)
}

func (r *recorder) add(f figure, system string, samples []float64, note string) {
	if len(samples) == 0 {
		return
	}
	better := "lower"
	if f.Higher {
		better = "higher"
	}
	res := result{Figure: f.Key, Title: f.Title, Command: f.Command, System: system, Unit: f.Unit, Better: better,
		Samples: samples, Median: median(samples), Note: note}
	// An interleaved run measures a figure one run at a time: its
	// samples join the figure's earlier ones.
	for i := range r.results {
		if old := &r.results[i]; old.Figure == f.Key && old.System == system {
			old.Samples = append(old.Samples, samples...)
			old.Median = median(old.Samples)
			res = *old
			r.log("%-28s %-6s median so far %s %s  samples %s %s", f.Key, system, fmtValue(res.Median), f.Unit, fmtSamples(res.Samples), note)
			return
		}
	}
	r.results = append(r.results, res)
	r.log("%-28s %-6s median %s %s  samples %s %s", f.Key, system, fmtValue(res.Median), f.Unit, fmtSamples(samples), note)
}

// measureREST is figure 1: submissions per second from concurrent REST
// clients, durable (each answer means the job is on disk).
func measureREST(ctx context.Context, sys system, sz sizes, rec *recorder) error {
	for _, v := range []struct {
		t    transport
		hold bool
	}{{transportUnix, true}, {transportTCP, true}, {transportJWT, true}, {transportUnix, false}, {transportTCP, false}} {
		f := restFigure(v.t, v.hold, sz)
		var samples []float64
		for range sz.Runs {
			in, err := sys.Fresh(ctx, freshOptions{Pprof: sz.ProfileDir != ""})
			if err != nil {
				return err
			}
			subs, err := in.Submitters(v.t, sz.Clients, v.hold)
			if err != nil || subs == nil {
				in.Close()
				if err != nil {
					return err
				}
				break // no REST over this transport
			}
			before := daemonCPU(in)
			prof := profileController(in, sz.ProfileDir, fmt.Sprintf("%s-%s", sys.Name(), f.Key), rec)
			wall, ids, err := submitLoad(ctx, subs, sz.RESTJobs)
			<-prof
			if before != nil && err == nil {
				logDaemonCPU(rec, sys.Name(), before, daemonCPU(in), len(ids))
			}
			in.Close()
			if err != nil {
				return fmt.Errorf("%s on %s: %w", f.Key, sys.Name(), err)
			}
			samples = append(samples, float64(len(ids))/wall.Seconds())
		}
		rec.add(f, sys.Name(), samples, "")
	}
	return nil
}

// profiler is an instance whose controller can be profiled (Drover's,
// started with Pprof).
type profiler interface {
	ProfileCPU(seconds int) ([]byte, error)
}

// profileController writes a one-second CPU profile of the controller
// to dir/name, starting now; the channel closes when it is written. No
// dir, or an instance without a profiler: nothing.
func profileController(in instance, dir, name string, rec *recorder) <-chan struct{} {
	done := make(chan struct{})
	p, ok := in.(profiler)
	if dir == "" || !ok {
		close(done)
		return done
	}
	// Runs are numbered by the profiles already there: an interleaved
	// run measures one run per round.
	path := ""
	for n := 0; ; n++ {
		path = filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", name, n))
		if _, err := os.Stat(path); err != nil {
			break
		}
	}
	go func() {
		defer close(done)
		data, err := p.ProfileCPU(1)
		if err == nil {
			err = os.WriteFile(path, data, 0o644)
		}
		if err != nil {
			rec.log("  profile %s: %v", name, err)
		}
	}()
	return done
}

// cpuReader is an instance whose daemons' CPU time can be read (Drover's).
type cpuReader interface {
	DaemonCPU() map[string]time.Duration
}

func daemonCPU(in instance) map[string]time.Duration {
	if r, ok := in.(cpuReader); ok {
		return r.DaemonCPU()
	}
	return nil
}

// logDaemonCPU logs the CPU each daemon spent per submission between two
// readings: where the time of a figure goes, daemon by daemon.
func logDaemonCPU(rec *recorder, system string, before, after map[string]time.Duration, jobs int) {
	if jobs == 0 {
		return
	}
	var b strings.Builder
	var nodes time.Duration
	// The controller, or each replicated one (ctl1..ctlN) in order.
	for _, name := range slices.Sorted(maps.Keys(after)) {
		d := after[name] - before[name]
		if name == "controller" || strings.HasPrefix(name, "ctl") {
			fmt.Fprintf(&b, "%s %.0f µs, ", name, float64(d.Microseconds())/float64(jobs))
			continue
		}
		nodes += d
	}
	fmt.Fprintf(&b, "node daemons and their jobs %.0f µs", float64(nodes.Microseconds())/float64(jobs))
	rec.log("  %s: CPU per submission: %s", system, b.String())
}

func restFigure(t transport, hold bool, sz sizes) figure {
	key := "rest-submit-" + string(t)
	title := fmt.Sprintf("REST submissions/s, %d clients, %s", sz.Clients, t)
	switch t {
	case transportTCP:
		title += " with a credential of the host's credential service"
	case transportJWT:
		title = fmt.Sprintf("REST submissions/s, %d clients, tcp with an auth/jwt token", sz.Clients)
	}
	if hold {
		key += "-held"
		title += ", held"
	} else {
		title += ", not held (jobs run)"
	}
	return figure{Key: key, Title: title, Unit: "jobs/s", Higher: true,
		Command: fmt.Sprintf("POST /slurm/v0.0.44/job/submit x %d from %d clients", sz.RESTJobs, sz.Clients)}
}

// sbatchLoop is the shell loop of figures 2 and 3.
func sbatchLoop(n int) string {
	return fmt.Sprintf("for i in $(seq %d); do sbatch --wrap true >/dev/null || exit 1; done", n)
}

// runShell runs a bash command line against an instance and returns its
// wall time.
func runShell(ctx context.Context, in instance, script string) (time.Duration, error) {
	wall, err := runTimed(exec.CommandContext(ctx, "bash", "-c", script), in)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", script, err)
	}
	return wall, nil
}

// measureSbatch is figure 2: a shell loop of sbatch --wrap true.
func measureSbatch(ctx context.Context, sys system, sz sizes, rec *recorder) error {
	wallF := figure{Key: "sbatch-loop-wall", Title: fmt.Sprintf("sbatch loop, wall time for %d", sz.SbatchJobs), Unit: "s", Command: sbatchLoop(sz.SbatchJobs)}
	rateF := figure{Key: "sbatch-loop-rate", Title: "sbatch loop, submissions/s", Unit: "jobs/s", Higher: true, Command: sbatchLoop(sz.SbatchJobs)}
	var walls, rates []float64
	for range sz.Runs {
		in, err := sys.Fresh(ctx, freshOptions{})
		if err != nil {
			return err
		}
		wall, err := runShell(ctx, in, sbatchLoop(sz.SbatchJobs))
		in.Close()
		if err != nil {
			return err
		}
		walls = append(walls, wall.Seconds())
		rates = append(rates, float64(sz.SbatchJobs)/wall.Seconds())
	}
	rec.add(wallF, sys.Name(), walls, "")
	rec.add(rateF, sys.Name(), rates, "")
	return nil
}

// measureTrivial is figure 3: trivial jobs from the first submission until
// every one has completed, submitted by REST clients and by the sbatch
// loop.
func measureTrivial(ctx context.Context, sys system, sz sizes, rec *recorder) error {
	restF := figure{Key: "trivial-rest", Title: fmt.Sprintf("%d trivial jobs, first submission to all completed (REST, %d clients)", sz.TrivialJobs, sz.Clients), Unit: "s",
		Command: fmt.Sprintf("%d x POST job/submit (script: true) from %d clients, then poll until none is pending/running/completing", sz.TrivialJobs, sz.Clients)}
	loopF := figure{Key: "trivial-sbatch", Title: fmt.Sprintf("%d trivial jobs, first submission to all completed (sbatch loop)", sz.TrivialJobs), Unit: "s",
		Command: sbatchLoop(sz.TrivialJobs) + "; then poll until none is pending/running/completing"}
	pgidF := figure{Key: "trivial-rest-pgid", Title: restF.Title + ", node daemons without cgroups (--no-cgroups, like proctrack/pgid)", Unit: "s", Command: restF.Command}
	var viaREST, viaLoop, viaPGID []float64
	for range sz.Runs {
		if sys.Name() == "Drover" {
			t, err := trivialREST(ctx, sys, freshOptions{NoCgroups: true}, sz)
			if err != nil {
				return err
			}
			viaPGID = append(viaPGID, t)
		}
		t, err := trivialREST(ctx, sys, freshOptions{}, sz)
		if err != nil {
			return err
		}
		if t > 0 {
			viaREST = append(viaREST, t)
		}

		in, err := sys.Fresh(ctx, freshOptions{})
		if err != nil {
			return err
		}
		begin := time.Now()
		if _, err := runShell(ctx, in, sbatchLoop(sz.TrivialJobs)); err != nil {
			in.Close()
			return err
		}
		if err := waitIdle(ctx, in, 15*time.Minute); err != nil {
			in.Close()
			return fmt.Errorf("trivial jobs on %s: %w", sys.Name(), err)
		}
		viaLoop = append(viaLoop, time.Since(begin).Seconds())
		in.Close()
	}
	rec.add(restF, sys.Name(), viaREST, "")
	rec.add(pgidF, sys.Name(), viaPGID, "")
	rec.add(loopF, sys.Name(), viaLoop, "")
	return nil
}

// trivialREST runs TrivialJobs submitted by REST clients on a fresh
// instance and returns the seconds from the first submission until none is
// active (0 when the system has no REST API).
func trivialREST(ctx context.Context, sys system, o freshOptions, sz sizes) (float64, error) {
	in, err := sys.Fresh(ctx, o)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	subs, err := in.Submitters(transportUnix, sz.Clients, false)
	if err != nil || subs == nil {
		return 0, err
	}
	begin := time.Now()
	if _, _, err := submitLoad(ctx, subs, sz.TrivialJobs); err != nil {
		return 0, fmt.Errorf("trivial jobs on %s: %w", sys.Name(), err)
	}
	if err := waitIdle(ctx, in, 15*time.Minute); err != nil {
		return 0, fmt.Errorf("trivial jobs on %s: %w", sys.Name(), err)
	}
	return time.Since(begin).Seconds(), nil
}

// runTimed runs cmd in an instance's folder and environment and returns
// its wall time; a failure carries what it wrote to stderr.
func runTimed(cmd *exec.Cmd, in instance) (time.Duration, error) {
	cmd.Dir = in.WorkDir()
	cmd.Env = in.Env()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	begin := time.Now()
	err := cmd.Run()
	wall := time.Since(begin)
	if err != nil {
		return 0, fmt.Errorf("%w: %s", err, stderr.String())
	}
	return wall, nil
}

// timeCommand runs a command CommandRuns times (after one unmeasured run
// that warms the page cache) with its output to /dev/null, and returns the
// wall times in milliseconds.
func timeCommand(ctx context.Context, in instance, runs int, name string, args ...string) ([]float64, error) {
	devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	defer devNull.Close()
	var out []float64
	for i := -1; i < runs; i++ {
		cmd := exec.CommandContext(ctx, in.Command(name), args...)
		cmd.Stdout = devNull
		wall, err := runTimed(cmd, in)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
		}
		if i >= 0 {
			out = append(out, float64(wall.Microseconds())/1000)
		}
	}
	return out, nil
}

// fill submits held jobs until the instance holds want of them.
func fill(ctx context.Context, in instance, sz sizes, have, want int) error {
	if want <= have {
		return nil
	}
	subs, err := in.Submitters(transportUnix, sz.Clients, true)
	if err != nil {
		return err
	}
	if subs == nil {
		// No REST API: the sbatch loop, held.
		_, err := runShell(ctx, in, fmt.Sprintf("for i in $(seq %d); do sbatch --hold --wrap true >/dev/null || exit 1; done", want-have))
		return err
	}
	_, _, err = submitLoad(ctx, subs, want-have)
	return err
}

// growQueue adds held jobs until the instance holds n of them (it holds
// have), records the submission rate on the way and returns n.
func growQueue(ctx context.Context, in instance, sys system, sz sizes, key string, have, n int, rec *recorder) (int, error) {
	begin := time.Now()
	if err := fill(ctx, in, sz, have, n); err != nil {
		return have, fmt.Errorf("queue %d held jobs on %s: %w", n, sys.Name(), err)
	}
	took := time.Since(begin)
	rec.add(figure{Key: fmt.Sprintf("%s-fill-to-%d", key, n), Title: fmt.Sprintf("held REST submissions/s (8 clients) while the queue grows from %d to %d", have, n), Unit: "jobs/s", Higher: true},
		sys.Name(), []float64{float64(n-have) / took.Seconds()}, fmt.Sprintf("%d held jobs added in %.1f s", n-have, took.Seconds()))
	return n, nil
}

// measureMemory is figure 5: the controller's resident memory (and, for
// Drover, its live Go heap) as held jobs accumulate. Nothing else runs on
// the instance, so the readings hold no command's answers.
func measureMemory(ctx context.Context, sys system, sz sizes, lengths []int, rec *recorder) error {
	in, err := sys.Fresh(ctx, freshOptions{Pprof: true, Settle: true})
	if err != nil {
		return err
	}
	defer in.Close()
	pid := in.ControllerPID()
	if pid == 0 {
		return errors.New("no controller pid")
	}
	// Let start-up allocations settle before the baseline.
	time.Sleep(2 * time.Second)
	prev, err := readMemory(pid)
	if err != nil {
		return err
	}
	records, err := in.Records(ctx)
	if err != nil {
		return err
	}
	rec.add(figure{Key: "controller-rss-0", Title: "controller RSS, no job", Unit: "MiB", Command: "VmRSS of /proc/<pid>/status"},
		sys.Name(), []float64{mib(prev.RSS)}, fmt.Sprintf("%d job records; %s", records, prev))
	have := 0
	for _, n := range lengths {
		if n <= have {
			continue
		}
		from := have
		if have, err = growQueue(ctx, in, sys, sz, "memory", have, n, rec); err != nil {
			return err
		}
		// The state log snapshots every 10,000 records, so one has just
		// begun: let it finish (and a few scheduling cycles pass) first.
		time.Sleep(10 * time.Second)
		mem, err := readMemory(pid)
		if err != nil {
			return err
		}
		rec.add(figure{Key: fmt.Sprintf("controller-rss-%d", n), Title: fmt.Sprintf("controller RSS with %d held jobs", n), Unit: "MiB",
			Command: "VmRSS of /proc/<pid>/status"}, sys.Name(), []float64{mib(mem.RSS)}, mem.String())
		if h, ok := in.LiveHeap(); ok {
			rec.add(figure{Key: fmt.Sprintf("controller-heap-%d", n), Title: fmt.Sprintf("controller Go heap with %d held jobs", n), Unit: "MiB",
				Command: "HeapAlloc of /debug/pprof/heap?debug=1&gc=1, twice"}, sys.Name(), []float64{mib(h)}, "")
		}
		per := float64(mem.RSS-prev.RSS) * 100000 / float64(n-from)
		rec.add(figure{Key: fmt.Sprintf("controller-rss-growth-%d-%d", from, n), Title: fmt.Sprintf("controller RSS growth from %d to %d held jobs, per 100,000 jobs", from, n), Unit: "MiB"},
			sys.Name(), []float64{mib(int64(per))}, "")
		prev = mem
	}
	// What a queue of held jobs costs an otherwise idle controller.
	cpu0, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	const idle = 10 * time.Second
	time.Sleep(idle)
	cpu1, err := cpuSeconds(pid)
	if err != nil {
		return err
	}
	rec.add(figure{Key: fmt.Sprintf("controller-idle-cpu-%d", have), Title: fmt.Sprintf("controller CPU while idle with %d held jobs", have), Unit: "%CPU"},
		sys.Name(), []float64{100 * (cpu1 - cpu0) / idle.Seconds()}, fmt.Sprintf("over %v", idle))
	return nil
}

// measureQueue is figure 4: squeue and squeue --json over queues of held
// jobs of growing lengths.
func measureQueue(ctx context.Context, sys system, sz sizes, lengths []int, rec *recorder) error {
	in, err := sys.Fresh(ctx, freshOptions{Settle: true})
	if err != nil {
		return err
	}
	defer in.Close()
	have := 0
	for _, n := range lengths {
		if n <= have {
			continue
		}
		if have, err = growQueue(ctx, in, sys, sz, "queue", have, n, rec); err != nil {
			return err
		}
		records, err := in.Records(ctx)
		if err != nil {
			return err
		}
		note := fmt.Sprintf("%d job records in the controller", records)
		runs := max(sz.CommandRuns, 3)
		if n > 20000 {
			runs = max(sz.Runs, 3)
		}
		for _, c := range []struct {
			key  string
			args []string
		}{{"squeue", nil}, {"squeue-json", []string{"--json"}}} {
			ms, err := timeCommand(ctx, in, runs, "squeue", c.args...)
			if err != nil {
				return err
			}
			f := figure{Key: fmt.Sprintf("%s-%d", c.key, n), Title: fmt.Sprintf("`squeue %s` wall time, %d held jobs", strings.Join(c.args, " "), n), Unit: "ms",
				Command: strings.TrimSpace("squeue " + strings.Join(c.args, " ") + " >/dev/null")}
			rec.add(f, sys.Name(), ms, note)
		}
		if err := measureScrape(ctx, in, sys, n, runs, note, rec); err != nil {
			return err
		}
	}
	return nil
}

// measureScrape times a Prometheus scrape of the controller's Slurm
// metrics sets at a queue length: the counts are kept as jobs change, so
// the time should not grow with the queue. Slurm 22.05 has no metrics.
func measureScrape(ctx context.Context, in instance, sys system, n, runs int, note string, rec *recorder) error {
	client, base := in.REST()
	if client == nil || sys.Name() != "Drover" {
		return nil
	}
	root := strings.TrimSuffix(base, "/slurm/v0.0.44")
	for _, set := range []string{"jobs", "jobs-users-accts", "nodes", "partitions"} {
		var ms []float64
		for i := -1; i < runs; i++ { // the first one warms up
			begin := time.Now()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, root+"/metrics/"+set, nil)
			if err != nil {
				return err
			}
			resp, err := client.Do(req)
			if err != nil {
				return fmt.Errorf("scrape %s: %w", set, err)
			}
			size, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK || size == 0 {
				return fmt.Errorf("scrape %s: %s, %d bytes, %v", set, resp.Status, size, err)
			}
			if i >= 0 {
				ms = append(ms, float64(time.Since(begin).Microseconds())/1000)
			}
		}
		rec.add(figure{Key: fmt.Sprintf("scrape-%s-%d", set, n), Title: fmt.Sprintf("scrape of /metrics/%s, %d held jobs", set, n), Unit: "ms",
			Command: "GET /metrics/" + set + " on the controller's socket"}, sys.Name(), ms, note)
	}
	return nil
}

// measureStartup is the floor under every command figure: starting the
// command and printing its version, without reaching the controller. A
// Go hello-world, built here, runs between the command's runs so that the
// two share the machine's noise; the ratio of each pair is the figure the
// commands aim at (at most 2).
func measureStartup(ctx context.Context, sys system, sz sizes, rec *recorder) error {
	in, err := sys.Fresh(ctx, freshOptions{})
	if err != nil {
		return err
	}
	defer in.Close()
	hello, err := buildHello(ctx, in.WorkDir())
	if err != nil {
		return err
	}
	// Drover's commands also run beside the floor of any program built
	// on the generated client (test/bench/clientfloor).
	// And sbatch built position-independent, as the packages build the
	// daemons (packaging/mkpkg): what that would cost the commands.
	floor, pie := "", ""
	if sys.Name() == "Drover" {
		if floor, err = buildFloor(ctx, in.WorkDir()); err != nil {
			return err
		}
		if pie, err = buildPIESbatch(ctx, in.WorkDir()); err != nil {
			return err
		}
	}
	runs := max(sz.CommandRuns, 3) * 5
	var cmdMS, helloMS, ratios, floorMS, floorRatios, pieMS []float64
	for i := -1; i < runs; i++ { // the first round warms the page cache
		c, err := timeOnce(ctx, in, "sbatch", "--version")
		if err != nil {
			return err
		}
		h, err := timeOnce(ctx, in, hello)
		if err != nil {
			return err
		}
		f, p := 0.0, 0.0
		if floor != "" {
			if f, err = timeOnce(ctx, in, floor); err != nil {
				return err
			}
			if p, err = timeOnce(ctx, in, pie, "--version"); err != nil {
				return err
			}
		}
		if i >= 0 {
			pieMS = append(pieMS, p)
			cmdMS, helloMS = append(cmdMS, c), append(helloMS, h)
			ratios = append(ratios, c/h)
			if floor != "" {
				floorMS, floorRatios = append(floorMS, f), append(floorRatios, f/h)
			}
		}
	}
	if floor != "" {
		rec.add(figure{Key: "client-floor-startup", Title: "a program linking the generated client and doing nothing else (test/bench/clientfloor), timed beside `sbatch --version`", Unit: "ms", Command: "./clientfloor >/dev/null"},
			sys.Name(), floorMS, "")
		rec.add(figure{Key: "client-floor-ratio", Title: "that program over the Go hello-world, run by run: the floor of any command's start-up ratio", Unit: "x", Command: "./clientfloor / ./hello"},
			sys.Name(), floorRatios, "")
		rec.add(figure{Key: "command-startup-pie", Title: "`sbatch --version` built position-independent and stripped (as the packages build the daemons), timed beside the others", Unit: "ms", Command: "sbatch --version >/dev/null"},
			sys.Name(), pieMS, "")
	}
	rec.add(figure{Key: "command-startup", Title: "`sbatch --version` wall time (command start-up)", Unit: "ms", Command: "sbatch --version >/dev/null"},
		sys.Name(), cmdMS, "")
	rec.add(figure{Key: "hello-startup", Title: "a Go hello-world's wall time, timed between the runs of `sbatch --version`", Unit: "ms", Command: "./hello >/dev/null"},
		sys.Name(), helloMS, "")
	rec.add(figure{Key: "command-startup-ratio", Title: "`sbatch --version` over a Go hello-world, run by run", Unit: "x", Command: "sbatch --version / ./hello"},
		sys.Name(), ratios, "")
	return nil
}

// buildHello builds the smallest Go program that prints a line, the
// yardstick of the commands' start-up, into dir.
func buildHello(ctx context.Context, dir string) (string, error) {
	src, err := os.MkdirTemp(dir, "hello-src-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	const prog = "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(prog), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.24\n"), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "hello-world")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the hello-world: %w: %s", err, b)
	}
	// Installed as the commands are, so that both start the same way.
	return out, installCopy(out)
}

// buildFloor builds test/bench/clientfloor into dir, installed as the
// commands are.
func buildFloor(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "clientfloor")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, "github.com/droverhq/drover/test/bench/clientfloor")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the client floor: %w: %s", err, b)
	}
	return out, installCopy(out)
}

// buildPIESbatch builds sbatch with the flags the packages build the
// daemons with (packaging/mkpkg) into dir.
func buildPIESbatch(ctx context.Context, dir string) (string, error) {
	out := filepath.Join(dir, "sbatch-pie")
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-buildmode=pie", "-ldflags", "-s -w -buildid=", "-o", out, "github.com/droverhq/drover/cmd/commands/sbatch")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building a position-independent sbatch: %w: %s", err, b)
	}
	return out, installCopy(out)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
