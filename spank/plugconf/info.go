package plugconf

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

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
			if Index(env, name) >= 0 {
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

// Resolve returns each plugin's Info once per program, in the order of
// entries: from cache while the program is the same file (path, size,
// modification time) with the same arguments, else from describe, whose
// answer is added to cache (ok false leaves the plugin out; an error
// stops). added says whether cache changed.
func Resolve(entries []Entry, cache map[string]Info, describe func(Entry) (Info, bool, error)) (out []Info, added bool, err error) {
	seen := map[string]bool{}
	for _, e := range entries {
		if seen[e.Path] {
			continue
		}
		seen[e.Path] = true
		key := CacheKey(e)
		if info, ok := cache[key]; ok && key != "" {
			info.Entry = e
			out = append(out, info)
			continue
		}
		info, ok, err := describe(e)
		if err != nil {
			return nil, added, err
		}
		if !ok {
			continue
		}
		out = append(out, info)
		if key != "" {
			cache[key], added = info, true
		}
	}
	return out, added, nil
}

// Cached returns what cacheFile says of each plugin of entries, in
// order and once per program, and the entries it says nothing of (new or
// changed programs, which must be started to learn what they offer).
func Cached(entries []Entry, cacheFile string) (known []Info, missing []Entry) {
	known, _, _ = Resolve(entries, ReadCache(cacheFile), func(e Entry) (Info, bool, error) {
		missing = append(missing, e)
		return Info{}, false, nil
	})
	return known, missing
}

// ReadCache reads the cache file (empty when it cannot be read: an
// unusable cache is only slower).
func ReadCache(file string) map[string]Info {
	cache := map[string]Info{}
	if file != "" {
		if b, err := os.ReadFile(file); err == nil {
			_ = json.Unmarshal(b, &cache)
		}
	}
	return cache
}

// CacheKey names a plugin program as it is now; "" when it cannot be
// read (it is then described every time).
func CacheKey(e Entry) string {
	st, err := os.Stat(e.Path)
	if err != nil || st.IsDir() {
		return ""
	}
	return fmt.Sprintf("%s|%d|%d|%s", e.Path, st.Size(), st.ModTime().UnixNano(), strings.Join(e.Args, "\x00"))
}

// WriteCache keeps the entries of programs that are still there as they
// were, so that the file does not grow with every plugin ever seen.
func WriteCache(file string, cache map[string]Info) error {
	for k, in := range cache {
		if CacheKey(in.Entry) != k {
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
