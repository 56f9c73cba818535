package spank

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/plugins/host"
	"github.com/droverhq/drover/plugins/protocol"
)

// Info is what a command needs to know of a plugin without running it:
// its name, its options and the stages it implements.
type Info struct {
	Entry
	Name    string            `json:"name"`
	Options []protocol.Option `json:"options,omitempty"`
	Stages  []string          `json:"stages,omitempty"`
	// OnlyWithOptions: see protocol.OptionsReply.
	OnlyWithOptions bool `json:"only_with_options,omitempty"`
}

// Given reports whether env carries one of the plugin's options.
func (i Info) Given(env []string) bool {
	for _, o := range i.Options {
		for _, name := range []string{OptionEnvName(i.Name, o.Name), "SPANK_" + OptionEnvName(i.Name, o.Name)} {
			if index(env, name) >= 0 {
				return true
			}
		}
	}
	return false
}

// Has reports whether the plugin implements stage.
func (i Info) Has(stage string) bool { return slices.Contains(i.Stages, stage) }

// DefaultCache is where Describe keeps what it learnt, per user.
func DefaultCache() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "drover", "spank-plugins.json")
}

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
	cache := map[string]Info{}
	if cacheFile != "" {
		if b, err := os.ReadFile(cacheFile); err == nil {
			_ = json.Unmarshal(b, &cache)
		}
	}
	var out []Info
	changed := false
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Path] {
			continue
		}
		seen[e.Path] = true
		key := cacheKey(e)
		if info, ok := cache[key]; ok && key != "" {
			info.Entry = e
			out = append(out, info)
			continue
		}
		p := host.Open(host.Spec{Path: e.Path, Args: e.Args, Kind: protocol.KindSpank, Timeout: timeout, Logger: log})
		var reply protocol.OptionsReply
		err := p.Call(ctx, protocol.SpankMethodOptions, protocol.OptionsRequest{Args: e.Args}, &reply)
		p.Close()
		if err != nil {
			if e.Required {
				return nil, fmt.Errorf("spank: %s:%d: Failed to load plugin %s. Aborting.: %w", e.File, e.Line, e.Path, err)
			}
			log.Info(fmt.Sprintf("spank: %s:%d: Failed to load optional plugin %s. Ignored.", e.File, e.Line, e.Path), "err", err)
			continue
		}
		info := Info{Entry: e, Name: p.Name(), Options: reply.Options, Stages: reply.Stages, OnlyWithOptions: reply.OnlyWithOptions}
		out = append(out, info)
		if key != "" {
			cache[key], changed = info, true
		}
	}
	if changed && cacheFile != "" {
		if err := writeCache(cacheFile, cache); err != nil {
			log.Debug("keep the plugin cache", "file", cacheFile, "err", err)
		}
	}
	return out, nil
}

// cacheKey names a plugin program as it is now; "" when it cannot be
// read (it is then described every time).
func cacheKey(e Entry) string {
	st, err := os.Stat(e.Path)
	if err != nil || st.IsDir() {
		return ""
	}
	return fmt.Sprintf("%s|%d|%d|%s", e.Path, st.Size(), st.ModTime().UnixNano(), strings.Join(e.Args, "\x00"))
}

// writeCache keeps the entries of programs that are still there as they
// were, so that the file does not grow with every plugin ever seen.
func writeCache(file string, cache map[string]Info) error {
	for k, in := range cache {
		if cacheKey(in.Entry) != k {
			delete(cache, k)
		}
	}
	b, err := json.Marshal(cache)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".spank-plugins-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), file)
}
