// Package conf parses gres.conf, Slurm's per-node description of generic
// resources, the way slurmd reads it: NodeName= lines restricted to a
// hostlist, Name= lines for every node, a global or node-local AutoDetect=,
// File= ranges expanded to device files, case-insensitive keys, '#'
// comments, '\' continuations and Include directives.
//
// Whether a Name is listed in slurm.conf's GresTypes is not checked here:
// that needs slurm.conf, and slurmd only logs and skips such lines.
package conf

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/droverhq/drover/gres"
	"github.com/droverhq/drover/internal/hostlist"
)

// maxIncludeDepth bounds nested Include directives, which also stops
// include cycles.
const maxIncludeDepth = 16

// maxLinkCount is the largest number of links between two devices that
// Links= may give (Slurm's GRES_MAX_LINK).
const maxLinkCount = 1023

// Config is a parsed gres.conf.
type Config struct {
	// AutoDetect is the global AutoDetect= (a line of its own);
	// AutoDetectUnset when there is none.
	AutoDetect AutoDetect
	// Lines are the GRES lines (those with a Name=), in file order,
	// includes expanded in place.
	Lines []Line
	// Warnings are the problems slurmd logs and then carries on past:
	// unknown keys and flags, keys given twice, ignored Links= and in-line
	// AutoDetect without NodeName.
	Warnings []*LineError

	// nodeAutoDetect holds node-local AutoDetect values by node name.
	nodeAutoDetect map[string]nodeAutoDetect
}

type nodeAutoDetect struct {
	value AutoDetect
	file  string
	line  int
}

// Line is one GRES line of gres.conf.
type Line struct {
	// File and Line say where the line starts.
	File string
	Line int
	// NodeName is the hostlist that the line is restricted to, as written;
	// empty for a line that applies to every node.
	NodeName string
	// AutoDetect is a node-local AutoDetect= given on this line
	// (NodeName= lines only).
	AutoDetect AutoDetect
	// Name is the GRES name ("gpu"), as written.
	Name string
	// Type is the GRES type ("a100"), empty when not given.
	Type string
	// Count is Count=, or the number of files, or 1.
	Count uint64
	// Files are the device files of File= (or MultipleFiles=) with ranges
	// expanded: "/dev/nvidia[0-1]" gives /dev/nvidia0 and /dev/nvidia1.
	Files []string
	// MultipleFiles is set when Files came from MultipleFiles= (all files
	// make one device, as for MIG).
	MultipleFiles bool
	// Cores is Cores= (or the older CPUs=) in canonical form, "0-15".
	Cores string
	// Links is Links= as written, when it is valid.
	Links string
	// Flags are Flags=, plus the flags inherited from the line above as
	// NodeConfig explains.
	Flags Flags

	// nodes is the expansion of NodeName; nil for every node.
	nodes map[string]struct{}
}

// AppliesTo reports whether the line describes GRES of node.
func (l Line) AppliesTo(node string) bool {
	if l.nodes == nil {
		return true
	}
	_, ok := l.nodes[node]
	return ok
}

// LineError is a problem at one line of gres.conf (or of a file it
// includes). Its text is "file:line: message".
type LineError struct {
	File string
	Line int
	Err  error
}

// Error implements error.
func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// Load reads and parses the gres.conf at path.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gres.conf: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse parses a gres.conf read from r; filename names it in errors and is
// the base for relative Include paths. Every malformed line is reported: the
// error joins one *LineError per problem.
func Parse(r io.Reader, filename string) (*Config, error) {
	p := &parser{cfg: &Config{}, stack: map[string]bool{}}
	p.parse(r, filename, 0)
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return p.cfg, nil
}

type parser struct {
	cfg   *Config
	errs  []error
	stack map[string]bool // files being parsed, to refuse include cycles
	// globalAt is where the global AutoDetect was last set.
	globalAt string
}

func (p *parser) errorf(file string, line int, format string, args ...any) {
	p.errs = append(p.errs, &LineError{File: file, Line: line, Err: fmt.Errorf(format, args...)})
}

func (p *parser) warnf(file string, line int, format string, args ...any) {
	p.cfg.Warnings = append(p.cfg.Warnings, &LineError{File: file, Line: line, Err: fmt.Errorf(format, args...)})
}

func (p *parser) parse(r io.Reader, file string, depth int) {
	lines, err := readLines(r)
	if err != nil {
		p.errs = append(p.errs, fmt.Errorf("%s: %w", file, err))
		return
	}
	p.stack[file] = true
	defer delete(p.stack, file)
	for _, ll := range lines {
		text := strings.TrimSpace(ll.Text)
		if text == "" {
			continue
		}
		if path, ok := includePath(text); ok {
			p.include(path, file, ll.Line, depth)
			continue
		}
		pairs, err := splitPairs(text)
		if err != nil {
			p.errorf(file, ll.Line, "%v", err)
			continue
		}
		p.line(file, ll.Line, pairs)
	}
}

// includePath recognises Slurm's "Include <file>" directive (keyword in any
// case, then blanks).
func includePath(text string) (string, bool) {
	const kw = "include"
	if len(text) <= len(kw) || !strings.EqualFold(text[:len(kw)], kw) || !isBlank(text[len(kw)]) {
		return "", false
	}
	return strings.TrimSpace(text[len(kw):]), true
}

func (p *parser) include(path, from string, line, depth int) {
	switch {
	case path == "" || strings.ContainsAny(path, " \t"):
		p.errorf(from, line, "Include takes one file name")
		return
	case strings.Contains(path, "*"):
		// slurmd skips globs with an error; a skipped file is a silent
		// configuration change, so Drover refuses it.
		p.errorf(from, line, "Include %s: glob patterns are not supported", path)
		return
	case depth >= maxIncludeDepth:
		p.errorf(from, line, "Include %s: more than %d nested includes", path, maxIncludeDepth)
		return
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(filepath.Dir(from), path)
	}
	if p.stack[path] {
		p.errorf(from, line, "Include %s: include cycle", path)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		p.errorf(from, line, "Include: %v", err)
		return
	}
	defer f.Close()
	p.parse(f, path, depth+1)
}

// line handles one key=value line.
func (p *parser) line(file string, n int, pairs []pair) {
	switch strings.ToLower(pairs[0].Key) {
	case "autodetect":
		// A global AutoDetect; slurmd's parser lets a GRES line follow it
		// on the same line.
		a, err := ParseAutoDetect(pairs[0].Value)
		if err != nil {
			// slurmd logs "unknown autodetect flag" and leaves detection
			// as it was.
			p.warnf(file, n, "%v; ignored", err)
		} else {
			where := fmt.Sprintf("%s:%d", file, n)
			if p.globalAt != "" && p.cfg.AutoDetect != a {
				p.warnf(file, n, "AutoDetect specified more than once (also at %s), latest value used", p.globalAt)
			}
			p.cfg.AutoDetect, p.globalAt = a, where
		}
		if len(pairs) > 1 {
			k := strings.ToLower(pairs[1].Key)
			if k != "name" && k != "nodename" {
				p.errorf(file, n, "unrecognized key %s after AutoDetect (a GRES line starts with NodeName= or Name=)", pairs[1].Key)
				return
			}
			p.record(file, n, pairs[1:])
		}
	case "name", "nodename":
		p.record(file, n, pairs)
	default:
		p.errorf(file, n, "unrecognized key %s (a line starts with NodeName=, Name=, AutoDetect= or Include)", pairs[0].Key)
	}
}

// record parses a NodeName= or Name= line.
func (p *parser) record(file string, n int, pairs []pair) {
	errsBefore := len(p.errs)
	bad := func(format string, args ...any) { p.errorf(file, n, format, args...) }

	vals := map[string]pair{}
	for _, kv := range pairs {
		k := strings.ToLower(kv.Key)
		if !knownKeys[k] {
			p.warnf(file, n, "unknown key %s ignored", kv.Key)
			continue
		}
		if old, dup := vals[k]; dup && old.Value != kv.Value {
			p.warnf(file, n, "%s specified more than once, latest value used", kv.Key)
		}
		vals[k] = kv
	}
	get := func(keys ...string) (string, string, bool) {
		for _, k := range keys {
			if kv, ok := vals[k]; ok {
				return kv.Value, kv.Key, true
			}
		}
		return "", "", false
	}

	l := Line{File: file, Line: n}
	if v, _, ok := get("nodename"); ok {
		names, err := hostlist.Expand(v)
		switch {
		case err != nil:
			bad("NodeName=%s: %v", v, err)
		case len(names) == 0:
			bad("NodeName= is empty")
		default:
			l.NodeName = v
			l.nodes = make(map[string]struct{}, len(names))
			for _, name := range names {
				l.nodes[name] = struct{}{}
			}
		}
	}
	_, hasNodeName := vals["nodename"]
	_, hasAutoDetect := vals["autodetect"]
	if v, key, ok := get("autodetect"); ok {
		a, err := ParseAutoDetect(v)
		switch {
		case err != nil:
			p.warnf(file, n, "%v; ignored", err)
		case !hasNodeName:
			p.warnf(file, n, "in-line %s requires NodeName to take effect; ignored", key)
		case l.nodes != nil:
			l.AutoDetect = a
			p.setNodeAutoDetect(&l, a)
		}
	}

	name, _, hasName := get("name")
	if !hasName {
		// "NodeName=tux[0-7] AutoDetect=nvml" sets detection only.
		if !hasAutoDetect {
			bad("no Name= on a GRES line")
		}
		return
	}
	if !gres.ValidName(name) {
		bad("Name=%s: invalid GRES name", name)
	}
	l.Name = name
	if v, _, ok := get("type"); ok {
		if !gres.ValidType(v) {
			bad("Type=%s: invalid GRES type", v)
		}
		l.Type = v
	}

	if v, key, ok := get("file", "files"); ok {
		l.Files = p.expandFiles(file, n, key, v)
		if _, multi := vals["multiplefiles"]; multi {
			bad("%s and MultipleFiles exclude each other", key)
		}
	} else if v, key, ok := get("multiplefiles"); ok {
		l.Files = p.expandFiles(file, n, key, v)
		l.MultipleFiles = true
		if len(l.Files) == 1 {
			bad("MultipleFiles=%s names one file; use File instead", v)
		}
	}

	if v, key, ok := get("cores", "cpus"); ok {
		ids, err := gres.ParseIDList(v)
		if err != nil {
			bad("%s=%s: %v", key, v, err)
		}
		l.Cores = gres.FormatIDList(ids)
	}

	if v, key, ok := get("links", "link"); ok {
		if err := validateLinks(v); err != nil {
			// slurmd logs "Ignoring invalid Links" and goes on.
			p.warnf(file, n, "ignoring invalid %s=%s: %v", key, v, err)
		} else {
			l.Links = v
			if len(l.Files) > 1 && !l.MultipleFiles {
				p.warnf(file, n, "%s given for a line with %d devices; it describes one device", key, len(l.Files))
			}
		}
	}

	if v, _, ok := get("flags"); ok {
		f, unknown, err := ParseFlags(v)
		if err != nil {
			bad("%v", err)
		}
		for _, u := range unknown {
			p.warnf(file, n, "unknown flag %s ignored", u)
		}
		l.Flags = f
	}

	switch {
	case l.MultipleFiles:
		l.Count = 1
	case len(l.Files) > 0:
		l.Count = uint64(len(l.Files))
	default:
		l.Count = 1
	}
	if v, _, ok := get("count"); ok {
		c, err := gres.ParseCount(v)
		switch {
		case err != nil || c >= math.MaxUint64-1:
			bad("Count=%s: invalid count", v)
		case len(l.Files) > 0 && c != l.Count && !isShared(l.Name):
			bad("Count=%s does not match the %d device files", v, l.Count)
		default:
			l.Count = c
		}
	}

	if len(p.errs) == errsBefore {
		p.cfg.Lines = append(p.cfg.Lines, l)
	}
}

// knownKeys are the keys slurmd accepts on a GRES line (lower case).
var knownKeys = map[string]bool{
	"autodetect": true, "count": true, "cpus": true, "cores": true,
	"file": true, "files": true, "flags": true, "link": true, "links": true,
	"multiplefiles": true, "name": true, "nodename": true, "type": true,
}

// isShared reports whether name is a shared GRES (mps, shard), whose Count
// may differ from its number of files.
func isShared(name string) bool {
	return strings.EqualFold(name, "mps") || strings.EqualFold(name, "shard")
}

func (p *parser) expandFiles(file string, n int, key, v string) []string {
	files, err := hostlist.Expand(v)
	if err != nil {
		p.errorf(file, n, "%s=%s: %v", key, v, err)
		return nil
	}
	if len(files) == 0 {
		p.errorf(file, n, "%s= is empty", key)
		return nil
	}
	for _, f := range files {
		if !strings.HasPrefix(f, "/") {
			p.errorf(file, n, "%s=%s: %q is not an absolute path", key, v, f)
			return nil
		}
	}
	return files
}

// setNodeAutoDetect records a node-local AutoDetect; slurmd refuses to start
// when one node gets two different values.
func (p *parser) setNodeAutoDetect(l *Line, a AutoDetect) {
	if p.cfg.nodeAutoDetect == nil {
		p.cfg.nodeAutoDetect = map[string]nodeAutoDetect{}
	}
	for node := range l.nodes {
		if old, ok := p.cfg.nodeAutoDetect[node]; ok && old.value != a {
			p.errorf(l.File, l.Line, "AutoDetect=%s for node %s does not match AutoDetect=%s at %s:%d", a, node, old.value, old.file, old.line)
			return
		}
		p.cfg.nodeAutoDetect[node] = nodeAutoDetect{value: a, file: l.File, line: l.Line}
	}
}

// validateLinks checks Links= as slurmd does: a comma-separated list of
// integers from -2 to 1023 holding exactly one -1 (the device itself).
func validateLinks(s string) error {
	if s == "" {
		return errors.New("empty")
	}
	self := 0
	for tok := range strings.SplitSeq(s, ",") {
		v, err := strconv.Atoi(tok)
		if err != nil || v < -2 || v > maxLinkCount {
			return fmt.Errorf("bad entry %q", tok)
		}
		if v == -1 {
			self++
		}
	}
	if self != 1 {
		return errors.New("needs exactly one -1 for the device itself")
	}
	return nil
}

// NodeConfig is what gres.conf says about one node.
type NodeConfig struct {
	// AutoDetect is the node's detection mode: its node-local AutoDetect
	// if any line gives one (it trumps the global one wherever it stands
	// in the file), else the global AutoDetect.
	AutoDetect AutoDetect
	// Lines are the GRES lines that apply to the node, in file order.
	// Following slurmd, a line without environment flags (nor no_gpu_env)
	// takes the flags of the closest line above it for the same GRES name
	// that has them.
	Lines []Line
}

// ForNode returns the part of the configuration that applies to node.
func (c *Config) ForNode(node string) NodeConfig {
	nc := NodeConfig{AutoDetect: c.AutoDetect}
	if local, ok := c.nodeAutoDetect[node]; ok {
		nc.AutoDetect = local.value
	}
	// prevName and prevFlags are the last line for this node that had
	// environment flags, as slurmd remembers it while reading the file.
	var (
		prevName  string
		prevFlags Flags
	)
	for _, l := range c.Lines {
		if !l.AppliesTo(node) {
			continue
		}
		if l.Flags&(EnvFlags|FlagNoGPUEnv) == 0 && prevName != "" && strings.EqualFold(prevName, l.Name) {
			l.Flags |= prevFlags
		}
		if l.Flags&(EnvFlags|FlagNoGPUEnv) != 0 {
			prevName, prevFlags = l.Name, l.Flags
		}
		nc.Lines = append(nc.Lines, l)
	}
	return nc
}
