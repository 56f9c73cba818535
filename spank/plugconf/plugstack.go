// Package plugconf is what a command needs of its SPANK-like plugins
// without running them: plugstack.conf read as Slurm's spank.c reads it,
// what each plugin offers from the per-user cache, and the variables
// that carry option values. Package spank runs the plugins; this one
// links none of the plugin host, so the commands stay small.
package plugconf

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

// Entry is one plugin line of plugstack.conf.
type Entry struct {
	// Required says a plugin that cannot load fails the command or job;
	// an optional one is skipped with a log line.
	Required bool
	Path     string
	Args     []string
	// File and Line say where it was listed.
	File string
	Line int
}

// maxIncludeDepth stops an include cycle.
const maxIncludeDepth = 16

// ReadConf reads plugstack.conf at path with its includes. A missing
// file is an empty stack, as in Slurm. Lines Slurm would ignore are
// logged and skipped; a relative plugin path is looked up in the
// colon-separated pluginDir (slurm.conf's PluginDir) and kept as it is
// when not found there. An include that cannot be read, or nests too
// deep, is an error.
func ReadConf(path, pluginDir string, log *slog.Logger) ([]Entry, error) {
	if log == nil {
		log = slog.Default()
	}
	return readConf(path, pluginDir, log, 0)
}

func readConf(path, pluginDir string, log *slog.Logger, depth int) ([]Entry, error) {
	if depth > maxIncludeDepth {
		return nil, fmt.Errorf("spank: %s: includes nest deeper than %d", path, maxIncludeDepth)
	}
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("spank: Failed to open %s: %w", path, err)
	}
	defer f.Close()
	return parse(f, path, pluginDir, log, func(pattern string) ([]Entry, error) {
		if !filepath.IsAbs(pattern) {
			pattern = filepath.Join(filepath.Dir(path), pattern)
		}
		files, err := filepath.Glob(pattern)
		if err != nil {
			return nil, err
		}
		var out []Entry
		for _, inc := range files {
			es, err := readConf(inc, pluginDir, log, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, es...)
		}
		return out, nil
	})
}

// Parse reads one plugstack.conf from r (named name in messages);
// include lines are expanded by include (nil: refused).
func Parse(r io.Reader, name string, log *slog.Logger, include func(pattern string) ([]Entry, error)) ([]Entry, error) {
	if log == nil {
		log = slog.Default()
	}
	return parse(r, name, "", log, include)
}

func parse(r io.Reader, name, pluginDir string, log *slog.Logger, include func(string) ([]Entry, error)) ([]Entry, error) {
	var out []Entry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		kind := strings.ToLower(fields[0])
		switch {
		case kind == "include":
			if len(fields) < 2 {
				return nil, fmt.Errorf("%s: %d: Invalid include directive", name, n)
			}
			if include == nil {
				return nil, fmt.Errorf("%s: %d: include is not allowed here", name, n)
			}
			es, err := include(fields[1])
			if err != nil {
				return nil, fmt.Errorf("%s: %d: include %q: %w", name, n, fields[1], err)
			}
			out = append(out, es...)
		case (kind == "required" || kind == "optional") && len(fields) >= 2:
			e := Entry{Required: kind == "required", Path: FindPlugin(fields[1], pluginDir), File: name, Line: n}
			if len(fields) > 2 {
				e.Args = fields[2:]
			}
			out = append(out, e)
		default:
			log.Error(fmt.Sprintf("spank: %s:%d: Invalid line. Ignoring.", name, n))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("spank: read %s: %w", name, err)
	}
	return out, nil
}

// FindPlugin resolves a relative plugin path in the colon-separated dirs
// (PluginDir); a path found in none is returned as it is.
func FindPlugin(path, dirs string) string {
	if filepath.IsAbs(path) || dirs == "" {
		return path
	}
	for _, d := range strings.Split(dirs, ":") {
		if d == "" {
			continue
		}
		p := filepath.Join(d, path)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return path
}
