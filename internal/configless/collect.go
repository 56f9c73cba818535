package configless

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/slurmconf"
)

// Served is what a controller with enable_configless hands out, read
// once with slurm.conf (as slurmctld's configless_update builds its two
// replies at start and at each reconfigure), so that every node gets
// the files the running controller was built from.
type Served struct {
	// Slurmd is the reply to node daemons; Clients to login hosts.
	Slurmd  *nodeproto.ConfigReply
	Clients *nodeproto.ConfigReply
}

// Load reads the files beside slurmConf for both replies. Besides the
// fixed lists it sends the files they include by a bare name (no path),
// and to node daemons the Prolog, Epilog, TaskProlog and TaskEpilog
// scripts named without a path, as Slurm ships only those: a file named
// by a path is expected to be shared another way.
func Load(slurmConf string, sc *slurmconf.Config) (*Served, error) {
	dir := filepath.Dir(slurmConf)
	slurmd, err := collect(dir, SlurmdFiles, scripts(sc))
	if err != nil {
		return nil, err
	}
	clients, err := collect(dir, ClientFiles, nil)
	if err != nil {
		return nil, err
	}
	slurmd.SlurmdSpoolDir = sc.SlurmdSpoolDir
	return &Served{Slurmd: slurmd, Clients: clients}, nil
}

// scripts are slurm.conf's scripts named without a path.
func scripts(sc *slurmconf.Config) []string {
	var names []string
	add := func(v string) {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" && ValidName(s) == nil {
				names = append(names, s)
			}
		}
	}
	for _, p := range sc.Prolog {
		add(p)
	}
	for _, e := range sc.Epilog {
		add(e)
	}
	for _, k := range []string{"TaskProlog", "TaskEpilog"} {
		if v, ok := sc.Value(k); ok {
			add(v)
		}
	}
	return names
}

// collect reads names and what they include from dir, then the scripts.
func collect(dir string, names, scriptNames []string) (*nodeproto.ConfigReply, error) {
	r := &nodeproto.ConfigReply{}
	seen := map[string]bool{}
	var add func(name string, execute bool) error
	add = func(name string, execute bool) error {
		if seen[name] {
			return nil
		}
		seen[name] = true
		f, err := readFile(dir, name)
		if err != nil {
			return err
		}
		f.Execute = f.Exists && execute
		r.Files = append(r.Files, f)
		if !f.Exists || execute {
			return nil
		}
		for _, inc := range Includes(f.Content) {
			if err := add(inc, false); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range names {
		if err := add(n, false); err != nil {
			return nil, err
		}
	}
	for _, n := range scriptNames {
		if err := add(n, true); err != nil {
			return nil, err
		}
	}
	if len(r.Files) > MaxFiles {
		return nil, fmt.Errorf("configless: %d files to send, more than %d", len(r.Files), MaxFiles)
	}
	return r, nil
}

// readFile reads one file; a missing one is sent as not existing.
func readFile(dir, name string) (nodeproto.ConfigFile, error) {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return nodeproto.ConfigFile{Name: name}, nil
	}
	if err != nil {
		return nodeproto.ConfigFile{}, fmt.Errorf("configless: read %s: %w", name, err)
	}
	return nodeproto.ConfigFile{Name: name, Content: string(data), Exists: true}, nil
}

// Includes lists the files a configuration file includes by a bare
// name ("Include nodes.conf"; "include" is matched without regard to
// case, as Slurm's parser does). Includes given with a path, or with a
// glob, are left out: Slurm ships only files next to slurm.conf.
func Includes(content string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(content))
	sc.Buffer(make([]byte, 0, 64<<10), len(content)+1)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) < 8 || !strings.EqualFold(string(line[:7]), "include") || (line[7] != ' ' && line[7] != '\t') {
			continue
		}
		name := string(bytes.TrimSpace(line[8:]))
		if i := strings.IndexByte(name, '#'); i >= 0 {
			name = strings.TrimSpace(name[:i])
		}
		if name == "" || strings.ContainsAny(name, "*?[ \t") || ValidName(name) != nil {
			continue
		}
		out = append(out, name)
	}
	return out
}
