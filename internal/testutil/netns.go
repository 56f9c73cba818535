package testutil

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// Net is a network of test hosts on one machine, for tests of what
// crosses a network: each host is a network and UTS namespace of its own
// (its own address and host name), all joined by a bridge that lives in a
// namespace of its own, so the machine's network is never touched. The
// hosts share the file system, as Slurm's multiple-slurmd hosts do.
//
// A namespace lives as long as a process holds it: each is held by a
// keeper process that dies with the test process (PR_SET_PDEATHSIG) or
// when Close kills it, and the links, bridge and addresses go with it.
// Nothing is mounted and nothing named, so nothing can be left behind.
type Net struct {
	t      testing.TB
	subnet string // the first three octets, "10.200.0"
	sw     *exec.Cmd

	mu    sync.Mutex
	hosts []*Host
}

// Host is one test host.
type Host struct {
	Name string
	// Addr is the host's address on the test network.
	Addr   string
	net    *Net
	keeper *exec.Cmd
	link   string // the bridge's end of the host's link
}

// NetUsable says why a Net cannot be made here ("" when it can): it
// needs root and util-linux's unshare and nsenter, iproute2's ip and
// setpriv.
func NetUsable() string {
	if os.Geteuid() != 0 {
		return "test hosts need root (network namespaces)"
	}
	for _, p := range []string{"unshare", "nsenter", "ip", "setpriv"} {
		if _, err := exec.LookPath(p); err != nil {
			return "test hosts need " + p + " (util-linux, iproute2)"
		}
	}
	return ""
}

// NewNet makes an empty test network on 10.200.0.0/24 (which exists only
// inside it) and removes it when the test ends; a test that cannot have
// one is skipped, saying why.
func NewNet(t testing.TB) *Net {
	t.Helper()
	if why := NetUsable(); why != "" {
		t.Skip(why)
	}
	n := &Net{t: t, subnet: "10.200.0"}
	n.sw = keeper(t, "--net", "--", "sh", "-c", "echo ready && exec sleep infinity")
	t.Cleanup(n.Close)
	n.ip(n.sw, "link", "add", "br0", "type", "bridge")
	n.ip(n.sw, "link", "set", "br0", "up")
	return n
}

// keeper starts, through unshare(1), a process that holds new namespaces
// until it is killed, and dies with the test process. It returns once
// the namespaces exist: the command given prints a line then, and the
// keeper's network namespace is checked to be another than the test's,
// so that nothing meant for a test host is ever done to the machine's.
func keeper(t testing.TB, unshareArgs ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("unshare", unshareArgs...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start a namespace keeper: %v", err)
	}
	line := make([]byte, 6)
	if _, err := io.ReadFull(out, line); err != nil || string(line) != "ready\n" {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		t.Fatalf("namespace keeper did not start: %q %v", line, err)
	}
	go cmd.Wait()
	mine, err1 := os.Readlink("/proc/self/ns/net")
	its, err2 := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/ns/net")
	if err1 != nil || err2 != nil || mine == its {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		t.Fatalf("namespace keeper %d is not in a network namespace of its own (%s, %s: %v %v)", cmd.Process.Pid, its, mine, err1, err2)
	}
	return cmd
}

// ip runs ip(8) in the network namespace of a keeper.
func (n *Net) ip(k *exec.Cmd, args ...string) {
	n.t.Helper()
	cmd := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(k.Process.Pid), "-n", "ip"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		n.t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// AddHost makes a host called name with address subnet.octet, on the
// bridge.
func (n *Net) AddHost(name string, octet int) *Host {
	n.t.Helper()
	h := &Host{Name: name, Addr: n.subnet + "." + strconv.Itoa(octet), net: n}
	h.keeper = keeper(n.t, "--net", "--uts", "--", "sh", "-c", "hostname "+name+" && echo ready && exec sleep infinity")
	n.mu.Lock()
	n.hosts = append(n.hosts, h)
	h.link = "veth" + strconv.Itoa(len(n.hosts))
	n.mu.Unlock()
	n.ip(n.sw, "link", "add", h.link, "type", "veth", "peer", "name", "eth0", "netns", strconv.Itoa(h.keeper.Process.Pid))
	n.ip(n.sw, "link", "set", h.link, "master", "br0", "up")
	n.ip(h.keeper, "addr", "add", h.Addr+"/24", "dev", "eth0")
	n.ip(h.keeper, "link", "set", "eth0", "up")
	n.ip(h.keeper, "link", "set", "lo", "up")
	return h
}

// Command returns a command that runs name on the host, as root.
func (h *Host) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command("nsenter", append([]string{"-t", strconv.Itoa(h.keeper.Process.Pid), "-n", "-u", "--", name}, args...)...)
	// A daemon left running would hold the host's namespaces: it dies
	// with the test process too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd
}

// CommandAs returns a command that runs name on the host as uid and gid,
// with no supplementary groups, as an ordinary user logged in there.
func (h *Host) CommandAs(uid, gid uint32, name string, args ...string) *exec.Cmd {
	return h.Command("setpriv", append([]string{"--reuid=" + strconv.FormatUint(uint64(uid), 10),
		"--regid=" + strconv.FormatUint(uint64(gid), 10), "--clear-groups", "--", name}, args...)...)
}

// SetLink takes the host's link to the bridge down or up, as a pulled
// cable or a failed switch port would.
func (h *Host) SetLink(up bool) {
	h.net.t.Helper()
	state := "down"
	if up {
		state = "up"
	}
	h.net.ip(h.net.sw, "link", "set", h.link, state)
}

// Run runs a command on the host as root and returns its output, failing
// the test if it fails.
func (h *Host) Run(name string, args ...string) string {
	h.net.t.Helper()
	var out, errb bytes.Buffer
	cmd := h.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		h.net.t.Fatalf("on %s: %s %s: %v: %s", h.Name, name, strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// Close kills the keepers; the namespaces go with the last process in
// them (callers stop what they started in a host first).
func (n *Net) Close() {
	n.mu.Lock()
	hosts := n.hosts
	n.hosts = nil
	n.mu.Unlock()
	for _, h := range hosts {
		_ = syscall.Kill(-h.keeper.Process.Pid, syscall.SIGKILL)
	}
	if n.sw != nil {
		_ = syscall.Kill(-n.sw.Process.Pid, syscall.SIGKILL)
	}
}

// String names the host for logs.
func (h *Host) String() string { return fmt.Sprintf("%s(%s)", h.Name, h.Addr) }
