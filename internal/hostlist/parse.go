package hostlist

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// numRange is one "lo-hi" (or single "n") element of a bracket group. width
// is the length of lo as written, including leading zeros: every number of
// the range is zero-padded to it, as Slurm's hostrange does.
type numRange struct {
	lo, hi uint64
	width  int
}

// item is one separator-delimited element of an expression: a plain host
// name, or literal text interleaved with bracket groups. lits has one more
// entry than groups (lits[i] precedes groups[i]; the last entry is the text
// after the last group, always empty since text after ']' is refused).
type item struct {
	plain  string
	lits   []string
	groups [][]numRange
}

// size counts hosts and bytes of expanded names.
type size struct {
	hosts, bytes uint64
}

// isSep reports whether c separates items. Slurm's hostlist_create splits
// on comma, space and tab; newlines and carriage returns are accepted too,
// as scontrol does for host files (it turns newlines into commas).
func isSep(c byte) bool {
	return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// isBlank reports whether c is white space ignored around numbers inside
// brackets.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// isControl reports bytes that never belong in a host name.
func isControl(c byte) bool {
	return c < 0x20 || c == 0x7f
}

func invalid(itemText, format string, args ...any) error {
	return &Error{Item: itemText, Reason: fmt.Sprintf(format, args...), Kind: ErrInvalid}
}

func tooLarge(itemText, format string, args ...any) error {
	return &Error{Item: itemText, Reason: fmt.Sprintf(format, args...), Kind: ErrTooLarge}
}

// parse splits expr into items and computes the size of the expansion,
// refusing syntax errors and expansions beyond the limits before anything
// is built. Items are kept only when keep is set (Count needs none).
func parse(expr string, keep bool) ([]item, size, error) {
	var (
		items []item
		total size
	)
	i, n := 0, len(expr)
	for {
		for i < n && isSep(expr[i]) {
			i++
		}
		if i == n {
			return items, total, nil
		}
		start := i
		inBracket := false
		for ; i < n; i++ {
			c := expr[i]
			if c == '[' {
				if inBracket {
					return nil, size{}, invalid(expr[start:tokenEnd(expr, i)], "nested '['")
				}
				inBracket = true
			} else if c == ']' {
				if !inBracket {
					return nil, size{}, invalid(expr[start:tokenEnd(expr, i)], "unexpected ']'")
				}
				inBracket = false
			} else if !inBracket && isSep(c) {
				break
			}
		}
		tok := expr[start:i]
		if inBracket {
			return nil, size{}, invalid(tok, "unclosed '['")
		}
		it, sz, err := parseItem(tok)
		if err != nil {
			return nil, size{}, err
		}
		total.hosts += sz.hosts
		total.bytes += sz.bytes
		if total.hosts > MaxHosts {
			return nil, size{}, tooLarge(tok, "more than %d hosts", MaxHosts)
		}
		if total.bytes > MaxBytes {
			return nil, size{}, tooLarge(tok, "more than %d bytes of host names", MaxBytes)
		}
		if keep {
			items = append(items, it)
		}
	}
}

// tokenEnd returns the end of the item that contains position i, for error
// messages: the next separator at or after i (brackets no longer matter
// once the item is known to be malformed).
func tokenEnd(expr string, i int) int {
	for i < len(expr) && !isSep(expr[i]) {
		i++
	}
	return i
}

// parseItem parses one item whose brackets are known to be balanced and
// not nested.
func parseItem(tok string) (item, size, error) {
	open := strings.IndexByte(tok, '[')
	if open < 0 {
		if err := checkLiteral(tok, tok); err != nil {
			return item{}, size{}, err
		}
		return item{plain: tok}, size{hosts: 1, bytes: uint64(len(tok))}, nil
	}

	var (
		it      item
		hosts   uint64 = 1
		litLen  uint64
		counts  []uint64
		digitsB []uint64
	)
	rest := tok
	for open >= 0 {
		closeIdx := open + strings.IndexByte(rest[open:], ']')
		if err := checkLiteral(tok, rest[:open]); err != nil {
			return item{}, size{}, err
		}
		it.lits = append(it.lits, rest[:open])
		litLen += uint64(open)
		ranges, count, nbytes, err := parseGroup(tok, rest[open+1:closeIdx])
		if err != nil {
			return item{}, size{}, err
		}
		it.groups = append(it.groups, ranges)
		counts = append(counts, count)
		digitsB = append(digitsB, nbytes)
		hosts *= count // both factors are at most MaxHosts: no overflow
		if hosts > MaxHosts {
			return item{}, size{}, tooLarge(tok, "more than %d hosts", MaxHosts)
		}
		rest = rest[closeIdx+1:]
		open = strings.IndexByte(rest, '[')
	}
	if rest != "" {
		// Slurm refuses this too ("invalid suffix"): a hostlist item
		// ends with its last bracket group.
		return item{}, size{}, invalid(tok, "text %q after ']'", rest)
	}
	it.lits = append(it.lits, "")

	// Every literal appears once per host; the digits of group g appear
	// once per combination of the other groups.
	nbytes := mulSat(hosts, litLen)
	for g := range counts {
		nbytes = addSat(nbytes, mulSat(digitsB[g], hosts/counts[g]))
	}
	if nbytes > MaxBytes {
		return item{}, size{}, tooLarge(tok, "more than %d bytes of host names", MaxBytes)
	}
	return it, size{hosts: hosts, bytes: nbytes}, nil
}

// checkLiteral refuses control characters in the literal text of a host
// name: they can only come from garbage input.
func checkLiteral(tok, lit string) error {
	for j := 0; j < len(lit); j++ {
		if isControl(lit[j]) {
			return invalid(tok, "control character %q", lit[j])
		}
	}
	return nil
}

// parseGroup parses the inside of one bracket group of tok: a
// comma-separated list of numbers and "lo-hi" ranges. It returns the
// ranges, the number of values and the total length of the formatted
// values.
func parseGroup(tok, s string) ([]numRange, uint64, uint64, error) {
	if strings.TrimLeft(s, " \t\r\n") == "" {
		return nil, 0, 0, invalid(tok, "empty brackets")
	}
	var (
		ranges []numRange
		count  uint64
		nbytes uint64
	)
	for part := range strings.SplitSeq(s, ",") {
		p := trimBlank(part)
		if p == "" {
			return nil, 0, 0, invalid(tok, "empty range in brackets")
		}
		loText, hiText, isRange := strings.Cut(p, "-")
		loText = trimBlank(loText)
		lo, err := parseNumber(tok, p, loText)
		if err != nil {
			return nil, 0, 0, err
		}
		hi := lo
		if isRange {
			if hi, err = parseNumber(tok, p, trimBlank(hiText)); err != nil {
				return nil, 0, 0, err
			}
		}
		if lo > hi {
			return nil, 0, 0, invalid(tok, "reversed range %q", p)
		}
		n := hi - lo + 1
		if n > MaxRange {
			// Slurm: "Too many hosts in range".
			return nil, 0, 0, tooLarge(tok, "range %q has more than %d hosts", p, MaxRange)
		}
		count += n
		if count > MaxHosts {
			return nil, 0, 0, tooLarge(tok, "more than %d hosts", MaxHosts)
		}
		w := len(loText)
		nbytes += digitBytes(lo, hi, w)
		ranges = append(ranges, numRange{lo: lo, hi: hi, width: w})
	}
	return ranges, count, nbytes, nil
}

// parseNumber parses an unsigned decimal number of at most maxDigits
// digits; part is the range it belongs to, for the message.
func parseNumber(tok, part, s string) (uint64, error) {
	if s == "" {
		return 0, invalid(tok, "invalid range %q", part)
	}
	for j := 0; j < len(s); j++ {
		if s[j] < '0' || s[j] > '9' {
			return 0, invalid(tok, "invalid range %q", part)
		}
	}
	if len(s) > maxDigits {
		return 0, invalid(tok, "number %q too long", s)
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil { // unreachable: at most 18 digits
		return 0, invalid(tok, "invalid range %q", part)
	}
	return v, nil
}

func trimBlank(s string) string {
	for s != "" && isBlank(s[0]) {
		s = s[1:]
	}
	for s != "" && isBlank(s[len(s)-1]) {
		s = s[:len(s)-1]
	}
	return s
}

// numDigits returns the number of decimal digits of v (1 for 0).
func numDigits(v uint64) int {
	d := 1
	for v >= 10 {
		v /= 10
		d++
	}
	return d
}

// pow10 returns 10^d for d <= 19.
func pow10(d int) uint64 {
	p := uint64(1)
	for ; d > 0; d-- {
		p *= 10
	}
	return p
}

// digitBytes returns the total length of the numbers lo..hi each
// zero-padded to width w, without iterating over the range.
func digitBytes(lo, hi uint64, w int) uint64 {
	var total uint64
	for d := numDigits(lo); d <= numDigits(hi); d++ {
		first, last := lo, hi
		if d > 1 {
			first = max(first, pow10(d-1))
		}
		if d < 19 {
			last = min(last, pow10(d)-1)
		}
		total += (last - first + 1) * uint64(max(w, d))
	}
	return total
}

func mulSat(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}

func addSat(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// appendPadded appends v zero-padded to width w.
func appendPadded(buf []byte, v uint64, w int) []byte {
	for d := numDigits(v); d < w; d++ {
		buf = append(buf, '0')
	}
	return strconv.AppendUint(buf, v, 10)
}

// expand appends the names of it to out; buf is scratch space.
func (it *item) expand(out []string, buf []byte) []string {
	if it.lits == nil {
		return append(out, it.plain)
	}
	return it.gen(out, buf, 0)
}

// gen expands groups[g:] after the text in buf, leftmost group outermost,
// which is the order Slurm's _push_range_list produces.
func (it *item) gen(out []string, buf []byte, g int) []string {
	buf = append(buf, it.lits[g]...)
	if g == len(it.groups) {
		return append(out, string(buf))
	}
	for _, r := range it.groups[g] {
		for v := r.lo; ; v++ {
			out = it.gen(out, appendPadded(buf, v, r.width), g+1)
			if v == r.hi {
				break
			}
		}
	}
	return out
}
