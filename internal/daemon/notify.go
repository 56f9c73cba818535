package daemon

import (
	"context"
	"log/slog"

	"github.com/droverhq/drover/internal/sdnotify"
)

// announce tells systemd (a unit of Type=notify) that the daemon serves,
// and keeps the unit's watchdog fed until ctx ends; the returned func
// says the daemon is stopping. Outside systemd it does nothing.
func announce(ctx context.Context, logger *slog.Logger) (stopping func()) {
	if err := sdnotify.Ready(); err != nil {
		logger.Warn("tell systemd the daemon is ready", "err", err)
	}
	go sdnotify.Watchdog(ctx)
	return func() { _ = sdnotify.Stopping() }
}
