package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/testutil"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// cluster is a Drover cluster as users run it: one `drover controller`
// process (or several replicated ones) and one `drover node` process per
// node, each in its own process group, with a slurm.conf shaped like
// `drover dev`'s (the harness of test/e2e, returning errors instead of
// failing a test).
type cluster struct {
	dir  string
	conf string
	// socket is the controller's unix socket: the leader's when
	// replicated.
	socket string
	// ctlAddr is the address the controller listens on (the leader's
	// when replicated), at ctlPort.
	ctlAddr string
	ctlPort int
	nodes   int
	drover  string
	shims   string
	workDir string
	// ctl is the controller process: the leader when replicated.
	ctl  *exec.Cmd
	node []*exec.Cmd
	// ctls are the replicated controllers, in SlurmctldHost order (none
	// for a single controller).
	ctls []*replica
	// pprofAddr is where the controller serves /debug/pprof/ ("" if not).
	pprofAddr string
	// jwtKey is auth/jwt's key file.
	jwtKey string
}

// clusterOptions shape a bench cluster.
type clusterOptions struct {
	// Nodes and CPUs per node; the dev cluster's 4 x 8 by default.
	Nodes, CPUs int
	// Env is added to the controller's environment (GODEBUG settings,
	// say, when investigating).
	Env []string
	// NoCgroups runs the node daemons with --no-cgroups.
	NoCgroups bool
	// Pprof serves the controller's profiler (--pprof-listen) on a free
	// loopback port, for heap readings and profiles of the real process.
	Pprof bool
	// PlugStack is written as plugstack.conf when set.
	PlugStack string
	// NoAccounting sets AccountingStorageType=accounting_storage/none.
	NoAccounting bool
	// Controllers, above 1, replicates the controller: ctl1..ctlN on
	// 127.0.0.1..N (loopback is a /8 on Linux) and one port, each with
	// its own state folder and socket, and accounting_storage/none
	// (replicated controllers refuse the embedded store). 0 or 1: the
	// single controller of `drover dev`.
	Controllers int
}

// replica is one of several replicated controllers.
type replica struct {
	name, addr, socket, pprofAddr string
	cmd                           *exec.Cmd
}

// startCluster writes a dev-like slurm.conf under dir and starts the
// daemons; it returns once every node has registered.
func startCluster(dir, drover, shims string, o clusterOptions) (*cluster, error) {
	if o.Nodes == 0 {
		o.Nodes = 4
	}
	if o.CPUs == 0 {
		o.CPUs = 8
	}
	c := &cluster{dir: dir, drover: drover, shims: shims, nodes: o.Nodes, workDir: filepath.Join(dir, "work")}
	for _, d := range []string{"etc", "state", "work", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("create cluster folder: %w", err)
		}
	}
	ports, err := freePorts(o.Nodes + 1 + max(o.Controllers, 1))
	if err != nil {
		return nil, err
	}
	c.ctlPort, c.ctlAddr = ports[0], "127.0.0.1"
	c.socket = filepath.Join(dir, "state", "drover.sock")
	ctlHosts := "localhost(127.0.0.1)"
	if o.Controllers > 1 {
		// Each controller has a folder of its own, as on hosts of their
		// own; they share slurm.conf and the cluster key.
		var hosts []string
		for i := 1; i <= o.Controllers; i++ {
			r := &replica{name: "ctl" + strconv.Itoa(i), addr: "127.0.0." + strconv.Itoa(i)}
			r.socket = filepath.Join(dir, "state-"+r.name, "drover.sock")
			if o.Pprof {
				r.pprofAddr = "127.0.0.1:" + strconv.Itoa(ports[o.Nodes+i])
			}
			c.ctls = append(c.ctls, r)
			hosts = append(hosts, r.name+"("+r.addr+")")
		}
		ctlHosts = strings.Join(hosts, "\nSlurmctldHost=")
		o.NoAccounting = true
	}
	// The same settings as `drover dev` writes (internal/devcluster),
	// without GPUs: the jobs measured here ask for none.
	var b strings.Builder
	fmt.Fprintf(&b, "ClusterName=bench%d\nSlurmctldHost=%s\nSlurmctldPort=%d\n", ports[0], ctlHosts, ports[0])
	fmt.Fprintf(&b, "StateSaveLocation=%s/state\nSlurmdSpoolDir=%s/spool/%%n\n", dir, dir)
	b.WriteString("SlurmdTimeout=30\nKillWait=5\nMinJobAge=300\nReturnToService=2\n")
	// auth/jwt as drover dev has it, for the JWT submission figure.
	c.jwtKey = filepath.Join(dir, "state", "jwt_hs256.key")
	b.WriteString("AuthAltTypes=auth/jwt\n")
	if len(c.ctls) > 0 {
		// The default key is in StateSaveLocation, which --state-dir
		// moves for each controller: all read the one key.
		fmt.Fprintf(&b, "AuthAltParameters=jwt_key=%s\n", c.jwtKey)
	}
	// The queue figure times a Prometheus scrape too.
	b.WriteString("MetricsType=metrics/openmetrics\n")
	if o.NoAccounting {
		b.WriteString("AccountingStorageType=accounting_storage/none\n")
	}
	b.WriteString("SelectType=select/cons_tres\nSelectTypeParameters=CR_Core_Memory\nDefMemPerCPU=1000\n")
	for i := 1; i <= o.Nodes; i++ {
		fmt.Fprintf(&b, "NodeName=n%d NodeAddr=127.0.0.1 Port=%d CPUs=%d RealMemory=%d State=UNKNOWN\n", i, ports[i], o.CPUs, 2000*o.CPUs)
	}
	fmt.Fprintf(&b, "PartitionName=gpu Nodes=n[1-%d] Default=YES MaxTime=INFINITE State=UP\n", o.Nodes)
	c.conf = filepath.Join(dir, "etc", "slurm.conf")
	if err := os.WriteFile(c.conf, []byte(b.String()), 0o644); err != nil {
		return nil, fmt.Errorf("write slurm.conf: %w", err)
	}
	if err := clusterkey.WriteKey(clusterkey.KeyPath(c.conf)); err != nil {
		return nil, fmt.Errorf("write the cluster key: %w", err)
	}
	if err := clusterkey.WriteKey(c.jwtKey); err != nil {
		return nil, fmt.Errorf("write the auth/jwt key: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "gres.conf"), nil, 0o644); err != nil {
		return nil, fmt.Errorf("write gres.conf: %w", err)
	}
	if o.PlugStack != "" {
		if err := os.WriteFile(filepath.Join(dir, "etc", "plugstack.conf"), []byte(o.PlugStack), 0o644); err != nil {
			return nil, fmt.Errorf("write plugstack.conf: %w", err)
		}
	}
	if len(c.ctls) > 0 {
		if err := c.startReplicas(o.Env); err != nil {
			c.stop()
			return nil, err
		}
	} else {
		ctlArgs := []string{"controller", "--conf", c.conf}
		if o.Pprof {
			c.pprofAddr = "127.0.0.1:" + strconv.Itoa(ports[o.Nodes+1])
			ctlArgs = append(ctlArgs, "--pprof-listen", c.pprofAddr)
		}
		if c.ctl, err = c.daemon("controller", o.Env, ctlArgs...); err != nil {
			return nil, err
		}
		if err := waitPort(c.ctlPort, 20*time.Second); err != nil {
			c.stop()
			return nil, err
		}
	}
	for i := 1; i <= o.Nodes; i++ {
		name := "n" + strconv.Itoa(i)
		args := []string{"node", "--conf", c.conf, "--name", name}
		if o.NoCgroups {
			args = append(args, "--no-cgroups")
		}
		cmd, err := c.daemon(name, nil, args...)
		if err != nil {
			c.stop()
			return nil, err
		}
		c.node = append(c.node, cmd)
	}
	if err := c.waitNodesUp(30 * time.Second); err != nil {
		c.stop()
		return nil, err
	}
	return c, nil
}

func (c *cluster) daemon(name string, env []string, args ...string) (*exec.Cmd, error) {
	f, err := os.OpenFile(filepath.Join(c.dir, "log", name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s log: %w", name, err)
	}
	cmd := exec.Command(c.drover, args...)
	cmd.Env = append(append(os.Environ(), "SLURM_CONF="+c.conf), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); f.Close() }()
	return cmd, nil
}

// startReplicas starts every replicated controller and waits until one
// leads and every other answers (forwarding to it); the leader's socket,
// address and profiler become the cluster's.
func (c *cluster) startReplicas(env []string) error {
	for _, r := range c.ctls {
		args := []string{"controller", "--conf", c.conf, "--name", r.name,
			"--state-dir", filepath.Dir(r.socket), "--socket", r.socket}
		if r.pprofAddr != "" {
			args = append(args, "--pprof-listen", r.pprofAddr)
		}
		cmd, err := c.daemon(r.name, env, args...)
		if err != nil {
			return err
		}
		r.cmd = cmd
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if l := c.replicaLeader(); l != nil {
			c.ctl, c.socket, c.ctlAddr, c.pprofAddr = l.cmd, l.socket, l.addr, l.pprofAddr
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no controller of %d leads, or not all answer, after 60 s (logs in %s)", len(c.ctls), filepath.Join(c.dir, "log"))
}

// replicaLeader returns the controller that leads once every controller
// answers: the one whose answer names no leader (X-Drover-Leader), as a
// follower's forwarded answer does. nil until then.
func (c *cluster) replicaLeader() *replica {
	var leader *replica
	for _, r := range c.ctls {
		leads, ok := pingReplica(r.socket)
		if !ok {
			return nil
		}
		if leads {
			if leader != nil {
				return nil // two claim to lead: an election under way
			}
			leader = r
		}
	}
	return leader
}

// pingReplica asks a controller's socket for the partitions: whether it
// answered, and whether it answered as the leader. Not the REST ping,
// which a controller may answer itself whether it leads or not: a
// request every follower forwards.
func pingReplica(socket string) (leads, ok bool) {
	hc := &http.Client{Timeout: time.Second, Transport: &http.Transport{DialContext: dialUnix(socket)}}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://localhost/slurm/v0.0.44/partitions/")
	if err != nil {
		return false, false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, false
	}
	return resp.Header.Get(droverapi.LeaderHeader) == "", true
}

// follower is a controller that does not lead (nil for a single
// controller): its clients' requests are forwarded to the leader.
func (c *cluster) follower() *replica {
	for _, r := range c.ctls {
		if r.cmd != c.ctl {
			return r
		}
	}
	return nil
}

// env is the environment of a drop-in command run against the cluster:
// Drover's shims first on PATH.
func (c *cluster) env() []string {
	return append(os.Environ(), "SLURM_CONF="+c.conf, "PATH="+c.shims+":"+os.Getenv("PATH"))
}

// controllerPID is the controller process's id, for /proc readings.
func (c *cluster) controllerPID() int { return c.ctl.Process.Pid }

// heapAlloc asks the controller's profiler for the Go heap in use after
// two forced collections (the second lets go of what sync.Pools held,
// encoding/json's buffers among them).
func (c *cluster) heapAlloc() (int64, error) {
	if c.pprofAddr == "" {
		return 0, errors.New("controller serves no profiler")
	}
	var heap int64 = -1
	for range 2 {
		resp, err := http.Get("http://" + c.pprofAddr + "/debug/pprof/heap?debug=1&gc=1")
		if err != nil {
			return 0, fmt.Errorf("heap profile: %w", err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return 0, fmt.Errorf("heap profile: %w", err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "# HeapAlloc = "); ok {
				heap, err = strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return 0, fmt.Errorf("heap profile: %q: %w", line, err)
				}
			}
		}
	}
	if heap < 0 {
		return 0, errors.New("heap profile without HeapAlloc")
	}
	return heap, nil
}

// stop ends every daemon (SIGTERM, then SIGKILL to the process group) and
// the job processes they left.
func (c *cluster) stop() {
	procs := append([]*exec.Cmd{c.ctl}, c.node...)
	if len(c.ctls) > 0 {
		procs = slices.Clone(c.node)
		for _, r := range c.ctls {
			procs = append(procs, r.cmd)
		}
	}
	for _, p := range procs {
		if p != nil && p.Process != nil {
			_ = p.Process.Signal(syscall.SIGTERM)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range procs {
		if p == nil || p.Process == nil {
			continue
		}
		for time.Now().Before(deadline) && p.ProcessState == nil && syscall.Kill(p.Process.Pid, 0) == nil {
			time.Sleep(20 * time.Millisecond)
		}
		_ = syscall.Kill(-p.Process.Pid, syscall.SIGKILL)
	}
	testutil.ThawCgroups("bench" + strconv.Itoa(c.ctlPort))
	testutil.KillJobProcesses(c.conf)
	testutil.RemoveCgroups("bench" + strconv.Itoa(c.ctlPort))
}

// client returns a REST client to the controller's unix socket, for the
// harness's own polling.
func (c *cluster) client() (*v0044.Client, error) {
	return droverClient(transportUnix, c.socket, c.ctlAddr, c.ctlPort, "")
}

func (c *cluster) waitNodesUp(timeout time.Duration) error {
	cl, err := c.client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := cl.SlurmV0044GetNodes(ctx, v0044.SlurmV0044GetNodesParams{})
		cancel()
		if r, ok := res.(*v0044.V0044OpenapiNodesResp); err == nil && ok {
			up := 0
			for _, n := range r.Nodes {
				if len(n.State) > 0 && n.State[0] != "UNKNOWN" && n.State[0] != "DOWN" {
					up++
				}
			}
			if up == c.nodes {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("nodes did not all register within %v (logs in %s)", timeout, filepath.Join(c.dir, "log"))
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

func waitPort(port int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return errors.New("controller does not listen on port " + strconv.Itoa(port))
}

// profileCPU returns a CPU profile of the controller over the next
// seconds.
func (c *cluster) profileCPU(seconds int) ([]byte, error) {
	if c.pprofAddr == "" {
		return nil, errors.New("controller serves no profiler")
	}
	resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", c.pprofAddr, seconds))
	if err != nil {
		return nil, fmt.Errorf("CPU profile: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("CPU profile: HTTP %d: %v", resp.StatusCode, err)
	}
	return data, nil
}

// daemonCPU is the CPU time each daemon has used so far, its reaped
// children (the job processes a node daemon started) included, read from
// /proc/PID/stat: utime, stime, cutime and cstime, in clock ticks of
// 1/100 s.
func (c *cluster) daemonCPU() map[string]time.Duration {
	out := map[string]time.Duration{}
	read := func(name string, cmd *exec.Cmd) {
		if cmd == nil || cmd.Process == nil {
			return
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		if err != nil {
			return
		}
		// The command name, in parentheses, may hold spaces: fields are
		// counted after its closing parenthesis (field 3 onwards).
		_, rest, ok := strings.Cut(string(data), ") ")
		if !ok {
			return
		}
		f := strings.Fields(rest)
		if len(f) < 15 {
			return
		}
		var ticks int64
		for _, i := range []int{11, 12, 13, 14} { // fields 14-17 of proc(5)
			v, err := strconv.ParseInt(f[i], 10, 64)
			if err != nil {
				return
			}
			ticks += v
		}
		out[name] = time.Duration(ticks) * 10 * time.Millisecond
	}
	if len(c.ctls) == 0 {
		read("controller", c.ctl)
	}
	for _, r := range c.ctls {
		name := r.name
		if r.cmd == c.ctl {
			name += " (leader)"
		}
		read(name, r.cmd)
	}
	for i, n := range c.node {
		read("n"+strconv.Itoa(i+1), n)
	}
	return out
}
