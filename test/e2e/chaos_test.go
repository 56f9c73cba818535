package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/chaos"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// workload is the suite's clients: on the login host, through the real
// commands, two submit, one cancels what was submitted, one lists; each
// records what it asked and what it was told.
type workload struct {
	c     *Cluster
	marks string
	hist  *chaos.History
	stop  chan struct{}
	wg    sync.WaitGroup
	seq   int
	mu    sync.Mutex
	acked []uint32
}

func startWorkload(c *Cluster, marks string, hist *chaos.History, prefix string) *workload {
	w := &workload{c: c, marks: marks, hist: hist, stop: make(chan struct{})}
	for i := 0; i < 2; i++ {
		w.loop(i, func(client int) { w.submit(client, prefix) })
	}
	w.loop(2, w.cancel)
	w.loop(3, w.list)
	return w
}

func (w *workload) loop(client int, op func(int)) {
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			op(client)
			time.Sleep(time.Duration(50+rand.IntN(150)) * time.Millisecond)
		}
	}()
}

func (w *workload) finish() {
	close(w.stop)
	w.wg.Wait()
}

func (w *workload) submit(client int, prefix string) {
	w.mu.Lock()
	w.seq++
	tag := fmt.Sprintf("%s-%d-%d", prefix, client, w.seq)
	w.mu.Unlock()
	op := chaos.Op{Kind: chaos.Submit, Client: client, Tag: tag, Invoked: time.Now()}
	r := w.c.RunOn("login", nil, nil, chaos.JobScript(w.marks, 1+rand.IntN(3)), "sbatch", "--parsable", "-J", tag, "-o", "/dev/null", "-t", "1")
	op.Completed = time.Now()
	id, err := strconv.ParseUint(strings.TrimSpace(r.Stdout), 10, 32)
	if r.Code == 0 && err == nil {
		op.JobID = uint32(id)
		w.mu.Lock()
		w.acked = append(w.acked, op.JobID)
		w.mu.Unlock()
	} else {
		op.Outcome, op.Err = chaos.Unknown, fmt.Sprintf("exit %d: %s", r.Code, strings.TrimSpace(r.Stderr))
	}
	w.hist.Add(op)
}

func (w *workload) cancel(client int) {
	w.mu.Lock()
	if len(w.acked) == 0 || rand.IntN(4) != 0 {
		w.mu.Unlock()
		return
	}
	id := w.acked[rand.IntN(len(w.acked))]
	w.mu.Unlock()
	op := chaos.Op{Kind: chaos.Cancel, Client: client, JobID: id, Invoked: time.Now()}
	r := w.c.RunOn("login", nil, nil, "", "scancel", strconv.FormatUint(uint64(id), 10))
	op.Completed = time.Now()
	if r.Code != 0 {
		op.Outcome, op.Err = chaos.Unknown, strings.TrimSpace(r.Stderr)
	}
	w.hist.Add(op)
}

func (w *workload) list(client int) {
	op := chaos.Op{Kind: chaos.List, Client: client, Invoked: time.Now()}
	r := w.c.RunOn("login", nil, nil, "", "squeue", "-h", "-o", "%i")
	op.Completed = time.Now()
	if r.Code != 0 {
		op.Outcome, op.Err = chaos.Unknown, strings.TrimSpace(r.Stderr)
	}
	w.hist.Add(op)
}

// nemesis breaks something and returns how to mend it.
type nemesis struct {
	name string
	// hold is how long the fault lasts.
	hold  time.Duration
	apply func(t *testing.T, c *Cluster) (heal func())
}

var nemeses = []nemesis{
	{"kill the leader", 3 * time.Second, func(t *testing.T, c *Cluster) func() {
		l := c.WaitLeader(20 * time.Second)
		c.SignalCtl(l, syscall.SIGKILL)
		return func() { c.StartCtl(l) }
	}},
	{"pause the leader", 6 * time.Second, func(t *testing.T, c *Cluster) func() {
		l := c.WaitLeader(20 * time.Second)
		c.SignalCtl(l, syscall.SIGSTOP)
		return func() { c.SignalCtl(l, syscall.SIGCONT) }
	}},
	{"isolate the leader with a minority", 6 * time.Second, func(t *testing.T, c *Cluster) func() {
		l := c.WaitLeader(20 * time.Second)
		minority := []string{l}
		var majority []string
		for _, n := range c.ControllerNames() {
			switch {
			case n == l:
			case len(minority) < (len(c.ControllerNames())-1)/2:
				minority = append(minority, n)
			default:
				majority = append(majority, n)
			}
		}
		c.Partition(minority, majority)
		return c.Heal
	}},
	{"cut the controllers from half the nodes", 6 * time.Second, func(t *testing.T, c *Cluster) func() {
		// Shorter than SlurmdTimeout: no node is declared down, no job
		// requeued, and the node daemons' reports wait in their spools.
		c.Partition(c.ControllerNames(), []string{"n1"})
		return c.Heal
	}},
	{"fill a follower's disk", 6 * time.Second, func(t *testing.T, c *Cluster) func() {
		l := c.WaitLeader(20 * time.Second)
		var f string
		for _, n := range c.ControllerNames() {
			if n != l {
				f = n
			}
		}
		filler := filepath.Join(c.ctlStateDir(f), "filler")
		// dd stops when the tmpfs is full.
		_ = exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=1M").Run()
		var st syscall.Statfs_t
		must(t, syscall.Statfs(c.ctlStateDir(f), &st))
		if st.Bavail != 0 {
			t.Fatalf("%s's disk has %d blocks free after the filler", f, st.Bavail)
		}
		t.Logf("%s's disk is full", f)
		return func() {
			must(t, os.Remove(filler))
			if p := c.ctlProc(f); p != nil && p.ProcessState != nil {
				// It stopped on the full disk, as it should: started
				// again, as systemd would.
				t.Logf("%s stopped on the full disk; started again", f)
				c.StartCtl(f)
			}
		}
	}},
	{"restart every controller", 2 * time.Second, func(t *testing.T, c *Cluster) func() {
		for _, n := range c.ControllerNames() {
			c.SignalCtl(n, syscall.SIGKILL)
		}
		return func() {
			for _, n := range c.ControllerNames() {
				c.StartCtl(n)
			}
		}
	}},
}

// combined applies faults together (in order; healed the other way
// round), as failures come in real life.
func combined(ns ...nemesis) nemesis {
	c := nemesis{name: ns[0].name}
	for _, n := range ns[1:] {
		c.name += " + " + n.name
	}
	for _, n := range ns {
		c.hold = max(c.hold, n.hold)
	}
	c.apply = func(t *testing.T, cl *Cluster) func() {
		var heals []func()
		for _, n := range ns {
			heals = append(heals, n.apply(t, cl))
		}
		return func() {
			for i := len(heals) - 1; i >= 0; i-- {
				heals[i]()
			}
		}
	}
	return c
}

// nemesisNamed finds a fault of the list by name.
func nemesisNamed(name string) nemesis {
	for _, n := range nemeses {
		if n.name == name {
			return n
		}
	}
	panic("no nemesis " + name)
}

// allNemeses are the faults one at a time, then combined.
func allNemeses() []nemesis {
	return append(append([]nemesis{}, nemeses...),
		combined(nemesisNamed("fill a follower's disk"), nemesisNamed("kill the leader")),
		combined(nemesisNamed("cut the controllers from half the nodes"), nemesisNamed("pause the leader")),
	)
}

// TestChaos runs concurrent clients on the login host while a nemesis
// breaks the replicated controllers, one fault after another, then two
// at once, and then checks what the clients were told against what the
// cluster holds and what the jobs wrote when they ran. DROVER_CHAOS_ROUNDS repeats the
// list (make chaos); DROVER_CHAOS_REPORT names a file for the verdicts.
func TestChaos(t *testing.T) {
	t.Parallel()
	rounds := 1
	if n, err := strconv.Atoi(os.Getenv("DROVER_CHAOS_ROUNDS")); err == nil && n > 0 {
		rounds = n
	}
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 4, Controllers: 5,
		Extra: "SlurmctldTimeout=10\nAccountingStorageType=accounting_storage/none\n",
		// Each controller's state on a small disk of its own, for the
		// nemesis that fills one.
		Prepare: func(c *Cluster) {
			for _, n := range c.ControllerNames() {
				dir := c.ctlStateDir(n)
				must(t, os.MkdirAll(dir, 0o755))
				if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", dir).CombinedOutput(); err != nil {
					t.Fatalf("mount a small disk on %s: %v: %s", dir, err, out)
				}
				t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
			}
		}})
	c.daemonOn("login", "sackd", "sackd", "--conf", c.Conf)
	waitSack(t, c, "login")
	marks := filepath.Join(c.Dir, "marks")
	must(t, os.MkdirAll(marks, 0o777))
	must(t, os.Chmod(marks, 0o777))
	type report struct {
		Nemesis string `json:"nemesis"`
		Round   int    `json:"round"`
		Verdict string `json:"verdict"`
		OK      bool   `json:"ok"`
	}
	var reports []report
	// Every id acknowledged so far, and for which submission: ids must
	// never repeat, across faults too.
	acked := map[uint32]string{}
	for round := 1; round <= rounds; round++ {
		for _, nm := range allNemeses() {
			c.WaitLeader(30 * time.Second)
			// A history per fault: the jobs of earlier ones are purged
			// after MinJobAge, as they should be.
			hist := &chaos.History{}
			prefix := fmt.Sprintf("r%d-%s", round, strings.ReplaceAll(nm.name, " ", "_"))
			w := startWorkload(c, marks, hist, prefix)
			time.Sleep(time.Second)
			heal := nm.apply(t, c)
			time.Sleep(nm.hold)
			heal()
			c.WaitLeader(30 * time.Second)
			time.Sleep(time.Second)
			w.finish()
			v := checkCluster(t, c, hist, marks, prefix+"-")
			for _, op := range hist.Ops() {
				if op.Kind != chaos.Submit || op.Outcome != chaos.OK {
					continue
				}
				if prev, ok := acked[op.JobID]; ok {
					v.Violations = append(v.Violations, fmt.Sprintf("job id %d acknowledged for %s and, earlier, %s", op.JobID, op.Tag, prev))
				}
				acked[op.JobID] = op.Tag
			}
			t.Logf("round %d, %s: %v", round, nm.name, v)
			for _, op := range hist.Ops() {
				if op.Outcome == chaos.Unknown {
					t.Logf("  %s %s %d: %s", op.Kind, op.Tag, op.JobID, op.Err)
				}
			}
			reports = append(reports, report{nm.name, round, v.String(), v.OK()})
			if !v.OK() {
				t.Errorf("round %d, %s: %v", round, nm.name, v)
			}
		}
	}
	if path := os.Getenv("DROVER_CHAOS_REPORT"); path != "" {
		data, _ := json.MarshalIndent(reports, "", "  ")
		must(t, os.WriteFile(path, data, 0o644))
	}
}

// checkCluster waits for every job to end, then checks a fault's history
// against the cluster's jobs named with its prefix and the marks of
// those jobs.
func checkCluster(t *testing.T, c *Cluster, hist *chaos.History, marks, prefix string) chaos.Verdict {
	t.Helper()
	var final []chaos.Job
	deadline := time.Now().Add(90 * time.Second)
	for {
		final = final[:0]
		active := 0
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := c.Client().SlurmV0044GetJobs(ctx, v0044.SlurmV0044GetJobsParams{})
		cancel()
		r, ok := res.(*v0044.V0044OpenapiJobInfoResp)
		if err == nil && ok {
			for _, j := range r.Jobs {
				state := ""
				if len(j.JobState) > 0 {
					state = string(j.JobState[0])
				}
				if state == "PENDING" || state == "RUNNING" || state == "COMPLETING" {
					active++
				}
				if strings.HasPrefix(j.Name.Value, prefix) {
					final = append(final, chaos.Job{ID: uint32(j.JobID.Value), Name: j.Name.Value, State: state})
				}
			}
			if active == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still active after 90 s (%d; %v)", active, err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	ours := map[uint32]bool{}
	for _, j := range final {
		ours[j.ID] = true
	}
	for _, op := range hist.Ops() {
		if op.Kind == chaos.Submit && op.Outcome == chaos.OK {
			ours[op.JobID] = true
		}
	}
	f, err := os.Open(filepath.Join(marks, "marks"))
	var ms []chaos.Mark
	if err == nil {
		all, err := chaos.ParseMarks(f)
		f.Close()
		must(t, err)
		for _, m := range all {
			if ours[m.JobID] {
				ms = append(ms, m)
			}
		}
	}
	return chaos.Check(hist.Ops(), final, ms)
}

// TestFailoverTimes kills the leader DROVER_CHAOS_KILLS times (make
// chaos; skipped otherwise) and measures, each time, how long from the
// SIGKILL until sbatch on the login host has a job id again; the killed
// controller then comes back as a follower before the next kill.
func TestFailoverTimes(t *testing.T) {
	kills, _ := strconv.Atoi(os.Getenv("DROVER_CHAOS_KILLS"))
	if kills <= 0 {
		t.Skip("DROVER_CHAOS_KILLS is not set (make chaos)")
	}
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 2, Controllers: 3,
		Extra: "AccountingStorageType=accounting_storage/none\n"})
	c.daemonOn("login", "sackd", "sackd", "--conf", c.Conf)
	waitSack(t, c, "login")
	var took []time.Duration
	for i := 0; i < kills; i++ {
		leader := c.WaitLeader(30 * time.Second)
		c.SignalCtl(leader, syscall.SIGKILL)
		killed := time.Now()
		r := c.RunOn("login", nil, nil, "", "sbatch", "--parsable", "-H", "-o", "/dev/null", "--wrap", "true")
		d := time.Since(killed)
		if r.Code != 0 {
			t.Fatalf("kill %d: sbatch after %v: %+v", i+1, d, r)
		}
		took = append(took, d)
		c.StartCtl(leader)
		// Caught up and following before the next kill: it answers
		// through its own socket again.
		deadline := time.Now().Add(30 * time.Second)
		for code, _ := c.ctlPing(leader, time.Second); code != 200; code, _ = c.ctlPing(leader, time.Second) {
			if time.Now().After(deadline) {
				t.Fatalf("%s did not come back", leader)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	slices.Sort(took)
	median, p99 := took[len(took)/2], took[min(len(took)-1, len(took)*99/100)]
	t.Logf("failover over %d leader kills: median %v, p99 %v, max %v", kills, median, p99, took[len(took)-1])
	if path := os.Getenv("DROVER_CHAOS_REPORT"); path != "" {
		data, _ := json.Marshal(map[string]any{"kills": kills, "median_ms": median.Milliseconds(), "p99_ms": p99.Milliseconds(), "max_ms": took[len(took)-1].Milliseconds()})
		must(t, os.WriteFile(path+".failover", data, 0o644))
	}
}
