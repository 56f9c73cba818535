package e2e

import (
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/testutil"
)

// makeHosts makes the test hosts of a Hosts cluster, and a cluster folder
// that everyone may enter: its users' jobs write there as themselves.
func (c *Cluster) makeHosts() {
	dir, err := os.MkdirTemp("", "drover-hosts-")
	must(c.t, err)
	must(c.t, os.Chmod(dir, 0o755))
	// Registered before the network's and the daemons' clean-ups, so run
	// after them.
	c.t.Cleanup(func() { os.RemoveAll(dir) })
	c.Dir = dir
	must(c.t, os.MkdirAll(filepath.Join(dir, "cache"), 0o777))
	must(c.t, os.Chmod(filepath.Join(dir, "cache"), 0o777))
	c.net = testutil.NewNet(c.t)
	c.hosts = map[string]*testutil.Host{
		"login": c.net.AddHost("login", 100),
		"rest":  c.net.AddHost("rest", 50),
	}
	for i, name := range c.ControllerNames() {
		c.hosts[name] = c.net.AddHost(name, 1+i)
	}
	for i := 1; i <= c.opts.Nodes; i++ {
		name := "n" + strconv.Itoa(i)
		c.hosts[name] = c.net.AddHost(name, 10+i)
	}
}

// nodePort is the port a node daemon listens on.
func (c *Cluster) nodePort(name string) int {
	c.t.Helper()
	i, err := strconv.Atoi(strings.TrimPrefix(name, "n"))
	if err != nil || i < 1 || i >= len(c.ports) {
		c.t.Fatalf("no node %s", name)
	}
	return c.ports[i]
}

// Host is one of a Hosts cluster's test hosts.
func (c *Cluster) Host(name string) *testutil.Host {
	c.t.Helper()
	h := c.hosts[name]
	if h == nil {
		c.t.Fatalf("no test host %s", name)
	}
	return h
}

// RunOn runs a drop-in command on a test host, as u (nil: root), from
// the work folder, as a user logged in there runs it.
func (c *Cluster) RunOn(host string, u *user.User, env []string, stdin, prog string, args ...string) Result {
	c.t.Helper()
	return c.runOn(host, u, env, stdin, filepath.Join(c.shimPath, prog), args...)
}

// RunOnPath runs any program on a test host as u (nil: root).
func (c *Cluster) RunOnPath(host string, u *user.User, path string, args ...string) Result {
	c.t.Helper()
	return c.runOn(host, u, nil, "", path, args...)
}

func (c *Cluster) runOn(host string, u *user.User, env []string, stdin, shim string, args ...string) Result {
	c.t.Helper()
	h := c.Host(host)
	cmd := h.Command(shim, args...)
	home := "/root"
	if u != nil {
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		cmd = h.CommandAs(uint32(uid), uint32(gid), shim, args...)
		home = c.WorkDir
	}
	cmd.Dir = c.WorkDir
	cmd.Env = append(append(os.Environ(), "SLURM_CONF="+c.Conf, "PATH="+c.shimPath+":"+os.Getenv("PATH"),
		"HOME="+home, "XDG_CACHE_HOME="+filepath.Join(c.Dir, "cache")), env...)
	cmd.Stdin = strings.NewReader(stdin)
	return runCmd(c.t, cmd)
}

// nobodyUser is the unprivileged account the tests act as.
func nobodyUser(c *Cluster) *user.User {
	c.t.Helper()
	u, err := user.Lookup("nobody")
	if err != nil {
		c.t.Skipf("no user nobody: %v", err)
	}
	// It must reach the commands and the cluster's folders.
	must(c.t, os.Chmod(binDir, 0o755))
	must(c.t, os.Chmod(c.WorkDir, 0o777))
	return u
}

// daemonOn starts another daemon of the cluster's on a test host (name
// names its log); it stops with the cluster.
func (c *Cluster) daemonOn(host, name string, args ...string) {
	c.t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hostDaemon[name] = host
	c.nodes[name] = c.daemon(name, args...)
}

// waitSack waits until a host's credential service answers.
func waitSack(t *testing.T, c *Cluster, host string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if r := c.RunOn(host, nil, nil, "", "squeue", "-h"); r.Code == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no credential service on %s", host)
}
