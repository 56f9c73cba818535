package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/testutil"
)

// ControllerNames are the cluster's controllers, in SlurmctldHost order:
// "ctl" alone, or ctl1..ctlN when replicated.
func (c *Cluster) ControllerNames() []string {
	if c.opts.Controllers <= 1 {
		return []string{"ctl"}
	}
	var out []string
	for i := 1; i <= c.opts.Controllers; i++ {
		out = append(out, "ctl"+strconv.Itoa(i))
	}
	return out
}

// ctlStateDir is a replicated controller's own state folder.
func (c *Cluster) ctlStateDir(name string) string {
	return filepath.Join(c.Dir, "state-"+name)
}

func (c *Cluster) ctlSocket(name string) string {
	return filepath.Join(c.ctlStateDir(name), "drover.sock")
}

// StartCtl starts (or restarts) one replicated controller on its host.
func (c *Cluster) StartCtl(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hostDaemon[name] = name
	c.nodes[name] = c.daemon(name, "controller", "--conf", c.Conf, "--name", name,
		"--state-dir", c.ctlStateDir(name), "--socket", c.ctlSocket(name))
}

// ctlProc is a replicated controller's process.
func (c *Cluster) ctlProc(name string) *exec.Cmd {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodes[name]
}

// SignalCtl sends a replicated controller's process sig; SIGKILL is
// waited for.
func (c *Cluster) SignalCtl(name string, sig syscall.Signal) {
	p := c.ctlProc(name)
	if p == nil || p.Process == nil {
		return
	}
	_ = p.Process.Signal(sig)
	if sig != syscall.SIGKILL {
		return
	}
	for i := 0; i < 250 && syscall.Kill(p.Process.Pid, 0) == nil && p.ProcessState == nil; i++ {
		time.Sleep(20 * time.Millisecond)
	}
}

// Leader returns the controller that leads now ("" when none does):
// the one whose own socket answers without naming another as leader.
func (c *Cluster) Leader() string {
	for _, name := range c.ControllerNames() {
		code, h := c.ctlPing(name, time.Second)
		if code == http.StatusOK && h.Get(droverapi.LeaderHeader) == "" {
			return name
		}
	}
	return ""
}

// WaitLeader waits until a controller leads and returns it.
func (c *Cluster) WaitLeader(timeout time.Duration) string {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if l := c.Leader(); l != "" {
			return l
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("no controller leads after %v", timeout)
	return ""
}

// ctlPing asks one controller's socket for the partitions: its own
// answer when it leads, the leader's (with X-Drover-Leader) when not.
func (c *Cluster) ctlPing(name string, timeout time.Duration) (int, http.Header) {
	sock := c.ctlSocket(name)
	cl := &http.Client{Timeout: timeout, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	// Not the ping, which every controller answers itself: a request
	// a follower forwards, naming the leader.
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://localhost/slurm/v0.0.44/partitions/", nil)
	resp, err := cl.Do(req)
	if err != nil {
		return 0, nil
	}
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// Partition cuts the network between the hosts of a and those of b
// (both ways), as a failed link between two racks would; the hosts on
// either side still reach everyone else. Heal undoes every cut.
func (c *Cluster) Partition(a, b []string) {
	c.t.Helper()
	for _, x := range a {
		for _, y := range b {
			c.Host(x).Run("ip", "route", "add", "blackhole", c.Host(y).Addr+"/32")
			c.Host(y).Run("ip", "route", "add", "blackhole", c.Host(x).Addr+"/32")
		}
	}
}

// Heal removes every cut Partition made.
func (c *Cluster) Heal() {
	c.t.Helper()
	for _, h := range c.hosts {
		out := h.Run("ip", "route", "show", "type", "blackhole")
		for _, line := range lines(out) {
			if f := strings.Fields(line); len(f) >= 2 {
				h.Run("ip", "route", "del", "blackhole", f[1])
			}
		}
	}
}

// TestReplicatedControllersEndToEnd: three controllers, two nodes on
// hosts of their own; the leader is killed with SIGKILL while a job
// runs: the job runs on to the end, a new leader takes submissions
// within seconds, and the commands on the login host never notice
// which controller answers.
func TestReplicatedControllersEndToEnd(t *testing.T) {
	t.Parallel()
	for _, tls := range []bool{false, true} {
		t.Run(fmt.Sprintf("tls=%v", tls), func(t *testing.T) { testReplicatedEndToEnd(t, tls) })
	}
}

// testReplicatedEndToEnd is TestReplicatedControllersEndToEnd, with
// TLSType=tls/s2n or without: raft's connections and the followers'
// forwarding then go over TLS too.
func testReplicatedEndToEnd(t *testing.T, tls bool) {
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, Controllers: 3, TLS: tls,
		Extra: "SlurmctldTimeout=10\nAccountingStorageType=accounting_storage/none\n"})
	c.daemonOn("login", "sackd", "sackd", "--conf", c.Conf)
	waitSack(t, c, "login")
	run := func(prog string, args ...string) Result {
		t.Helper()
		return c.RunOn("login", nil, nil, "", prog, args...)
	}
	leader := c.WaitLeader(20 * time.Second)
	// A job that makes step after step (srun asks the controller for
	// each and reports its end) through the failover: none fails.
	out := filepath.Join(t.TempDir(), "steps.out")
	if err := os.Chmod(filepath.Dir(out), 0o777); err != nil {
		t.Fatal(err)
	}
	r := run("sbatch", "--parsable", "-o", out, "--wrap", "for i in $(seq 25); do srun -n1 true || exit 1; sleep 0.2; done")
	if r.Code != 0 {
		t.Fatalf("sbatch: %+v", r)
	}
	running := strings.TrimSpace(r.Stdout)
	c.WaitState(running, "RUNNING", 20*time.Second)
	time.Sleep(time.Second)
	c.SignalCtl(leader, syscall.SIGKILL)
	killed := time.Now()
	r = run("sbatch", "--parsable", "-o", "/dev/null", "--wrap", "true")
	if r.Code != 0 {
		t.Fatalf("sbatch after the leader was killed: %+v", r)
	}
	t.Logf("%s killed; sbatch on the login host answered after %v (job %s)", leader, time.Since(killed), strings.TrimSpace(r.Stdout))
	next := c.WaitLeader(10 * time.Second)
	if next == leader {
		t.Fatalf("%s still leads after SIGKILL", leader)
	}
	// The job that ran through the failover ends as it would have.
	for deadline := time.Now().Add(60 * time.Second); c.State(running) != "COMPLETED"; time.Sleep(100 * time.Millisecond) {
		if st := c.State(running); st == "FAILED" || time.Now().After(deadline) {
			b, _ := os.ReadFile(out)
			t.Fatalf("job %s making steps through the failover: %s; its output:\n%s", running, st, b)
		}
	}
	if b, _ := os.ReadFile(out); strings.Contains(string(b), "error") {
		t.Errorf("srun's output through the failover:\n%s", b)
	}
	c.WaitState(strings.TrimSpace(r.Stdout), "COMPLETED", 30*time.Second)
	// The old leader returns as a follower.
	c.StartCtl(leader)
	if r := run("squeue", "-h", "-o", "%i"); r.Code != 0 {
		t.Fatalf("squeue: %+v", r)
	}
	time.Sleep(time.Second)
	if l := c.Leader(); l != next {
		t.Errorf("leadership moved from %s to %s when %s returned", next, l, leader)
	}
}

// TestReplicatedControllersAccounting: the accounting records of jobs
// that ran across a leader's SIGKILL are in PostgreSQL once each, as
// sacct on the login host shows, whichever controller wrote them.
func TestReplicatedControllersAccounting(t *testing.T) {
	t.Parallel()
	pg, err := testutil.StartPostgres()
	if err != nil {
		t.Skipf("PostgreSQL is not installed here: %v", err)
	}
	t.Cleanup(pg.Stop)
	if _, err := pg.Database("slurm_acct_db"); err != nil {
		t.Fatal(err)
	}
	// The controllers' hosts share the file system, not loopback: the
	// server's socket folder is its address for them.
	conf := fmt.Sprintf("AccountingStorageType=accounting_storage/pgsql\nAccountingStorageHost=%s\nAccountingStoragePort=%d\nAccountingStorageUser=%s\nAccountingStoragePass=%s\nSlurmctldTimeout=10\n",
		pg.SocketDir, pg.Port, pg.User, pg.Password)
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 2, Controllers: 3, Extra: conf})
	c.daemonOn("login", "sackd", "sackd", "--conf", c.Conf)
	waitSack(t, c, "login")
	var ids []string
	for i := 0; i < 6; i++ {
		r := c.RunOn("login", nil, nil, "", "sbatch", "--parsable", "-J", fmt.Sprintf("acct%d", i), "-o", "/dev/null", "--wrap", "sleep 3")
		if r.Code != 0 {
			t.Fatalf("sbatch: %+v", r)
		}
		ids = append(ids, strings.TrimSpace(r.Stdout))
	}
	c.WaitState(ids[0], "RUNNING", 20*time.Second)
	c.SignalCtl(c.WaitLeader(20*time.Second), syscall.SIGKILL)
	for _, id := range ids {
		c.WaitState(id, "COMPLETED", 60*time.Second)
	}
	want := ""
	for i, id := range ids {
		want += fmt.Sprintf("%s|acct%d|COMPLETED\n", id, i)
	}
	want = strings.Join(sortedLines(want), "\n") + "\n"
	var got string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		r := c.RunOn("login", nil, nil, "", "sacct", "-X", "-n", "-P", "-o", "JobID,JobName,State", "-S", "now-1hour")
		if got = strings.Join(sortedLines(r.Stdout), "\n") + "\n"; got == want {
			return
		}
	}
	t.Fatalf("sacct after the failover:\n%s\nwant each job once:\n%s", got, want)
}
