package sacctmgr

import (
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cstrconv"
)

// abbrev reports whether word names name as sacctmgr matches its
// keywords, xstrncasecmp(word, name, MAX(len(word), min)): word is a
// case-blind prefix of name at least min long, or name itself.
func abbrev(word, name string, min int) bool {
	n := max(len(word), min)
	for i := 0; i < n; i++ {
		var a, b byte
		if i < len(word) {
			a = lower(word[i])
		}
		if i < len(name) {
			b = lower(name[i])
		}
		if a != b {
			return false
		}
		if a == 0 {
			return true
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// option is one word of a command, split as sacctmgr's
// parse_option_end splits it: "Key", "Key=value", "Key+=value" or
// "Key-=value".
type option struct {
	word  string // the whole word, as messages quote it
	key   string // before '=' (and the operator)
	value string
	op    byte // '+', '-' or 0
	eq    bool // the word has a '='
}

func parseOption(word string) option {
	o := option{word: word, key: word}
	i := strings.IndexByte(word, '=')
	if i < 0 {
		return o
	}
	o.eq, o.key, o.value = true, word[:i], word[i+1:]
	if i > 0 && (word[i-1] == '+' || word[i-1] == '-') {
		o.op, o.key = word[i-1], word[:i-1]
	}
	return o
}

// arg is what the option gives: its value, or for a bare word the word
// itself, which sacctmgr reads as a name.
func (o option) arg() string {
	if !o.eq {
		return o.word
	}
	return o.value
}

// is reports whether the option's key names name (see abbrev).
func (o option) is(name string, min int) bool { return abbrev(o.key, name, min) }

// addToList adds a comma-separated list of names to list as
// slurm_addto_char_list does: a leading quote ends the list at its match
// (other quotes become '`'), names are trimmed (and lowercased when
// lowerCase), a name given twice moves to the end, empty names are
// dropped, unless nothing else was given ("user=”").
func addToList(list []string, names string, lowerCase bool) []string {
	add := func(name string) {
		name = strings.TrimSpace(name)
		if lowerCase {
			name = strings.ToLower(name)
		}
		out := list[:0]
		for _, n := range list {
			if n != name {
				out = append(out, n)
			}
		}
		list = append(out, name)
	}
	b := []byte(names)
	i := 0
	var quote byte
	if len(b) > 0 && (b[0] == '"' || b[0] == '\'') {
		quote = b[0]
		i++
	}
	start, count := i, len(list)
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case quote != 0 && c == quote:
			goto done
		case c == '"' || c == '\'':
			b[i] = '`'
		case c == ',':
			if i+1 == len(b) {
				goto done
			}
			if i != start {
				add(string(b[start:i]))
			}
			start = i + 1
		}
	}
done:
	if count == len(list) || i-start > 0 {
		add(string(b[start:i]))
	}
	return list
}

// stripQuotes reads a value as sacctmgr's strip_quotes does: an opening
// quote ends at its match, other quotes become '`', spaces around are
// trimmed, and the rest is lowercased when lowerCase.
func stripQuotes(v string, lowerCase bool) string {
	b := []byte(v)
	i := 0
	var quote byte
	if len(b) > 0 && (b[0] == '"' || b[0] == '\'') {
		quote = b[0]
		i++
	}
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	start := i
	for ; i < len(b); i++ {
		c := b[i]
		if quote != 0 && c == quote {
			break
		}
		if c == '"' || c == '\'' {
			b[i] = '`'
		} else if lowerCase {
			b[i] = lower(c)
		}
	}
	for i > start && isSpace(b[i-1]) {
		i--
	}
	return string(b[start:i])
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// getUint reads a number as sacctmgr's get_uint does: strtol on the
// unquoted value, all of it; a negative number means "clear" (Slurm's
// INFINITE). ok is false when the value is not a number, which is an
// error worth "Invalid value for <what> (<value>)".
func getUint(v string) (n uint32, clear, ok bool) {
	v = stripQuotes(v, true)
	x, good := strtol(v)
	if !good {
		return 0, false, false
	}
	if x < 0 {
		return 0, true, true
	}
	if x > 1<<32-1 {
		x = 1<<32 - 1
	}
	return uint32(x), false, true
}

// uintValue reads an option's number with getUint, reporting a bad one
// as a bad value for what, as sacctmgr does.
func (c *cmd) uintValue(o option, what string) (n uint32, clear, ok bool) {
	n, clear, ok = getUint(o.value)
	if !ok {
		c.slurmError("Invalid value for %s (%s)", what, stripQuotes(o.value, true))
	}
	return n, clear, ok
}

// idList reads a list of ids in a condition, refusing each that is not
// a number as a bad value for what, as sacctmgr does.
func (c *cmd) idList(v, what string) []string {
	var ids []string
	for _, id := range addToList(nil, v, true) {
		if _, _, ok := getUint(id); !ok {
			c.slurmError("Invalid value for %s (%s)", what, id)
			c.fail()
			continue
		}
		ids = append(ids, id)
	}
	return ids
}

// strtol reads what C's strtol reads when the whole string must be used:
// white space, a sign and decimal digits ("" and white space alone are 0,
// as strtol returns for them).
func strtol(s string) (int64, bool) {
	if strings.TrimLeft(s, " \t\n\r\v\f") == "" {
		return 0, true
	}
	n, rest := cstrconv.Strtol(s)
	return n, rest == ""
}

// getDouble reads a floating point value as get_double does (negative:
// clear).
func getDouble(v string) (f float64, clear, ok bool) {
	v = stripQuotes(v, true)
	x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil {
		return 0, false, false
	}
	if x < 0 {
		return 0, true, true
	}
	return x, false, true
}

// splitLine breaks a line of the interactive mode into words as
// sacctmgr's _get_command does: white space separates words except
// inside quotes, which stay part of the word.
func splitLine(line string) []string {
	var words []string
	i := 0
	for i < len(line) {
		if isSpace(line[i]) {
			i++
			continue
		}
		start := i
		var dq, sq bool
		for i++; i < len(line); i++ {
			c := line[i]
			if c == '"' {
				dq = !dq
				continue
			}
			if c == '\'' {
				sq = !sq
				continue
			}
			if dq || sq {
				continue
			}
			if isSpace(c) {
				break
			}
		}
		words = append(words, line[start:i])
	}
	return words
}
