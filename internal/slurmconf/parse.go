package slurmconf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

const (
	// maxFileSize bounds one configuration file. Real slurm.conf files
	// are kilobytes; the bound keeps hostile input from exhausting memory.
	maxFileSize = 64 << 20
	// maxIncludeDepth bounds nested Include lines (and so include loops,
	// which Slurm would follow forever).
	maxIncludeDepth = 16
	// maxErrors stops parsing after this many errors: past that point
	// more messages help nobody.
	maxErrors = 50
)

// ParseError is an error at one place of a configuration.
type ParseError struct {
	File string
	// Line is the line (the first one of a continued line); 0 for
	// problems of the configuration as a whole.
	Line int
	// Context is the key=value (or the text) at fault; may be empty.
	Context string
	Err     error
}

// Error formats the error as "file:line: context: error".
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	b.WriteString(": ")
	if e.Context != "" {
		b.WriteString(e.Context)
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// Errors is every error found in a configuration, in file order. Parse and
// Load return it, so that all problems are reported together.
type Errors []*ParseError

// Error lists the errors, one per line.
func (e Errors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "\n")
}

// Unwrap returns the errors for errors.Is and errors.As.
func (e Errors) Unwrap() []error {
	out := make([]error, len(e))
	for i, err := range e {
		out[i] = err
	}
	return out
}

var (
	// errTooManyErrors ends parsing once maxErrors errors were found.
	errTooManyErrors = errors.New("too many errors")
	// errReported tells a caller that the error was recorded in p.errs and
	// the current line (or record) must be dropped.
	errReported = errors.New("error reported")
)

// Load reads the slurm.conf at path and the files it includes.
func Load(path string) (*Config, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, fmt.Errorf("load slurm.conf: %w", err)
	}
	return parse(data, path, readLimited)
}

// LoadShared is Load for a command, which reads slurm.conf in several
// places (its connection to the controller, its plugins' options): the
// file is parsed once while its size and modification time stay the
// same. The Config is shared, so callers must not change it.
func LoadShared(path string) (*Config, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Load(path) // says why, in its words
	}
	key := sharedKey{path: path, size: fi.Size(), mtime: fi.ModTime()}
	if c, ok := shared.Load(key); ok {
		return c.(*Config), nil
	}
	c, err := Load(path)
	if err != nil {
		return nil, err
	}
	shared.Store(key, c)
	return c, nil
}

// shared holds LoadShared's parsed files.
var shared sync.Map // sharedKey -> *Config

type sharedKey struct {
	path  string
	size  int64
	mtime time.Time
}

// Parse reads a slurm.conf from r. filename names it in messages, and
// Include lines with relative paths are read from its folder.
func Parse(r io.Reader, filename string) (*Config, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", filename, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("read %s: larger than %d bytes", filename, maxFileSize)
	}
	return parse(data, filename, readLimited)
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxFileSize)
	}
	return data, nil
}

func parse(data []byte, filename string, readFile func(string) ([]byte, error)) (*Config, error) {
	return parseWith(data, filename, readFile, defaultLimits)
}

func parseWith(data []byte, filename string, readFile func(string) ([]byte, error), lim limits) (*Config, error) {
	p := newParser(filename, readFile, lim)
	p.cfg.Files = append(p.cfg.Files, filename)
	p.active[filename] = true
	if p.parseFile(data, filename) == nil {
		p.finish(filename)
	}
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	return p.cfg, nil
}

// logicalLine is one line of a file once comments, continuations and
// escapes are handled.
type logicalLine struct {
	text string
	// line is the number of its first physical line.
	line int
}

// logicalLines splits a file as Slurm's _get_next_line does: an unescaped
// '#' starts a comment; a line ending (blanks aside) in an odd number of
// backslashes is joined with the next one, without the last backslash;
// then every backslash escapes the character that follows it.
func logicalLines(data []byte) []logicalLine {
	var (
		out   []logicalLine
		buf   []byte
		start = 0
		num   = 0
	)
	for len(data) > 0 {
		var phys []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			phys, data = data[:i+1], data[i+1:]
		} else {
			phys, data = data, nil
		}
		num++
		if buf == nil {
			start = num
		}
		phys = stripComment(phys)
		if cut, ok := continuation(phys); ok {
			buf = append(buf, phys[:cut]...)
			if buf == nil {
				buf = []byte{}
			}
			if len(data) > 0 {
				continue
			}
		} else {
			buf = append(buf, phys...)
		}
		out = append(out, logicalLine{text: stripEscapes(buf), line: start})
		buf = nil
	}
	return out
}

// stripComment cuts the line at the first '#' not preceded by an odd
// number of backslashes.
func stripComment(line []byte) []byte {
	bs := 0
	for i, c := range line {
		switch {
		case c == '#' && bs%2 == 0:
			return line[:i]
		case c == '\\':
			bs++
		default:
			bs = 0
		}
	}
	return line
}

// continuation reports whether line ends, before any trailing blanks, with
// an odd number of backslashes, and where to cut it: at the last
// backslash, so that the even number before it stays as escapes.
func continuation(line []byte) (int, bool) {
	i := len(line) - 1
	for i >= 0 && isSpace(line[i]) {
		i--
	}
	bs := 0
	for i >= 0 && line[i] == '\\' {
		bs++
		i--
	}
	if bs%2 == 1 {
		return i + bs, true
	}
	return 0, false
}

// stripEscapes drops every backslash and keeps the character after it.
func stripEscapes(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '\\' {
			i++
			if i == len(b) {
				break
			}
		}
		out = append(out, b[i])
	}
	return string(out)
}

// isSpace matches C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// pair is one key=value found on a line.
type pair struct {
	key   string
	op    byte // 0, or one of + - * / before '='
	value string
	// text is the pair as written, for messages.
	text string
}

// nextPair reads the key=value at the start of s (after blanks) with the
// rules of Slurm's key-value pattern: a key of letters, digits, '_' and
// '.', blanks allowed around '=', and a value that is a double-quoted
// string (blanks allowed, no quotes inside) followed by a blank or the end,
// or else a run of non-blank characters. rest is what follows the value.
func nextPair(s string) (p pair, rest string, ok bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	start := i
	for i < len(s) && isKeyChar(s[i]) {
		i++
	}
	if i == start {
		return pair{}, s, false
	}
	p.key = s[start:i]
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i < len(s) && strings.IndexByte("+-*/", s[i]) >= 0 {
		p.op = s[i]
		i++
	}
	if i == len(s) || s[i] != '=' {
		return pair{}, s, false
	}
	i++
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i == len(s) {
		return pair{}, s, false
	}
	if s[i] == '"' {
		if j := strings.IndexByte(s[i+1:], '"'); j >= 0 {
			end := i + 1 + j
			if end+1 == len(s) || isSpace(s[end+1]) {
				p.value = s[i+1 : end]
				p.text = s[start : end+1]
				return p, s[end+1:], true
			}
		}
	}
	j := i
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	p.value = s[i:j]
	p.text = s[start:j]
	return p, s[j:], true
}

// isBlank reports whether s holds only white space.
func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isSpace(s[i]) {
			return false
		}
	}
	return true
}

// errNotKeyValue is Slurm's "Parse error" for text that is not key=value.
var errNotKeyValue = errors.New("not a key=value pair")

// parseFile parses one file's contents; file names it. It returns
// errTooManyErrors when parsing must stop; errors are collected in p.errs.
func (p *parser) parseFile(data []byte, file string) error {
	for _, l := range logicalLines(data) {
		if err := p.parseLine(file, l.line, l.text); errors.Is(err, errTooManyErrors) {
			return err
		}
	}
	return nil
}

// parseLine handles one logical line. It returns errReported when it
// recorded an error and errTooManyErrors once parsing should stop.
func (p *parser) parseLine(file string, line int, text string) error {
	if isBlank(text) {
		return nil
	}
	if len(text) > len("include") && strings.EqualFold(text[:len("include")], "include") && isSpace(text[len("include")]) {
		return p.include(file, line, text[len("include"):])
	}
	kv, rest, ok := nextPair(text)
	if !ok {
		return p.errorf(file, line, strings.TrimSpace(text), "%w", errNotKeyValue)
	}
	info, known := globalKeys.lookup(kv.key)
	if known && info.kind == kindRecord {
		return p.record(file, line, info.name, kv, rest)
	}
	if !isBlank(rest) {
		return p.errorf(file, line, strings.TrimSpace(rest), "%w (one setting per line)", errNotKeyValue)
	}
	e := Entry{Key: kv.key, Value: kv.value, File: file, Line: line}
	if !known {
		p.cfg.Entries = append(p.cfg.Entries, e)
		p.cfg.Unknown = append(p.cfg.Unknown, e)
		p.warnf(file, line, "unknown key %q ignored", kv.key)
		return nil
	}
	e.Key = info.name
	if kv.op != 0 {
		p.warnf(file, line, "%s: operator %q ignored", kv.text, string(kv.op)+"=")
	}
	switch info.kind {
	case kindDefunct:
		p.warnf(file, line, "The option %q is defunct, please remove it from slurm.conf.", info.name)
	case kindArray:
	default:
		if err := checkValue(info, kv.value); err != nil {
			return p.errorf(file, line, kv.text, "%w", err)
		}
		lower := strings.ToLower(info.name)
		if _, dup := p.globals[lower]; dup {
			p.warnf(file, line, "%s specified more than once, latest value used", info.name)
		}
		p.globals[lower] = e
	}
	p.cfg.Entries = append(p.cfg.Entries, e)
	return nil
}

// include handles "Include <file>" as Slurm's _parse_include_directive
// does; args is what follows the word Include.
func (p *parser) include(file string, line int, args string) error {
	args = strings.TrimLeft(args, " \t\n\v\f\r")
	end := 0
	for end < len(args) && !isSpace(args[end]) {
		end++
	}
	name, rest := args[:end], args[end:]
	ctx := "Include " + name
	if name == "" {
		return p.errorf(file, line, "Include", "missing file name")
	}
	if !isBlank(rest) {
		return p.errorf(file, line, strings.TrimSpace(rest), "%w after Include file name", errNotKeyValue)
	}
	if strings.Contains(name, "%c") {
		cluster, ok := p.globals["clustername"]
		if !ok {
			return p.errorf(file, line, ctx, "no ClusterName set before the Include that uses %%c")
		}
		name = strings.ReplaceAll(name, "%c", strings.ToLower(cluster.Value))
	}
	if strings.Contains(name, "*") {
		return p.errorf(file, line, ctx, "glob patterns are not supported in Include")
	}
	path := name
	if !filepath.IsAbs(path) {
		path = filepath.Join(p.baseDir, path)
	}
	if p.active[path] || p.depth >= maxIncludeDepth {
		return p.errorf(file, line, ctx, "Include loop or more than %d nested Include files", maxIncludeDepth)
	}
	data, err := p.readFile(path)
	if err != nil {
		return p.errorf(file, line, ctx, "%w", err)
	}
	p.cfg.Files = append(p.cfg.Files, path)
	p.active[path] = true
	p.depth++
	err = p.parseFile(data, path)
	p.depth--
	delete(p.active, path)
	return err
}

// recordPairs reads the key=value pairs that follow the first one on a
// record line, checking keys against table and values against their
// kinds. Unknown keys become warnings; a value Slurm would refuse is an
// error.
func (p *parser) recordPairs(file string, line int, record string, table keyTable, rest string) (map[string]Entry, []Entry, error) {
	vals := make(map[string]Entry)
	var all []Entry
	failed := false
	for {
		kv, r, ok := nextPair(rest)
		if !ok {
			break
		}
		rest = r
		e := Entry{Key: kv.key, Value: kv.value, File: file, Line: line}
		info, known := table.lookup(kv.key)
		if !known {
			p.cfg.Unknown = append(p.cfg.Unknown, e)
			p.warnf(file, line, "unknown key %q in %s ignored", kv.key, record)
			continue
		}
		e.Key = info.name
		if err := checkValue(info, kv.value); err != nil {
			if perr := p.errorf(file, line, kv.text, "%w", err); errors.Is(perr, errTooManyErrors) {
				return nil, nil, perr
			}
			failed = true
			continue
		}
		lower := strings.ToLower(info.name)
		if _, dup := vals[lower]; dup {
			p.warnf(file, line, "%s specified more than once in %s, latest value used", info.name, record)
		}
		vals[lower] = e
		all = append(all, e)
	}
	if !isBlank(rest) {
		return nil, nil, p.errorf(file, line, strings.TrimSpace(rest), "%w", errNotKeyValue)
	}
	if failed {
		return nil, nil, errReported
	}
	return vals, all, nil
}

// errorf records an error at file:line and returns errReported, or
// errTooManyErrors when the limit is reached.
func (p *parser) errorf(file string, line int, context, format string, args ...any) error {
	if len(p.errs) >= maxErrors {
		return errTooManyErrors // the limit was reached and said so
	}
	p.errs = append(p.errs, &ParseError{File: file, Line: line, Context: context, Err: fmt.Errorf(format, args...)})
	if len(p.errs) == maxErrors {
		p.errs = append(p.errs, &ParseError{File: file, Line: line, Err: errTooManyErrors})
		return errTooManyErrors
	}
	return errReported
}

// warnf records a warning at file:line.
func (p *parser) warnf(file string, line int, format string, args ...any) {
	p.cfg.Warnings = append(p.cfg.Warnings, Warning{File: file, Line: line, Text: fmt.Sprintf(format, args...)})
}

// reportf records an error where the caller goes on regardless (checks of
// the whole configuration); errorf's result only matters while reading
// lines.
func (p *parser) reportf(file string, line int, context, format string, args ...any) {
	_ = p.errorf(file, line, context, format, args...)
}

// ParseNodeLine reads one NodeName line given at run time (scontrol
// create, slurmd -Z's definition) as slurm.conf would read it; a name
// with a range gives several nodes. Anything but node lines is refused.
func ParseNodeLine(line string) ([]Node, error) {
	line = strings.TrimSpace(line)
	if strings.ContainsAny(line, "\n\r") {
		return nil, fmt.Errorf("one line expected")
	}
	if k, _, _ := strings.Cut(line, "="); !strings.EqualFold(k, "NodeName") {
		return nil, fmt.Errorf("not a NodeName line: %q", line)
	}
	// The globals every slurm.conf needs, so that the line is read alone.
	cfg, err := parse([]byte("ClusterName=line\nSlurmctldHost=line\n"+line+"\n"), "node line", func(string) ([]byte, error) {
		return nil, fmt.Errorf("Include is not allowed here")
	})
	if err != nil {
		return nil, err
	}
	if len(cfg.Nodes) == 0 {
		return nil, fmt.Errorf("no node in %q", line)
	}
	return cfg.Nodes, nil
}
