// Package hosted gives the commands in the drover binary the plugin host
// (package spank): importing it sets plugopts.Host.
package hosted

import (
	"context"
	"log/slog"
	"time"

	"github.com/droverhq/drover/internal/cli/plugopts"
	"github.com/droverhq/drover/spank"
	"github.com/droverhq/drover/spank/plugconf"
)

func init() { plugopts.Host = host{} }

type host struct{}

func (host) Describe(ctx context.Context, entries []plugconf.Entry, cacheFile string, timeout time.Duration, log *slog.Logger) ([]plugconf.Info, error) {
	return spank.Describe(ctx, entries, cacheFile, timeout, log)
}

func (host) Load(ctx context.Context, entries []plugconf.Entry, timeout time.Duration, log *slog.Logger) (plugopts.Stack, error) {
	return spank.Load(ctx, entries, timeout, log)
}
