package gres

import (
	"fmt"
	"strings"
)

// NodeGres is one entry of a node's GRES: the Gres= of a slurm.conf node
// line ("gpu:h100:8") or of sinfo/scontrol output, where slurmctld adds the
// sockets that the devices are bound to ("gpu:h100:8(S:0-1)").
type NodeGres struct {
	// Name is the GRES name ("gpu").
	Name string
	// Type is the GRES type ("h100"); empty for an untyped GRES.
	Type string
	// Count is the number of units on the node, after any k/m/g suffix.
	Count uint64
	// NoConsume marks a GRES that jobs share without using it up
	// ("bandwidth:lustre:no_consume:4G").
	NoConsume bool
	// Sockets lists the sockets the devices are bound to, as Slurm prints
	// them inside "(S:...)": "0-1", "0,2". Empty when not known.
	Sockets string
}

// String formats one entry as slurmctld does for a node's Gres=:
// name[:type][:no_consume]:count[(S:sockets)], the count shortened with
// K/M/G/T/P when a power of 1024 divides it ("mps:400", "bw:4G").
func (g NodeGres) String() string {
	var b strings.Builder
	b.WriteString(g.Name)
	if g.Type != "" {
		b.WriteByte(':')
		b.WriteString(g.Type)
	}
	if g.NoConsume {
		b.WriteString(":no_consume")
	}
	b.WriteByte(':')
	b.WriteString(formatCountSuffix(g.Count))
	if g.Sockets != "" {
		b.WriteString("(S:")
		b.WriteString(g.Sockets)
		b.WriteByte(')')
	}
	return b.String()
}

// FormatNodeGres joins a node's GRES entries with commas, leaving out
// entries with a count of 0 as slurmctld does. A node without GRES gives "";
// scontrol and sinfo print that as "(null)", REST as "".
func FormatNodeGres(gs []NodeGres) string {
	var parts []string
	for _, g := range gs {
		if g.Count == 0 {
			continue
		}
		parts = append(parts, g.String())
	}
	return strings.Join(parts, ",")
}

// ParseNodeGres parses a node GRES string: slurm.conf's Gres= value or what
// sinfo/scontrol print. Entries are comma-separated (commas inside "(S:...)"
// belong to the socket list) and read as Slurm reads slurm.conf:
//
//   - "gpu" is one unit, "gpu:tesla" one unit of type tesla;
//   - the last field is the count when it starts with a digit, with
//     Slurm's k/m/g/t/p suffixes;
//   - "no_consume" may stand in any field after the name;
//   - "(S:0-1)" at the end gives the sockets.
//
// "" and "(null)" mean no GRES and give a nil slice.
func ParseNodeGres(s string) ([]NodeGres, error) {
	if s == "" || s == "(null)" {
		return nil, nil
	}
	entries, err := splitTopLevel(s)
	if err != nil {
		return nil, fmt.Errorf("invalid node GRES %q: %w", s, err)
	}
	out := make([]NodeGres, 0, len(entries))
	for _, e := range entries {
		g, err := parseNodeEntry(e)
		if err != nil {
			return nil, fmt.Errorf("invalid node GRES %q: %w", s, err)
		}
		out = append(out, g)
	}
	return out, nil
}

// splitTopLevel splits s on the commas that are not inside parentheses.
func splitTopLevel(s string) ([]string, error) {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
			if depth > 1 {
				return nil, fmt.Errorf("nested '('")
			}
		case ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced ')'")
			}
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced '('")
	}
	return append(parts, s[start:]), nil
}

func parseNodeEntry(e string) (NodeGres, error) {
	var g NodeGres
	if e == "" {
		return g, fmt.Errorf("empty entry")
	}
	if open := strings.IndexByte(e, '('); open >= 0 {
		if !strings.HasSuffix(e, ")") {
			return g, fmt.Errorf("%q: text after ')'", e)
		}
		inner := e[open+1 : len(e)-1]
		socks, ok := strings.CutPrefix(inner, "S:")
		if !ok {
			return g, fmt.Errorf("%q: only (S:sockets) may follow the count", e)
		}
		ids, err := ParseIDList(socks)
		if err != nil {
			return g, fmt.Errorf("%q: sockets: %w", e, err)
		}
		g.Sockets = FormatIDList(ids)
		e = e[:open]
	}
	fields := strings.Split(e, ":")
	g.Name = fields[0]
	if !ValidName(g.Name) {
		return g, fmt.Errorf("%q: invalid GRES name %q", e, g.Name)
	}
	g.Count = 1
	rest := fields[1:]
	if n := len(rest); n > 0 && isCountToken(rest[n-1]) {
		c, err := parseCount(rest[n-1])
		if err != nil {
			return g, fmt.Errorf("%q: invalid count %q", e, rest[n-1])
		}
		g.Count = c
		rest = rest[:n-1]
	}
	for _, f := range rest {
		switch {
		case strings.EqualFold(f, "no_consume"):
			g.NoConsume = true
		case g.Type != "":
			return g, fmt.Errorf("%q: more than one type", e)
		case !validToken(f):
			return g, fmt.Errorf("%q: invalid GRES type %q", e, f)
		default:
			g.Type = f
		}
	}
	return g, nil
}
