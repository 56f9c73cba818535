// Command bench measures the cluster figures of docs/BENCHMARKS.md: REST
// and sbatch submission rates, trivial jobs run to completion, squeue over
// long queues and the controller's memory. Drover is measured on clusters of
// real processes (`drover controller` and four `drover node`, as test/e2e
// starts them, with `drover dev`'s slurm.conf); the real Slurm 22.05 of
// /work/shared/real-slurm is measured the same way when it is up, so that
// the table gives Drover/Slurm ratios.
//
// It is a program, not a test, so that `go test ./...` never runs it:
//
//	make bench                              # build, then measure (see the Makefile)
//	go run ./test/bench -drover bin/drover  # the same by hand
//	go run ./test/bench -quick              # a smoke run with small sizes
//
// Each figure is measured -runs times and the median quoted; every sample
// is printed, and -json writes them all.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/testutil"
)

func main() {
	err := run()
	// Every cluster is gone by now: the drover folders the clusters'
	// cgroups lived in (runc makes them in hierarchies the node daemons
	// never use) go too.
	testutil.RemoveCgroupRoots()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		drover      = flag.String("drover", "", "the drover binary to measure (default: build one from this checkout, as `make build` does)")
		baseline    = flag.String("baseline", "", "another drover binary (an earlier commit's) measured as system drover-baseline, beside this one in the same run; its TCP clients send a bare X-SLURM-USER-NAME, as loopback was trusted before authentication (see -baseline-auth)")
		baseAuth    = flag.Bool("baseline-auth", false, "the -baseline build authenticates its TCP clients as this one does: send it the same credentials, not a bare user name")
		figs        = flag.String("figures", "startup,rest,restread,sbatch,trivial,memory,queue,sched,sim,srun,plugins,acct", "figures to measure, comma-separated (also ha: REST submissions with 1, 3 and 5 replicated controllers)")
		controllers = flag.Int("controllers", 1, "Drover's controllers in every figure but ha: above 1, replicated (ctl1..ctlN on 127.0.0.1..N, accounting_storage/none), the clients on the leader")
		systems     = flag.String("systems", "drover,slurm", "systems to measure; slurm is skipped when real Slurm is not up")
		quick       = flag.Bool("quick", false, "small sizes and two runs: a smoke test of the harness")
		runs        = flag.Int("runs", 5, "runs of each figure (the median is quoted)")
		slurmRuns   = flag.Int("slurm-runs", 3, "runs of each figure on real Slurm (slower)")
		restJobs    = flag.Int("rest-jobs", 4000, "submissions per REST run")
		acctJobs    = flag.Int("acct-jobs", 1_000_000, "job records in the accounting store sacct is timed over")
		acctPG      = flag.Bool("acct-pg", true, "also fill a PostgreSQL store of -acct-jobs records to read its size (minutes)")
		slurmREST   = flag.Int("slurm-rest-jobs", 1000, "submissions per REST run on real Slurm")
		sbatchJobs  = flag.Int("sbatch-jobs", 1000, "length of the sbatch loop")
		trivialJobs = flag.Int("trivial-jobs", 1000, "trivial jobs run to completion")
		queue       = flag.String("queue", "5000,50000,100000", "queue lengths squeue is timed on and memory read at")
		slurmQueue  = flag.String("slurm-queue", "5000,50000", "queue lengths on real Slurm (its MaxJobCount is 100000, finished jobs included)")
		slurmConf   = flag.String("slurm-conf", "/var/lib/real-slurm-ref/etc/slurm.conf", "real Slurm's slurm.conf")
		slurmRun    = flag.String("slurm-run", "/var/lib/real-slurm-ref", "real Slurm's runtime folder (PIDS, run/slurmrestd.sock)")
		slurmAPI    = flag.String("slurmrestd-version", "v0.0.38", "the slurmrestd API version to submit to")
		dir         = flag.String("dir", "", "working folder (default: a new one under $TMPDIR)")
		jsonOut     = flag.String("json", "", "write every sample to this file as JSON")
		simTrace    = flag.String("sim-trace", "../shared/traces/HPC2N-2002-2.2-cln.swf.gz", "the trace the simulator figure replays")
		simRuns     = flag.Int("sim-runs", 1, "runs of the simulator figure (a backfill replay of the whole trace takes minutes)")
		profileDir  = flag.String("profile", "", "write a CPU profile of the controller over the first second of each REST run into this folder")
		interleave  = flag.Bool("interleave", false, "measure each run of a figure on every system in turn (for comparing builds on a drifting machine)")
		table       = flag.String("table", "", "measure nothing: print the table of these -json files (comma-separated; later files win)")
	)
	flag.Parse()
	if *table != "" {
		return printFiles(os.Stdout, strings.Split(*table, ","))
	}
	lengths, err := parseLengths(*queue)
	if err != nil {
		return err
	}
	slurmLengths, err := parseLengths(*slurmQueue)
	if err != nil {
		return err
	}
	sz := sizes{Runs: *runs, RESTJobs: *restJobs, Clients: 8, SbatchJobs: *sbatchJobs, TrivialJobs: *trivialJobs,
		Queue: lengths, CommandRuns: 9, SchedPending: 50_000, SchedNodes: 5_000, ProfileDir: *profileDir, AcctJobs: *acctJobs, AcctPG: *acctPG}
	if *quick {
		sz = sizes{Runs: 2, RESTJobs: 300, Clients: 8, SbatchJobs: 30, TrivialJobs: 100, Queue: []int{500, 2000}, CommandRuns: 3,
			SchedPending: 2000, SchedNodes: 200, AcctJobs: 20_000, AcctPG: *acctPG}
		*slurmRuns, *slurmREST, slurmLengths = 2, 100, []int{500}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	work := *dir
	if work == "" {
		if work, err = os.MkdirTemp("", "drover-bench-"); err != nil {
			return err
		}
		defer os.RemoveAll(work)
	}
	bin := *drover
	if bin == "" {
		// A private copy: a bin/drover rebuilt meanwhile (by another
		// build) cannot change what is measured half way through.
		// The commands' own programs beside it: install-shims links the
		// commands to them, as an installation does.
		bin = filepath.Join(work, "drover")
		for _, b := range []struct{ out, pkg string }{
			{bin, "github.com/droverhq/drover/cmd/drover"},
			{work + string(filepath.Separator), "github.com/droverhq/drover/cmd/commands/..."},
		} {
			build := exec.Command("go", "build", "-trimpath", "-o", b.out, b.pkg)
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := build.CombinedOutput(); err != nil {
				return fmt.Errorf("build %s: %w: %s", b.pkg, err, out)
			}
		}
		if err := installAll(work); err != nil {
			return err
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("drover binary: %w", err)
	}
	shims := filepath.Join(work, "shims")
	if out, err := exec.Command(bin, "install-shims", shims).CombinedOutput(); err != nil {
		return fmt.Errorf("install shims: %w: %s", err, out)
	}
	rec := &recorder{log: func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
	}}
	machine := describeMachine(work)
	fmt.Fprintln(os.Stderr, machine)

	var targets []system
	for _, s := range strings.Split(*systems, ",") {
		switch s {
		case "drover":
			targets = append(targets, &droverSystem{drover: bin, shims: shims, base: work, name: "Drover", controllers: *controllers})
		case "drover-baseline":
			if *baseline == "" {
				return fmt.Errorf("system drover-baseline needs -baseline BINARY")
			}
			b, err := filepath.Abs(*baseline)
			if err != nil {
				return err
			}
			bshims := filepath.Join(work, "baseline-shims")
			if out, err := exec.Command(b, "install-shims", bshims).CombinedOutput(); err != nil {
				return fmt.Errorf("install baseline shims: %w: %s", err, out)
			}
			targets = append(targets, &droverSystem{drover: b, shims: bshims, base: filepath.Join(work, "baseline"), name: "Drover-baseline", bareTCP: !*baseAuth})
		case "drover-noacct":
			// The same build without job accounting: what accounting
			// costs, measured in the same run.
			targets = append(targets, &droverSystem{drover: bin, shims: shims, base: filepath.Join(work, "noacct"), name: "Drover-noacct", noAccounting: true})
		case "slurm":
			ss := &slurmSystem{conf: *slurmConf, restSocket: filepath.Join(*slurmRun, "run", "slurmrestd.sock"),
				restVersion: *slurmAPI, pidFile: filepath.Join(*slurmRun, "PIDS"), workDir: filepath.Join(*slurmRun, "out", "bench"), noSettle: *quick}
			if err := slurmUp(ss); err != nil {
				rec.log("real Slurm is not measured: %v", err)
				continue
			}
			targets = append(targets, ss)
		case "":
		default:
			return fmt.Errorf("unknown system %q", s)
		}
	}
	// Interleaved, each run of a figure is measured on every system in
	// turn, so that the machine's drift over minutes falls on all of them
	// alike; otherwise each system's runs follow one another.
	rounds, perRound := 1, sz.Runs
	if *interleave {
		rounds, perRound = sz.Runs, 1
	}
	for round := range rounds {
		if err := measureRound(ctx, targets, strings.Split(*figs, ","), sz, perRound, round, slurmLengths, *slurmRuns, *slurmREST, *simTrace, *simRuns, work, rec); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		data, err := json.MarshalIndent(map[string]any{"machine": machine, "results": rec.results}, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(*jsonOut, data, 0o644); err != nil {
			return err
		}
	}
	printTable(os.Stdout, rec.results)
	return nil
}

// measureRound measures each figure on each system, perRound runs each.
// With one run per round (interleaved), Slurm is measured in the first
// rounds only, up to its own number of runs.
func measureRound(ctx context.Context, targets []system, figs []string, sz sizes, perRound, round int, slurmLengths []int,
	slurmRuns, slurmREST int, simTrace string, simRuns int, work string, rec *recorder) error {
	for _, sys := range targets {
		ssz := sz
		ssz.Runs = perRound
		if sys.Name() == "Slurm" {
			if perRound == 1 && round >= slurmRuns {
				continue
			}
			ssz.Runs, ssz.RESTJobs, ssz.Queue = min(perRound, slurmRuns), slurmREST, slurmLengths
		}
		for _, f := range figs {
			rec.log("=== %s on %s", f, sys.Name())
			var err error
			switch f {
			case "startup":
				err = measureStartup(ctx, sys, ssz, rec)
			case "rest":
				err = measureREST(ctx, sys, ssz, rec)
			case "sbatch":
				err = measureSbatch(ctx, sys, ssz, rec)
			case "trivial":
				err = measureTrivial(ctx, sys, ssz, rec)
			case "memory":
				err = measureMemory(ctx, sys, ssz, ssz.Queue, rec)
			case "queue":
				err = measureQueue(ctx, sys, ssz, ssz.Queue, rec)
			case "srun":
				err = measureSrun(ctx, sys, ssz, rec)
			case "sched":
				if sys.Name() == "Drover" {
					err = measureSched(ssz, rec)
				}
			case "acct":
				if round == 0 {
					err = measureAcct(ctx, sys, ssz, rec)
				}
			case "restread":
				err = measureRESTRead(ctx, sys, ssz, rec)
			case "ha":
				err = measureHA(ctx, sys, ssz, rec)
			case "plugins":
				if sys.Name() == "Drover" {
					err = measurePlugins(ctx, sys, ssz, work, rec)
				}
			case "sim":
				if sys.Name() == "Drover" && round == 0 {
					err = measureSim(simTrace, simRuns, rec)
				}
			case "":
			default:
				err = fmt.Errorf("unknown figure %q", f)
			}
			if err != nil {
				return fmt.Errorf("%s on %s: %w", f, sys.Name(), err)
			}
		}
	}
	return nil
}

// printFiles prints the table of earlier runs' JSON files, so that
// figures measured in separate runs (Slurm's, say) share one table. A
// figure measured in several files keeps the last file's result.
func printFiles(w io.Writer, files []string) error {
	var all []result
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var doc struct {
			Results []result `json:"results"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("read %s: %w", f, err)
		}
		for _, r := range doc.Results {
			all = slices.DeleteFunc(all, func(x result) bool { return x.Figure == r.Figure && x.System == r.System })
			all = append(all, r)
		}
	}
	printTable(w, all)
	return nil
}

// parseLengths reads a comma-separated list of queue lengths.
func parseLengths(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad queue length %q", f)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// slurmUp checks that real Slurm answers.
func slurmUp(s *slurmSystem) error {
	if _, err := os.Stat(s.conf); err != nil {
		return fmt.Errorf("no %s (start it with /work/shared/real-slurm/up.sh)", s.conf)
	}
	cmd := exec.Command("/usr/bin/scontrol", "ping")
	cmd.Env = append(os.Environ(), "SLURM_CONF="+s.conf)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "UP") {
		return fmt.Errorf("scontrol ping: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if _, err := os.Stat(s.restSocket); err != nil {
		s.restSocket = ""
	}
	return nil
}

// describeMachine says what the figures were measured on.
func describeMachine(work string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "nproc: %d\n", runtime.NumCPU())
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				fmt.Fprintf(&b, "cpu: %s\n", strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":")))
				break
			}
		}
	}
	if data, err := os.ReadFile("/proc/meminfo"); err == nil {
		line, _, _ := strings.Cut(string(data), "\n")
		fmt.Fprintf(&b, "memory: %s\n", strings.Join(strings.Fields(line)[1:], " "))
	}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		fmt.Fprintf(&b, "kernel: %s\n", utsString(u.Release[:]))
	}
	if out, err := exec.Command("df", "-hT", work).Output(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		fmt.Fprintf(&b, "disk (%s): %s\n", work, strings.Join(strings.Fields(lines[len(lines)-1]), " "))
	}
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		fmt.Fprintf(&b, "checkout: %s\n", strings.TrimSpace(string(out)))
	}
	fmt.Fprintf(&b, "go: %s", runtime.Version())
	return b.String()
}

func utsString(f []int8) string {
	var b strings.Builder
	for _, c := range f {
		if c == 0 {
			break
		}
		b.WriteByte(byte(c))
	}
	return b.String()
}

// printTable writes the results as a markdown table with one row per
// figure and the Drover/Slurm ratio.
func printTable(w io.Writer, results []result) {
	type row struct {
		drover, slurm *result
	}
	var order []string
	rows := map[string]*row{}
	for i := range results {
		r := &results[i]
		if rows[r.Figure] == nil {
			rows[r.Figure] = &row{}
			order = append(order, r.Figure)
		}
		if r.System == "Drover" {
			rows[r.Figure].drover = r
		} else {
			rows[r.Figure].slurm = r
		}
	}
	fmt.Fprintln(w, "| figure | unit | Drover median (min-max, runs) | Slurm median (min-max, runs) | Drover/Slurm |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, key := range order {
		r := rows[key]
		cell := func(x *result) string {
			if x == nil {
				return "-"
			}
			if len(x.Samples) == 1 {
				return fmtValue(x.Median)
			}
			return fmt.Sprintf("%s (%s-%s, n=%d)", fmtValue(x.Median), fmtValue(slices.Min(x.Samples)), fmtValue(slices.Max(x.Samples)), len(x.Samples))
		}
		unit, ratio := "", "-"
		if r.drover != nil {
			unit = r.drover.Unit
		} else if r.slurm != nil {
			unit = r.slurm.Unit
		}
		if r.drover != nil && r.slurm != nil && r.slurm.Median != 0 {
			ratio = strconv.FormatFloat(r.drover.Median/r.slurm.Median, 'f', 3, 64)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", key, unit, cell(r.drover), cell(r.slurm), ratio)
	}
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func fmtValue(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	default:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
}

func fmtSamples(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmtValue(x)
	}
	return strings.Join(parts, " ")
}
