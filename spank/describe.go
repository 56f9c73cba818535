package spank

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/droverhq/drover/plugins/host"
	"github.com/droverhq/drover/plugins/protocol"
	"github.com/droverhq/drover/spank/plugconf"
)

// Describe returns each plugin's Info: from cacheFile while the program
// is the same file (path, size, modification time) with the same
// arguments, else by starting it once, so that a command does not start
// every plugin program each time it runs to learn its options. A
// required plugin that cannot be described fails as Load does; an
// optional one is left out. An unusable cache is only slower.
func Describe(ctx context.Context, entries []Entry, cacheFile string, timeout time.Duration, log *slog.Logger) ([]Info, error) {
	if log == nil {
		log = slog.Default()
	}
	cache := plugconf.ReadCache(cacheFile)
	out, changed, err := plugconf.Resolve(entries, cache, func(e Entry) (Info, bool, error) {
		p := host.Open(host.Spec{Path: e.Path, Args: e.Args, Kind: protocol.KindSpank, Timeout: timeout, Logger: log})
		var reply protocol.OptionsReply
		err := p.Call(ctx, protocol.SpankMethodOptions, protocol.OptionsRequest{Args: e.Args}, &reply)
		p.Close()
		if err != nil {
			if e.Required {
				return Info{}, false, fmt.Errorf("spank: %s:%d: Failed to load plugin %s. Aborting.: %w", e.File, e.Line, e.Path, err)
			}
			log.Info(fmt.Sprintf("spank: %s:%d: Failed to load optional plugin %s. Ignored.", e.File, e.Line, e.Path), "err", err)
			return Info{}, false, nil
		}
		return Info{Entry: e, Name: p.Name(), Options: reply.Options, Stages: reply.Stages, OnlyWithOptions: reply.OnlyWithOptions}, true, nil
	})
	if err != nil {
		return nil, err
	}
	if changed && cacheFile != "" {
		if err := plugconf.WriteCache(cacheFile, cache); err != nil {
			log.Debug("keep the plugin cache", "file", cacheFile, "err", err)
		}
	}
	return out, nil
}
