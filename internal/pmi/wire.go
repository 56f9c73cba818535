// Package pmi serves the PMI wire protocols MPI libraries speak to the
// launcher that started them: PMI-1 (MPICH's simple PMI, lines of
// "cmd=... key=value" on the descriptor PMI_FD names) and PMI-2 (length-
// prefixed "cmd=...;key=value;" messages), as Slurm's mpi/pmi2 plugin
// serves both. A Server serves the tasks of one step on one node and
// exchanges what they publish with the step's other nodes at each fence
// through a function the node daemon gives it.
package pmi

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Limits of the protocol, as the server announces them (PMI-1
// get_maxes) and enforces them on what it reads.
const (
	MaxKVSName = 256
	MaxKey     = 256
	MaxValue   = 4096
	// maxLine bounds a PMI-1 line and a PMI-2 message.
	maxLine = MaxKey + MaxValue + 512
)

// ErrProtocol is wrapped by every error about bytes that are not a valid
// PMI message.
var ErrProtocol = errors.New("pmi: protocol error")

// Message is one request or response: its command and its attributes in
// order.
type Message struct {
	Cmd   string
	Attrs []Attr
}

// Attr is one key=value of a message.
type Attr struct{ Key, Value string }

// Get returns the value of key, and whether the message has it.
func (m Message) Get(key string) (string, bool) {
	for _, a := range m.Attrs {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// ParseV1 reads one PMI-1 line (without its newline): space-separated
// key=value words, the first "cmd=NAME". A value runs to the next space,
// except the last attribute's, which runs to the end of the line (MPICH
// sends put values and abort messages that way).
func ParseV1(line string) (Message, error) {
	rest, ok := strings.CutPrefix(line, "cmd=")
	if !ok {
		return Message{}, fmt.Errorf("%w: PMI-1 line does not start with cmd=: %.40q", ErrProtocol, line)
	}
	cmd, rest, _ := strings.Cut(rest, " ")
	if cmd == "" {
		return Message{}, fmt.Errorf("%w: empty command", ErrProtocol)
	}
	m := Message{Cmd: cmd}
	for rest != "" {
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			break
		}
		key, after, ok := strings.Cut(rest, "=")
		if !ok || key == "" || strings.ContainsAny(key, " ") {
			return Message{}, fmt.Errorf("%w: bad PMI-1 attribute in %.40q", ErrProtocol, rest)
		}
		value := after
		if i := strings.IndexByte(after, ' '); i >= 0 && strings.Contains(after[i:], "=") {
			value, after = after[:i], after[i:]
		} else {
			after = ""
		}
		m.Attrs = append(m.Attrs, Attr{key, value})
		rest = after
	}
	return m, nil
}

// FormatV1 writes m as a PMI-1 line, with its newline.
func FormatV1(m Message) string {
	var b strings.Builder
	b.WriteString("cmd=" + m.Cmd)
	for _, a := range m.Attrs {
		b.WriteString(" " + a.Key + "=" + a.Value)
	}
	b.WriteByte('\n')
	return b.String()
}

// ParseV2 reads one PMI-2 message body (after its length field):
// "cmd=NAME;key=value;...;", a ';' inside a value written ";;".
func ParseV2(body string) (Message, error) {
	var attrs []Attr
	for len(body) > 0 {
		key, rest, ok := strings.Cut(body, "=")
		if !ok || key == "" || strings.ContainsAny(key, ";") {
			return Message{}, fmt.Errorf("%w: bad PMI-2 attribute in %.40q", ErrProtocol, body)
		}
		var v strings.Builder
		i := 0
		for {
			if i >= len(rest) {
				return Message{}, fmt.Errorf("%w: PMI-2 attribute %q not ended by ';'", ErrProtocol, key)
			}
			if rest[i] == ';' {
				if i+1 < len(rest) && rest[i+1] == ';' {
					v.WriteByte(';')
					i += 2
					continue
				}
				break
			}
			v.WriteByte(rest[i])
			i++
		}
		attrs = append(attrs, Attr{key, v.String()})
		body = rest[i+1:]
	}
	if len(attrs) == 0 || attrs[0].Key != "cmd" || attrs[0].Value == "" {
		return Message{}, fmt.Errorf("%w: PMI-2 message without a command first", ErrProtocol)
	}
	return Message{Cmd: attrs[0].Value, Attrs: attrs[1:]}, nil
}

// FormatV2 writes m as a PMI-2 message: its 6-character length, then
// the body.
func FormatV2(m Message) string {
	var b strings.Builder
	b.WriteString("cmd=" + escapeV2(m.Cmd) + ";")
	for _, a := range m.Attrs {
		b.WriteString(a.Key + "=" + escapeV2(a.Value) + ";")
	}
	return fmt.Sprintf("%-6d", b.Len()) + b.String()
}

func escapeV2(s string) string { return strings.ReplaceAll(s, ";", ";;") }

// conn reads a client's messages in either protocol: a client starts in
// PMI-1 (a line beginning "cmd=") or PMI-2 (a length), and a PMI-1 client
// that asks for version 2 in its init switches to PMI-2 framing.
type conn struct {
	r  *bufio.Reader
	w  io.Writer
	v2 bool
}

// next reads the client's next message.
func (c *conn) next() (Message, error) {
	if !c.v2 {
		head, err := c.r.Peek(4)
		if err != nil {
			return Message{}, err
		}
		if string(head) != "cmd=" {
			c.v2 = true
		}
	}
	if c.v2 {
		return c.nextV2()
	}
	line, err := c.readLine()
	if err != nil {
		return Message{}, err
	}
	return ParseV1(line)
}

func (c *conn) readLine() (string, error) {
	var b []byte
	for {
		frag, isPrefix, err := c.r.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, frag...)
		if len(b) > maxLine {
			return "", fmt.Errorf("%w: PMI-1 line longer than %d bytes", ErrProtocol, maxLine)
		}
		if !isPrefix {
			return string(b), nil
		}
	}
}

func (c *conn) nextV2() (Message, error) {
	var lenField [6]byte
	if _, err := io.ReadFull(c.r, lenField[:]); err != nil {
		return Message{}, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(lenField[:])))
	if err != nil || n <= 0 || n > maxLine {
		return Message{}, fmt.Errorf("%w: PMI-2 length field %q", ErrProtocol, lenField[:])
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c.r, body); err != nil {
		return Message{}, err
	}
	return ParseV2(string(body))
}

// send writes a response in the client's protocol.
func (c *conn) send(m Message) error {
	var s string
	if c.v2 {
		s = FormatV2(m)
	} else {
		s = FormatV1(m)
	}
	_, err := io.WriteString(c.w, s)
	return err
}
