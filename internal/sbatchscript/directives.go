package sbatchscript

import (
	"bytes"
	"fmt"
	"strings"
)

// Prefix is the marker of sbatch's directives.
const Prefix = "#SBATCH"

// LegacyPrefix is the marker older Slurm releases used; sbatch still reads
// it but asks the user to change it (see LegacyWarning).
const LegacyPrefix = "#SLURM"

// LegacyWarning is the error line sbatch prints, once, when a script uses
// LegacyPrefix.
const LegacyWarning = "Change from #SLURM to #SBATCH in your script and verify the options are valid in sbatch"

// Directive is one directive line of a script.
type Directive struct {
	// Line is the 1-based line number in the script.
	Line int
	// Prefix is the marker the line started with ("#SBATCH").
	Prefix string
	// Args are the words of the line after the marker, quotes and escapes
	// removed, up to an unquoted '#'. They are command-line options for the
	// caller's option parser.
	Args []string
	// Separator is set for a "hetjob" (or the deprecated "packjob") line,
	// which starts the options of the next component of a heterogeneous
	// job; Args is empty on such a line, as sbatch ignores the rest of it.
	Separator bool
}

// SyntaxError is a directive sbatch cannot split into words. sbatch treats it
// as fatal; Message gives its wording.
type SyntaxError struct {
	// Line is the 1-based line number in the script.
	Line int
	// Text is the rest of the line from the start of the faulty word, the
	// way sbatch shows it between brackets.
	Text string
	// Quote is the quote character left open, or 0 for a word starting
	// with ':' (a stray heterogeneous job separator).
	Quote byte
}

// Error implements error, without a file name.
func (e *SyntaxError) Error() string {
	return e.Message("script")
}

// Message words the error as sbatch's fatal message does for the script
// file (the script's base name, or "stdin"): "job.sh: line 3: Unmatched `"`
// in [ --comment="abc]".
func (e *SyntaxError) Message(file string) string {
	if e.Quote == 0 {
		return fmt.Sprintf("%s: line %d: Unexpected `:` in [%s]", file, e.Line, e.Text)
	}
	return fmt.Sprintf("%s: line %d: Unmatched `%c` in [%s]", file, e.Line, e.Quote, e.Text)
}

// Scan returns the directive lines of script marked with any of prefixes,
// in order. Like sbatch it reads only the block of comments at the top of the
// script: blank lines and lines whose first non-blank character is '#' are
// skipped, and the first other line ends the scan. A directive must start at
// the first column; its words are split as Directives describes.
//
// Scanning stops at a NUL byte, which ends the script for sbatch; Check
// refuses such scripts anyway.
func Scan(script []byte, prefixes ...string) ([]Directive, error) {
	if i := bytes.IndexByte(script, 0); i >= 0 {
		script = script[:i]
	}
	var out []Directive
	lineno := 0
	for len(script) > 0 {
		line := script
		if i := bytes.IndexByte(script, '\n'); i >= 0 {
			line, script = script[:i], script[i+1:]
		} else {
			script = nil
		}
		lineno++
		prefix := matchPrefix(line, prefixes)
		if prefix == "" {
			if isCommand(line) {
				break
			}
			continue
		}
		// As sbatch does, blanks after the marker are skipped before the
		// first word, so error messages quote the line from there.
		rest := strings.TrimLeft(string(line[len(prefix):]), " \t\n\v\f\r")
		d := Directive{Line: lineno, Prefix: prefix}
		if isSeparator(rest) {
			d.Separator = true
			out = append(out, d)
			continue
		}
		args, err := splitWords(rest, lineno)
		if err != nil {
			return nil, err
		}
		d.Args = args
		out = append(out, d)
	}
	return out, nil
}

// Directives returns the options of the script's directives marked with
// prefix ("#SBATCH", or a caller's own marker), in order, ready for an
// option parser: "#SBATCH -N 2 --job-name='my job'" gives "-N", "2",
// "--job-name=my job".
//
// Words are split on blanks. Single or double quotes group characters,
// blanks included, and are removed; a backslash makes the next character
// literal, inside quotes as well; an unquoted, unescaped '#' ends the line
// (a comment). A word made only of quotes ("") is empty and, as in sbatch,
// ends the line. An unmatched quote
// or a word starting with ':' is a *SyntaxError. A word "hetjob" or
// "packjob" ends the line; a line starting with one separates heterogeneous
// job components, and the lines after it belong to another component and are
// not returned.
func Directives(script []byte, prefix string) ([]string, error) {
	ds, err := Scan(script, prefix)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, d := range ds {
		if d.Separator {
			break
		}
		out = append(out, d.Args...)
	}
	return out, nil
}

// matchPrefix returns the first of prefixes line starts with, or "".
func matchPrefix(line []byte, prefixes []string) string {
	for _, p := range prefixes {
		if p != "" && bytes.HasPrefix(line, []byte(p)) {
			return p
		}
	}
	return ""
}

// isCommand reports whether a non-directive line ends the comment block:
// its first non-blank character is not '#'.
func isCommand(line []byte) bool {
	for _, c := range line {
		if isSpace(c) {
			continue
		}
		return c != '#'
	}
	return false
}

// isSeparator reports whether s (blanks already trimmed on the left) starts
// with the word "hetjob" or "packjob", any case.
func isSeparator(s string) bool {
	for _, w := range []string{"hetjob", "packjob"} {
		if len(s) >= len(w) && strings.EqualFold(s[:len(w)], w) &&
			(len(s) == len(w) || isSpace(s[len(w)])) {
			return true
		}
	}
	return false
}

// splitWords splits the text after a directive marker into words, following
// sbatch's rules (see Directives).
func splitWords(s string, lineno int) ([]string, error) {
	var out []string
	for {
		word, n, ok, err := nextWord(s, lineno)
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, word)
		s = s[n:]
	}
}

// nextWord reads one word from the start of s. It returns the word, the
// number of bytes of s consumed, and ok=false when the line has no more
// words (end of line, a comment, or an empty word).
func nextWord(s string, lineno int) (word string, n int, ok bool, err error) {
	start := s
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	// sbatch blanks out a separator word and then finds no word at all, so
	// a separator ends the line's words.
	if isSeparator(s[i:]) {
		return "", 0, false, nil
	}
	if i < len(s) && s[i] == ':' {
		return "", 0, false, &SyntaxError{Line: lineno, Text: start}
	}
	var b strings.Builder
	var quote byte
	escaped := false
	copied := false
	for i < len(s) && (quote != 0 || !isSpace(s[i])) && s[i] != '\n' {
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case c == '\\':
			i++
			// An escaped space is copied at once; any other escaped
			// character is copied by the next round, if the loop
			// condition lets it through (an escaped tab ends the word).
			if i < len(s) && s[i] == ' ' {
				b.WriteByte(' ')
				copied = true
				i++
				continue
			}
			escaped = true
			continue
		case quote != 0:
			if c == quote {
				quote = 0
				i++
				continue
			}
		case c == '"' || c == '\'':
			quote = c
			i++
			continue
		case c == '#':
			// The rest of the line is a comment; the next call finds
			// the '#' and reports the end of the words.
			return b.String(), i, copied, nil
		}
		b.WriteByte(c)
		copied = true
		i++
	}
	if quote != 0 {
		return "", 0, false, &SyntaxError{Line: lineno, Text: start, Quote: quote}
	}
	return b.String(), i, copied, nil
}
