// Package e2e runs Drover as users run it: the real drover binary started
// as a controller and node daemons in their own processes, driven by the
// drop-in commands (the same binary under Slurm's names).
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/testutil"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

var (
	droverBin string
	binDir    string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "drover-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	droverBin = filepath.Join(dir, "drover")
	// Built as `make build` and the packages build them (Makefile):
	// the same flags share go's cache, where other flags would compile
	// the whole tree once more.
	build := func(cgo, pie bool, out string, args ...string) error {
		flags := []string{"build", "-trimpath"}
		if pie {
			flags = append(flags, "-buildmode=pie")
		}
		env := []string{"CGO_ENABLED=0"}
		if cgo {
			env = []string{"CGO_ENABLED=1", "CGO_CFLAGS=-O2 -g -Wno-deprecated-declarations"}
		}
		b := exec.Command("go", append(append(flags, "-o", out), args...)...)
		b.Env = append(os.Environ(), env...)
		b.Stdout, b.Stderr = os.Stderr, os.Stderr
		return b.Run()
	}
	if err := build(false, true, droverBin, "github.com/droverhq/drover/cmd/drover"); err != nil {
		fmt.Fprintln(os.Stderr, "build drover:", err)
		os.Exit(1)
	}
	// The commands' own programs (what install-shims links), the NCCL
	// launch plugin and the example third-party plugin sit beside
	// drover, where the node daemons look for plugins; allreduce
	// is the distributed program the NCCL plugin serves.
	if err := build(false, false, dir+string(filepath.Separator), "github.com/droverhq/drover/cmd/commands/..."); err != nil {
		fmt.Fprintln(os.Stderr, "build the commands:", err)
		os.Exit(1)
	}
	for _, pkg := range []string{"github.com/droverhq/drover/cmd/drover-spank-nccl", "github.com/droverhq/drover/examples/spank-hello", "github.com/droverhq/drover/examples/job-submit-limits", "github.com/droverhq/drover/cmd/drover-spank-container", "./testdata/allreduce", "./testdata/spanklocal", "./testdata/attacker"} {
		if err := build(false, true, filepath.Join(dir, filepath.Base(pkg)), pkg); err != nil {
			fmt.Fprintln(os.Stderr, "build", pkg+":", err)
			os.Exit(1)
		}
	}
	if err := build(true, true, filepath.Join(dir, "drover-gres-nvml"), "github.com/droverhq/drover/cmd/drover-gres-nvml"); err != nil {
		// Without a C compiler the GPU tests use gres.conf devices.
		fmt.Fprintln(os.Stderr, "build drover-gres-nvml (GPU detection tests will use gres.conf):", err)
	}
	if err := build(true, true, filepath.Join(dir, "drover-mpi-pmix"), "-tags", "pmix", "github.com/droverhq/drover/cmd/drover-mpi-pmix"); err != nil {
		// Without libpmix-dev the PMIx tests skip.
		fmt.Fprintln(os.Stderr, "build drover-mpi-pmix (PMIx tests will skip):", err)
	}
	// The commands cache what plugins offer per user: the tests keep
	// theirs apart from the machine's. (Set after the builds: go's own
	// build cache lives under XDG_CACHE_HOME too.)
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	if out, err := exec.Command(droverBin, "install-shims", filepath.Join(dir, "shims")).CombinedOutput(); err != nil {
		fmt.Fprintln(os.Stderr, "install shims:", err, string(out))
		os.Exit(1)
	}
	// What the tests start (daemons, their plugins, jobs, MPI's session
	// folders) keeps its temporary files in a folder of this run's,
	// removed at its end: a daemon killed on purpose cannot clean up
	// after itself. Open to every user, as /tmp is, for jobs of others.
	tmp, err := os.MkdirTemp("", "drover-e2e-tmp-")
	if err == nil {
		err = os.Chmod(tmp, 0o1777)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "temporary folder:", err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	testutil.RemoveCgroupRoots()
	os.RemoveAll(dir)
	os.RemoveAll(tmp)
	os.Exit(code)
}

// ClusterOptions shape a test cluster.
type ClusterOptions struct {
	Nodes int
	CPUs  int
	GPUs  int
	// NVML makes the nodes detect mock GPUs through drover-gres-nvml.
	NVML bool
	// Extra is appended to slurm.conf.
	Extra string
	// Topology, when set, is written as topology.conf.
	Topology string
	// PlugStack, when set, is written as plugstack.conf.
	PlugStack string
	// GresConf, when set, is gres.conf instead of the one GPUs and NVML
	// make; CgroupConf is written as cgroup.conf.
	GresConf, CgroupConf string
	// NodeArgs are extra arguments for a node daemon.
	NodeArgs func(name string) []string
	// JWT turns auth/jwt on, its key beside slurm.conf.
	JWT bool
	// TLS turns TLSType=tls/s2n on, with a test CA's certificates for
	// the controller, the nodes and restd beside slurm.conf.
	TLS bool
	// Hosts puts the controller, each node and a login host on test
	// hosts of their own (network namespaces joined by a bridge,
	// testutil.Net): ctl at 10.200.0.1, node nI at 10.200.0.1I, login at
	// 10.200.0.100. Commands then run on a host (RunOn).
	Hosts bool
	// Prepare, when set, runs before the daemons start (its clean-ups
	// run after they stop).
	Prepare func(c *Cluster)
	// Controllers, above 1, replicates the controller: ctl1..ctlN on
	// hosts of their own (10.200.0.1..N, Hosts implied), each with its
	// own state folder, listed in order as SlurmctldHost lines.
	Controllers int
}

// Cluster is a running controller and node daemons.
type Cluster struct {
	t testing.TB
	// Name is the cluster's ClusterName, unique per test cluster so that
	// clusters running side by side keep apart (cgroups, logs).
	Name     string
	Dir      string
	Conf     string
	CtlPort  int
	ctl      *exec.Cmd
	nodes    map[string]*exec.Cmd
	mu       sync.Mutex
	opts     ClusterOptions
	WorkDir  string
	shimPath string
	// net and hosts are the test hosts of a Hosts cluster: "ctl",
	// "login" and each node by its name.
	net   *testutil.Net
	hosts map[string]*testutil.Host
	// hostDaemon says which host runs a daemon that is not named after
	// it (daemonOn).
	hostDaemon map[string]string
	// ports are the controller's port, then each node's.
	ports []int
}

// NewCluster writes a configuration and starts the daemons; everything
// is stopped when the test ends.
func NewCluster(t testing.TB, o ClusterOptions) *Cluster {
	t.Helper()
	if o.Nodes == 0 {
		o.Nodes = 2
	}
	if o.CPUs == 0 {
		o.CPUs = 8
	}
	if o.Controllers > 1 {
		o.Hosts = true
	}
	dir := t.TempDir()
	c := &Cluster{t: t, Dir: dir, nodes: map[string]*exec.Cmd{}, opts: o, shimPath: filepath.Join(binDir, "shims"), hostDaemon: map[string]string{}}
	if o.Hosts {
		c.makeHosts()
		dir = c.Dir
	}
	c.WorkDir = filepath.Join(dir, "work")
	must(t, os.MkdirAll(c.WorkDir, 0o755))
	ports := freePorts(t, o.Nodes+1)
	c.ports = ports
	c.CtlPort = ports[0]
	c.Name = "e2e" + strconv.Itoa(ports[0])
	var b strings.Builder
	ctlHost, nodeAddr := "localhost(127.0.0.1)", func(int) string { return "127.0.0.1" }
	if o.Hosts {
		ctlHost, nodeAddr = "ctl("+c.hosts[c.ControllerNames()[0]].Addr+")", func(i int) string { return c.hosts["n"+strconv.Itoa(i)].Addr }
		b.WriteString("SrunPortRange=60001-60999\n")
	}
	if o.Controllers > 1 {
		var hosts []string
		for _, name := range c.ControllerNames() {
			hosts = append(hosts, name+"("+c.hosts[name].Addr+")")
		}
		ctlHost = strings.Join(hosts, "\nSlurmctldHost=")
	}
	fmt.Fprintf(&b, "ClusterName=%s\nSlurmctldHost=%s\nSlurmctldPort=%d\n", c.Name, ctlHost, ports[0])
	fmt.Fprintf(&b, "StateSaveLocation=%s/state\nSlurmdSpoolDir=%s/spool/%%n\n", dir, dir)
	// Requeued jobs wait cred_expire+1 s to start again: 2 s here.
	b.WriteString("SlurmdTimeout=10\nKillWait=2\nMinJobAge=300\nReturnToService=2\nDefMemPerCPU=100\nAuthInfo=cred_expire=1\n")
	for i := 1; i <= o.Nodes; i++ {
		fmt.Fprintf(&b, "NodeName=n%d NodeAddr=%s Port=%d CPUs=%d RealMemory=%d", i, nodeAddr(i), ports[i], o.CPUs, 1000*o.CPUs)
		if o.GPUs > 0 {
			fmt.Fprintf(&b, " Gres=gpu:%d", o.GPUs)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "PartitionName=batch Nodes=n[1-%d] Default=YES MaxTime=INFINITE State=UP\n", o.Nodes)
	fmt.Fprintf(&b, "PartitionName=short Nodes=n1 MaxTime=30 DefaultTime=5 State=UP\n")
	if o.JWT {
		fmt.Fprintf(&b, "AuthAltTypes=auth/jwt\nAuthAltParameters=jwt_key=%s/etc/jwt_hs256.key\n", dir)
	}
	if o.TLS {
		b.WriteString("TLSType=tls/s2n\n")
	}
	b.WriteString(o.Extra)
	must(t, os.MkdirAll(filepath.Join(dir, "etc"), 0o755))
	c.Conf = filepath.Join(dir, "etc", "slurm.conf")
	must(t, os.WriteFile(c.Conf, []byte(b.String()), 0o644))
	must(t, clusterkey.WriteKey(clusterkey.KeyPath(c.Conf)))
	if o.JWT {
		must(t, clusterkey.WriteKey(filepath.Join(dir, "etc", "jwt_hs256.key")))
	}
	if o.TLS {
		ctl, nodes, rest := []string{"127.0.0.1", "localhost"}, []string{"127.0.0.1"}, []string{"127.0.0.1"}
		if o.Hosts {
			for _, name := range c.ControllerNames() {
				ctl = append(ctl, name, c.hosts[name].Addr)
			}
			rest = append(rest, c.hosts["rest"].Addr)
			for i := 1; i <= o.Nodes; i++ {
				nodes = append(nodes, nodeAddr(i))
			}
		}
		testutil.WriteCerts(t, filepath.Join(dir, "etc"), map[string][]string{"ctld": ctl, "slurmd": nodes, "restd": rest})
	}
	gres := ""
	if o.GPUs > 0 {
		if o.NVML {
			gres = "AutoDetect=nvml\n"
		} else {
			gres = fmt.Sprintf("Name=gpu File=/dev/nvidia[0-%d]\n", o.GPUs-1)
		}
	}
	if o.GresConf != "" {
		gres = o.GresConf
	}
	must(t, os.WriteFile(filepath.Join(dir, "etc", "gres.conf"), []byte(gres), 0o644))
	if o.CgroupConf != "" {
		must(t, os.WriteFile(filepath.Join(dir, "etc", "cgroup.conf"), []byte(o.CgroupConf), 0o644))
	}
	if o.Topology != "" {
		must(t, os.WriteFile(filepath.Join(dir, "etc", "topology.conf"), []byte(o.Topology), 0o644))
	}
	if o.PlugStack != "" {
		must(t, os.WriteFile(filepath.Join(dir, "etc", "plugstack.conf"), []byte(o.PlugStack), 0o644))
	}

	if o.Prepare != nil {
		o.Prepare(c)
	}
	// Registered first: a cluster that fails to come up is stopped too.
	t.Cleanup(c.Stop)
	c.StartController()
	for i := 1; i <= o.Nodes; i++ {
		c.StartNode("n" + strconv.Itoa(i))
	}
	c.WaitNodesUp()
	return c
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// freePorts hands out ports for daemons to listen on: below the
// kernel's ephemeral range (32768 and up by default), so that no
// outgoing connection of a test running beside takes one as its local
// port between now and the daemon's bind, and never the same twice in
// this test process. Each is checked free on every address.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	var out []int
	for tries := 0; len(out) < n; tries++ {
		if tries > 10000 {
			t.Fatal("no free port in 20000-32767")
		}
		p := 20000 + rand.IntN(12768)
		if portsUsed[p] {
			continue
		}
		l, err := net.Listen("tcp", ":"+strconv.Itoa(p))
		if err != nil {
			continue
		}
		l.Close()
		portsUsed[p] = true
		out = append(out, p)
	}
	return out
}

var (
	portsMu   sync.Mutex
	portsUsed = map[int]bool{}
)

func (c *Cluster) daemon(name string, args ...string) *exec.Cmd {
	logPath := filepath.Join(c.Dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	must(c.t, err)
	cmd := exec.Command(droverBin, args...)
	host := name
	if host == "controller" {
		host = "ctl"
	}
	if h, ok := c.hostDaemon[name]; ok {
		host = h
	}
	if h := c.hosts[host]; h != nil {
		cmd = h.Command(droverBin, args...)
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.Conf)
	cmd.Stdout, cmd.Stderr = f, f
	must(c.t, cmd.Start())
	go func() {
		err := cmd.Wait()
		fmt.Fprintf(f, "harness: %s exited: %v\n", name, err)
		f.Close()
	}()
	return cmd
}

// StartController starts (or restarts) the controller process, or every
// replicated controller.
func (c *Cluster) StartController() {
	if c.opts.Controllers > 1 {
		for _, name := range c.ControllerNames() {
			c.StartCtl(name)
		}
		c.waitSocket()
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctl = c.daemon("controller", "controller", "--conf", c.Conf)
	if c.opts.Hosts {
		// Its port is on another host; its socket is on the shared
		// file system.
		c.waitSocket()
		return
	}
	c.waitPort(c.CtlPort)
}

// KillController kills the controller with SIGKILL.
func (c *Cluster) KillController() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctl != nil && c.ctl.Process != nil {
		_ = c.ctl.Process.Signal(syscall.SIGKILL)
		for i := 0; i < 100; i++ {
			if c.ctl.ProcessState != nil || syscall.Kill(c.ctl.Process.Pid, 0) != nil {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// StartNode starts a node daemon.
func (c *Cluster) StartNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	args := []string{"node", "--conf", c.Conf, "--name", name}
	if c.opts.NVML {
		args = append(args, "--nvml-mock", "dgxa100", "--gres-nvml", filepath.Join(binDir, "drover-gres-nvml"))
	}
	if c.opts.NodeArgs != nil {
		args = append(args, c.opts.NodeArgs(name)...)
	}
	c.nodes[name] = c.daemon(name, args...)
}

// SignalNode sends a node daemon sig.
func (c *Cluster) SignalNode(name string, sig syscall.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cmd := c.nodes[name]; cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}

// KillNode kills a node daemon with SIGKILL.
func (c *Cluster) KillNode(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cmd := c.nodes[name]; cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Signal(syscall.SIGKILL)
	}
}

// Stop ends every daemon and shows their logs when the test failed.
func (c *Cluster) Stop() {
	c.mu.Lock()
	procs := []*exec.Cmd{c.ctl}
	for _, n := range c.nodes {
		procs = append(procs, n)
	}
	c.mu.Unlock()
	for _, p := range procs {
		if p != nil && p.Process != nil {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range procs {
		for p != nil && p.Process != nil && time.Now().Before(deadline) && syscall.Kill(p.Process.Pid, 0) == nil && p.ProcessState == nil {
			time.Sleep(20 * time.Millisecond)
		}
		if p != nil && p.Process != nil {
			_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
		}
	}
	testutil.ThawCgroups(c.Name)
	testutil.KillJobProcesses(c.Conf)
	defer testutil.RemoveCgroups(c.Name)
	if c.t.Failed() {
		logs, _ := filepath.Glob(filepath.Join(c.Dir, "*.log"))
		for _, l := range logs {
			data, _ := os.ReadFile(l)
			if len(data) > 8000 {
				data = data[len(data)-8000:]
			}
			c.t.Logf("==== %s ====\n%s", filepath.Base(l), data)
		}
	}
}

func (c *Cluster) waitSocket() {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := c.liveSocket(); ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("no controller answers on its socket")
}

// socket is the unix socket of the controller (of the first that
// answers, when they are replicated: the others forward to the leader).
func (c *Cluster) socket() string {
	sock, _ := c.liveSocket()
	return sock
}

func (c *Cluster) liveSocket() (string, bool) {
	socks := []string{filepath.Join(c.Dir, "state", "drover.sock")}
	if c.opts.Controllers > 1 {
		socks = socks[:0]
		for _, name := range c.ControllerNames() {
			socks = append(socks, c.ctlSocket(name))
		}
	}
	for _, sock := range socks {
		if conn, err := net.DialTimeout("unix", sock, 200*time.Millisecond); err == nil {
			conn.Close()
			return sock, true
		}
	}
	return socks[0], false
}

func (c *Cluster) waitPort(port int) {
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("nothing listens on port %d", port)
}

// Result is a command's outcome.
type Result struct {
	Stdout, Stderr string
	Code           int
}

// Run runs a drop-in command (sbatch, squeue...) against the cluster.
func (c *Cluster) Run(stdin string, prog string, args ...string) Result {
	c.t.Helper()
	return c.RunEnv(nil, stdin, prog, args...)
}

// RunEnv is Run with extra environment variables.
func (c *Cluster) RunEnv(env []string, stdin string, prog string, args ...string) Result {
	c.t.Helper()
	if c.opts.Hosts {
		// Root on the controller's host.
		return c.RunOn("ctl", nil, env, stdin, prog, args...)
	}
	cmd := exec.Command(filepath.Join(c.shimPath, prog), args...)
	cmd.Dir = c.WorkDir
	cmd.Env = append(append(os.Environ(), "SLURM_CONF="+c.Conf, "PATH="+c.shimPath+":"+os.Getenv("PATH")), env...)
	cmd.Stdin = strings.NewReader(stdin)
	return runCmd(c.t, cmd)
}

// runCmd runs a command to its end and returns what it printed and its
// exit status; a command that could not run at all fails the test.
func runCmd(t testing.TB, cmd *exec.Cmd) Result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %s: %v", cmd.Path, err)
	}
	return Result{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// MustRun runs a command that must succeed.
func (c *Cluster) MustRun(stdin, prog string, args ...string) string {
	c.t.Helper()
	r := c.Run(stdin, prog, args...)
	if r.Code != 0 {
		c.t.Fatalf("%s %v: exit %d\nstdout: %s\nstderr: %s", prog, args, r.Code, r.Stdout, r.Stderr)
	}
	return r.Stdout
}

// Submit submits with sbatch --parsable and returns the job id.
func (c *Cluster) Submit(stdin string, args ...string) string {
	c.t.Helper()
	out := c.MustRun(stdin, "sbatch", append([]string{"--parsable"}, args...)...)
	return strings.TrimSpace(out)
}

// Client returns a REST client to the controller.
func (c *Cluster) Client() *v0044.Client {
	c.t.Helper()
	cl, err := connect.Client(connect.Target{Socket: c.socket()}, "root")
	must(c.t, err)
	return cl
}

// SocketClient is an HTTP client of the controller's unix socket, where
// the kernel says who asks (root, here): requests go to http://localhost.
func (c *Cluster) SocketClient() *http.Client {
	sock := c.socket()
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
}

// Job fetches a job record over REST (nil if unknown).
func (c *Cluster) Job(id string) *v0044.V0044JobInfo {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := c.Client().SlurmV0044GetJob(ctx, v0044.SlurmV0044GetJobParams{JobID: id})
	if err != nil {
		return nil
	}
	if r, ok := res.(*v0044.V0044OpenapiJobInfoResp); ok && len(r.Jobs) > 0 {
		return &r.Jobs[len(r.Jobs)-1]
	}
	return nil
}

// State returns a job's state list joined by "+" ("" if unknown).
func (c *Cluster) State(id string) string {
	j := c.Job(id)
	if j == nil {
		return ""
	}
	var s []string
	for _, st := range j.JobState {
		s = append(s, string(st))
	}
	return strings.Join(s, "+")
}

// WaitState polls until the job reaches state, or fails the test.
func (c *Cluster) WaitState(id, state string, timeout time.Duration) *v0044.V0044JobInfo {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if last = c.State(id); last == state {
			return c.Job(id)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("job %s: state %q after %v, want %q", id, last, timeout, state)
	return nil
}

// WaitNodesUp waits until every node registered.
func (c *Cluster) WaitNodesUp() {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := c.Client().SlurmV0044GetNodes(ctx, v0044.SlurmV0044GetNodesParams{})
		cancel()
		if err == nil {
			if r, ok := res.(*v0044.V0044OpenapiNodesResp); ok {
				up := 0
				for _, n := range r.Nodes {
					if len(n.State) > 0 && n.State[0] != "UNKNOWN" && n.State[0] != "DOWN" {
						up++
					}
				}
				if up == c.opts.Nodes {
					return
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("nodes did not all register within 30s")
}

// ReadFile reads a file under the work folder, waiting for it to appear.
func (c *Cluster) ReadFile(name string) string {
	c.t.Helper()
	path := name
	if !filepath.IsAbs(name) {
		path = filepath.Join(c.WorkDir, name)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		c.t.Fatalf("read %s: %v", path, err)
	}
	return string(data)
}

// WaitFile waits until a file (relative to the work folder) exists.
func (c *Cluster) WaitFile(name string, timeout time.Duration) {
	c.t.Helper()
	path := name
	if !filepath.IsAbs(name) {
		path = filepath.Join(c.WorkDir, name)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	c.t.Fatalf("%s did not appear within %v", path, timeout)
}
