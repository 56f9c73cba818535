// Package sdnotify tells systemd how a daemon is doing, for units of
// Type=notify (sd_notify(3)): READY=1 once it serves, STOPPING=1 as it
// stops, WATCHDOG=1 at half the unit's WatchdogSec. The messages go to
// the datagram socket systemd names in NOTIFY_SOCKET; without one (a
// daemon started from a shell, a test) every call does nothing.
package sdnotify

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"time"
)

// Notify sends state (lines such as "READY=1") to the service manager,
// if there is one. An unset NOTIFY_SOCKET is not an error.
func Notify(state string) error {
	name := os.Getenv("NOTIFY_SOCKET")
	if name == "" {
		return nil
	}
	if name[0] == '@' {
		name = "\x00" + name[1:] // the abstract namespace
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("notify the service manager: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("notify the service manager: %w", err)
	}
	return nil
}

// Ready says the daemon serves.
func Ready() error { return Notify("READY=1") }

// Stopping says the daemon is stopping.
func Stopping() error { return Notify("STOPPING=1") }

// WatchdogInterval is how often the unit asks to hear from this process
// (WatchdogSec, passed as WATCHDOG_USEC), or 0 when it does not: no
// watchdog, or one meant for another process (WATCHDOG_PID).
func WatchdogInterval() time.Duration {
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	usec, err := strconv.ParseUint(os.Getenv("WATCHDOG_USEC"), 10, 63)
	if err != nil || usec == 0 {
		return 0
	}
	return time.Duration(usec) * time.Microsecond
}

// Watchdog sends WATCHDOG=1 at half the watchdog interval until ctx
// ends: a daemon whose loop is stuck stops sending, and systemd restarts
// it. It returns at once when the unit has no watchdog.
func Watchdog(ctx context.Context) {
	every := WatchdogInterval() / 2
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		_ = Notify("WATCHDOG=1")
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
