package testutil

import (
	"os"
	"strings"
	"testing"
)

// TestNet: hosts get their names and addresses, on the bridge, in
// namespaces of their own; a link taken down shows on the host; nothing
// of it reaches the machine's own network.
func TestNet(t *testing.T) {
	before, _ := os.ReadFile("/proc/net/dev")
	n := NewNet(t)
	a, b := n.AddHost("hosta", 1), n.AddHost("hostb", 2)
	if got := strings.TrimSpace(a.Run("hostname")); got != "hosta" {
		t.Errorf("host name %q", got)
	}
	if out := b.Run("ip", "-br", "addr", "show", "eth0"); !strings.Contains(out, "10.200.0.2/24") || !strings.Contains(out, "UP") {
		t.Errorf("hostb's eth0: %s", out)
	}
	// hosta reaches hostb: its neighbour table learns hostb's address.
	a.Run("ip", "route", "get", b.Addr)
	b.SetLink(false)
	if out := b.Run("ip", "-br", "link", "show", "eth0"); !strings.Contains(out, "NO-CARRIER") {
		t.Errorf("hostb's link after SetLink(false): %s", out)
	}
	b.SetLink(true)
	if after, _ := os.ReadFile("/proc/net/dev"); strings.Count(string(after), "\n") != strings.Count(string(before), "\n") {
		t.Errorf("the machine's own interfaces changed:\n%s\n%s", before, after)
	}
	n.Close()
}
