package sdnotify

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// listen makes the socket a service manager would, named in
// NOTIFY_SOCKET for the test.
func listen(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func read(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 256)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func TestNotify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	conn := listen(t, path)
	t.Setenv("NOTIFY_SOCKET", path)
	if err := Ready(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, conn); got != "READY=1" {
		t.Errorf("got %q, want READY=1", got)
	}
	if err := Stopping(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, conn); got != "STOPPING=1" {
		t.Errorf("got %q, want STOPPING=1", got)
	}
}

// systemd names an abstract socket with a leading @.
func TestNotifyAbstract(t *testing.T) {
	name := "drover-sdnotify-test-" + strconv.Itoa(os.Getpid())
	conn := listen(t, "\x00"+name)
	t.Setenv("NOTIFY_SOCKET", "@"+name)
	if err := Ready(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, conn); got != "READY=1" {
		t.Errorf("got %q, want READY=1", got)
	}
}

// Without a service manager nothing is sent and nothing fails; a socket
// that is gone is an error the daemon may log.
func TestNoManager(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if err := Ready(); err != nil {
		t.Errorf("no NOTIFY_SOCKET: %v", err)
	}
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "gone"))
	if err := Ready(); err == nil {
		t.Error("a missing socket reported no error")
	}
}

func TestWatchdog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	conn := listen(t, path)
	t.Setenv("NOTIFY_SOCKET", path)
	t.Setenv("WATCHDOG_USEC", "40000")
	t.Setenv("WATCHDOG_PID", strconv.Itoa(os.Getpid()))
	if got := WatchdogInterval(); got != 40*time.Millisecond {
		t.Fatalf("interval %v, want 40ms", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { Watchdog(ctx); close(done) }()
	for range 3 {
		if got := read(t, conn); got != "WATCHDOG=1" {
			t.Fatalf("got %q, want WATCHDOG=1", got)
		}
	}
	cancel()
	<-done

	// A watchdog for another process, or none, is not this one's.
	t.Setenv("WATCHDOG_PID", "1")
	if got := WatchdogInterval(); got != 0 {
		t.Errorf("another process's watchdog: interval %v", got)
	}
	t.Setenv("WATCHDOG_PID", "")
	t.Setenv("WATCHDOG_USEC", "")
	if got := WatchdogInterval(); got != 0 {
		t.Errorf("no watchdog: interval %v", got)
	}
	Watchdog(context.Background()) // returns at once
}
