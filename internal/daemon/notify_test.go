package daemon_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/daemon"
)

// testController is a controller run in this process on a one-node
// slurm.conf of its own.
type testController struct {
	conf, text string
	dir        string
	addr       net.Addr
}

// startController writes the configuration (with the extra lines) and
// its key, starts the controller and waits until it serves (when wait is
// set); the test's end stops it.
func startController(t *testing.T, cluster string, wait bool, extra ...string) *testController {
	t.Helper()
	dir := t.TempDir()
	c := &testController{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	c.text = fmt.Sprintf("ClusterName=%s\nSlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=%d\nStateSaveLocation=%s/state\n"+
		"NodeName=n1 NodeAddr=127.0.0.1 Port=%d CPUs=4 RealMemory=4000\nPartitionName=batch Nodes=n1 Default=YES State=UP\n", cluster, freePort(t), dir, freePort(t))
	for _, l := range extra {
		c.text += l + "\n"
	}
	if err := os.WriteFile(c.conf, []byte(c.text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := clusterkey.WriteKey(clusterkey.KeyPath(c.conf)); err != nil {
		t.Fatal(err)
	}
	v := daemon.Settings()
	v.Set("conf", c.conf)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.RunController(ctx, v, daemon.Logger(io.Discard, "error"), func(a net.Addr) { ready <- a })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("controller: %v", err)
		}
	})
	if wait {
		select {
		case c.addr = <-ready:
		case err := <-done:
			t.Fatalf("controller did not start: %v", err)
		}
	}
	return c
}

// Under systemd (Type=notify) the controller says READY=1 once it
// serves, feeds the watchdog while it runs, and says STOPPING=1 as it
// stops.
func TestControllerNotifiesSystemd(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "notify")
	manager, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer manager.Close()
	t.Setenv("NOTIFY_SOCKET", sock)
	t.Setenv("WATCHDOG_USEC", "100000")
	t.Setenv("WATCHDOG_PID", "")
	next := func() string {
		manager.SetReadDeadline(time.Now().Add(10 * time.Second))
		buf := make([]byte, 256)
		n, err := manager.Read(buf)
		if err != nil {
			t.Fatalf("no message from the controller: %v", err)
		}
		return string(buf[:n])
	}
	t.Run("run", func(t *testing.T) {
		startController(t, "notify", false)
		if got := next(); got != "READY=1" {
			t.Fatalf("first message %q, want READY=1", got)
		}
		for range 2 {
			if got := next(); got != "WATCHDOG=1" {
				t.Fatalf("message %q, want WATCHDOG=1", got)
			}
		}
	}) // the subtest's end stops the controller
	for {
		got := next()
		if got == "STOPPING=1" {
			break
		}
		if got != "WATCHDOG=1" {
			t.Fatalf("message %q while stopping, want STOPPING=1", got)
		}
	}
}

// SIGHUP reconfigures the controller, as it does slurmctld (systemd's
// ExecReload sends it): a partition added to slurm.conf appears. The
// probes answer over TCP without credentials; the API does not.
func TestControllerReconfiguresOnSIGHUP(t *testing.T) {
	c := startController(t, "hup", true)
	for path, want := range map[string]int{"/livez": 200, "/readyz": 200, "/slurm/v0.0.44/ping": 401} {
		resp, err := http.Get("http://" + c.addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s without credentials: %d, want %d", path, resp.StatusCode, want)
		}
	}
	sock := filepath.Join(c.dir, "state", "drover.sock")
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	partitions := func() string {
		resp, err := client.Get("http://localhost/slurm/v0.0.44/partitions/")
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if p := partitions(); !strings.Contains(p, `"batch"`) || strings.Contains(p, `"extra"`) {
		t.Fatalf("partitions before: %s", p)
	}
	if err := os.WriteFile(c.conf, []byte(c.text+"PartitionName=extra Nodes=n1 State=UP\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(partitions(), `"extra"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no partition extra after SIGHUP: %s", partitions())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
