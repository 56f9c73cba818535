package conf

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// maxLineBytes bounds one logical line (after joining continuations), as
// Slurm's parser reads into a fixed buffer; it keeps a hostile file from
// growing one line without limit.
const maxLineBytes = 1 << 20

// logicalLine is one line of the file after Slurm's line assembly: comments
// stripped, continuations joined, escapes removed. Line is the number of the
// first physical line.
type logicalLine struct {
	Line int
	Text string
}

// readLines assembles r into logical lines the way Slurm's config parser
// does:
//   - an unescaped '#' starts a comment that runs to the end of the line;
//   - an odd number of '\' at the end of a line (trailing blanks allowed
//     after them) joins it with the next line;
//   - then every "\x" becomes "x", so "\#" is a literal '#' and "\\" a '\'.
func readLines(r io.Reader) ([]logicalLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLineBytes)
	var (
		out   []logicalLine
		buf   strings.Builder
		start int
		n     int
	)
	for sc.Scan() {
		n++
		if buf.Len() == 0 {
			start = n
		}
		text := stripComment(strings.TrimRight(sc.Text(), "\r"))
		text, cont := stripContinuation(text)
		if buf.Len()+len(text) > maxLineBytes {
			return nil, fmt.Errorf("line %d: logical line longer than %d bytes", start, maxLineBytes)
		}
		buf.WriteString(text)
		if cont {
			continue
		}
		out = append(out, logicalLine{Line: start, Text: stripEscapes(buf.String())})
		buf.Reset()
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	if buf.Len() > 0 {
		// A continuation on the last line: Slurm parses what it has.
		out = append(out, logicalLine{Line: start, Text: stripEscapes(buf.String())})
	}
	return out, nil
}

// stripComment cuts s at the first '#' not preceded by an odd number of
// backslashes.
func stripComment(s string) string {
	bs := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '#':
			if bs%2 == 0 {
				return s[:i]
			}
			bs = 0
		case '\\':
			bs++
		default:
			bs = 0
		}
	}
	return s
}

// stripContinuation removes a trailing continuation backslash (an odd run of
// backslashes, possibly followed by blanks) and reports whether there was one.
func stripContinuation(s string) (string, bool) {
	end := len(strings.TrimRight(s, " \t\v\f"))
	bs := 0
	for i := end - 1; i >= 0 && s[i] == '\\'; i-- {
		bs++
	}
	if bs%2 == 1 {
		return s[:end-1], true
	}
	return s, false
}

// stripEscapes turns every "\x" into "x".
func stripEscapes(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			if i == len(s) {
				break
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// pair is one key=value of a line, the key as written.
type pair struct {
	Key   string
	Value string
}

// splitPairs splits a logical line into key=value pairs as Slurm's parser
// matches them: a key of letters, digits, '_' and '.', optional blanks
// around '=', and a value that is either "double quoted" (blanks allowed, no
// escapes) or a run of non-blank characters.
func splitPairs(s string) ([]pair, error) {
	var out []pair
	i := 0
	for {
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		if i == len(s) {
			return out, nil
		}
		k := i
		for i < len(s) && isKeyChar(s[i]) {
			i++
		}
		key := s[k:i]
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		if key == "" || i == len(s) || s[i] != '=' {
			return nil, fmt.Errorf("expected key=value at %q", clip(s[k:]))
		}
		i++
		for i < len(s) && isBlank(s[i]) {
			i++
		}
		var val string
		if i < len(s) && s[i] == '"' {
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote in value of %s", key)
			}
			val = s[i+1 : i+1+end]
			i += end + 2
			if i < len(s) && !isBlank(s[i]) {
				return nil, fmt.Errorf("text after the closing quote of %s", key)
			}
		} else {
			v := i
			for i < len(s) && !isBlank(s[i]) {
				i++
			}
			val = s[v:i]
		}
		out = append(out, pair{Key: key, Value: val})
	}
}

func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r' || c == '\n'
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 40
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
