package hostlist

import (
	"slices"
	"strconv"
	"strings"
)

// hostName is a host name split as Slurm's hostname_create does: a prefix
// and an optional numeric suffix (the trailing run of digits).
type hostName struct {
	prefix  string
	numeric bool
	num     uint64
	// width is the length of the digit suffix as written.
	width int
	// padded is true when the suffix has leading zeros ("007", "00"),
	// which pins the zero-padding width of any range holding it.
	padded bool
}

func splitName(s string) hostName {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	digits := len(s) - i
	if digits == 0 || digits > maxDigits {
		// Too long to be a number: the whole name is one opaque host,
		// and Expand reads it back verbatim.
		return hostName{prefix: s}
	}
	v, _ := strconv.ParseUint(s[i:], 10, 64) // at most 18 digits: cannot fail
	return hostName{prefix: s[:i], numeric: true, num: v, width: digits, padded: digits > 1 && s[i] == '0'}
}

// hostRange is a run of consecutive numbers sharing a prefix, or a single
// host without a numeric suffix.
type hostRange struct {
	prefix  string
	numeric bool
	lo, hi  uint64
	// width is the zero-padding width when some member is zero-padded, 0
	// when no member is (then every number prints plainly).
	width int
}

// push appends h to rs, extending the last range when h is its next number
// with a compatible zero padding, as Slurm's hostlist_push_range does. A
// range never grows beyond MaxRange hosts so that the result can be parsed
// back (Slurm itself would print "n[0-70000]" and then refuse to read it).
func push(rs []hostRange, h hostName) []hostRange {
	if n := len(rs); n > 0 && h.numeric {
		t := &rs[n-1]
		if t.numeric && t.prefix == h.prefix && t.hi+1 == h.num && t.hi-t.lo+1 < MaxRange && widthFits(t.width, h) {
			t.hi = h.num
			return rs
		}
	}
	r := hostRange{prefix: h.prefix, numeric: h.numeric, lo: h.num, hi: h.num}
	if h.padded {
		r.width = h.width
	}
	return append(rs, r)
}

// widthFits reports whether h can join a range whose padding width is w
// (0: unpadded) and still print as written: a zero-padded number needs
// exactly its own width; an unpadded number any width up to its length.
// This is the rule of Slurm's _width_equiv for consecutive numbers.
func widthFits(w int, h hostName) bool {
	if h.padded {
		return w == h.width
	}
	return w <= h.width
}

// format writes ranges the way Slurm's hostlist_ranged_string does:
// consecutive numeric ranges with the same prefix share one bracket, and a
// bracket is used only when it holds more than one host.
func format(rs []hostRange) string {
	var b strings.Builder
	var num []byte
	for i := 0; i < len(rs); {
		if i > 0 {
			b.WriteByte(',')
		}
		r := rs[i]
		b.WriteString(r.prefix)
		if !r.numeric {
			i++
			continue
		}
		j := i + 1
		for j < len(rs) && rs[j].numeric && rs[j].prefix == r.prefix {
			j++
		}
		bracket := j-i > 1 || r.lo != r.hi
		if bracket {
			b.WriteByte('[')
		}
		for k := i; k < j; k++ {
			if k > i {
				b.WriteByte(',')
			}
			num = appendPadded(num[:0], rs[k].lo, rs[k].width)
			b.Write(num)
			if rs[k].hi != rs[k].lo {
				b.WriteByte('-')
				num = appendPadded(num[:0], rs[k].hi, rs[k].width)
				b.Write(num)
			}
		}
		if bracket {
			b.WriteByte(']')
		}
		i = j
	}
	return b.String()
}

// Compress returns a hostlist expression for names, keeping their order and
// duplicates, as `scontrol show hostlist` does: runs of consecutive numbers
// with the same prefix and zero padding merge ("a1,a2,a3" is "a[1-3]"), and
// neighbouring runs with the same prefix share a bracket ("h3,h2,h1" is
// "h[3,2,1]"). Empty names are skipped. Names must be host names (as
// returned by Expand): ones containing separators or brackets cannot be
// represented.
func Compress(names []string) string {
	var rs []hostRange
	for _, n := range names {
		if n == "" {
			continue
		}
		rs = push(rs, splitName(n))
	}
	return format(rs)
}

// CompressSorted returns a hostlist expression for names in Slurm's host
// order (see Compare), as `scontrol show hostlistsorted` does: "n3,n1,n2,n10"
// is "n[1-3,10]". Like Slurm's hostlist_sort it keeps duplicates
// ("n1,n1" is "n[1,1]"); pass distinct names to get a set.
func CompressSorted(names []string) string {
	hs := make([]hostName, 0, len(names))
	for _, n := range names {
		if n != "" {
			hs = append(hs, splitName(n))
		}
	}
	slices.SortStableFunc(hs, compareNames)
	var rs []hostRange
	for _, h := range hs {
		rs = push(rs, h)
	}
	return format(rs)
}

// Sort sorts names in place in Slurm's host order (see Compare).
func Sort(names []string) {
	type keyed struct {
		h hostName
		s string
	}
	ks := make([]keyed, len(names))
	for i, n := range names {
		ks[i] = keyed{h: splitName(n), s: n}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return compareNames(a.h, b.h) })
	for i := range ks {
		names[i] = ks[i].s
	}
}

// Compare orders host names as Slurm's hostlist_sort does: by prefix in
// natural order (digit runs inside the prefix compare as numbers, so "r2n1"
// comes before "r10n1"), then a name without a numeric suffix before the
// numbered ones, then by number, with zero-padded numbers placed by width
// ("n9" < "n01" < "n10" < "n001" < "n100"). It returns -1, 0 or +1 and is 0
// only for equal strings.
func Compare(a, b string) int {
	return compareNames(splitName(a), splitName(b))
}

func compareNames(a, b hostName) int {
	if c := natCompare(a.prefix, b.prefix); c != 0 {
		return c
	}
	if c := strings.Compare(a.prefix, b.prefix); c != 0 {
		return c
	}
	switch {
	case !a.numeric && !b.numeric:
		return 0
	case !a.numeric:
		return -1
	case !b.numeric:
		return 1
	}
	ka1, ka2 := sortKey(a)
	kb1, kb2 := sortKey(b)
	switch {
	case ka1 != kb1:
		return cmpUint(ka1, kb1)
	case ka2 != kb2:
		return cmpUint(ka2, kb2)
	default:
		return cmpUint(a.num, b.num)
	}
}

// sortKey places a numbered host in Slurm's order. Slurm compares two
// suffixes by value when one zero-padding width prints both unchanged, and
// by width otherwise. So an unpadded number sits at its value, and a
// number padded to width w sits after every unpadded number shorter than w
// digits and before the first w-digit one, 10^(w-1) (first key), ahead of
// it (second key).
func sortKey(h hostName) (uint64, uint64) {
	if h.padded {
		return pow10(h.width - 1), 0
	}
	return h.num, 1
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// natCompare is the natural-order string comparison Slurm uses for host
// prefixes (strnatcmp): digit runs compare by value, except that a run
// starting with '0' compares digit by digit as a fraction would.
func natCompare(a, b string) int {
	ai, bi := 0, 0
	for {
		var ca, cb byte
		if ai < len(a) {
			ca = a[ai]
		}
		if bi < len(b) {
			cb = b[bi]
		}
		if isDigit(ca) && isDigit(cb) {
			var r int
			if ca == '0' || cb == '0' {
				r = compareLeft(a[ai:], b[bi:])
			} else {
				r = compareRight(a[ai:], b[bi:])
			}
			if r != 0 {
				return r
			}
		}
		if ai >= len(a) && bi >= len(b) {
			return 0
		}
		if ca != cb {
			return cmpUint(uint64(ca), uint64(cb))
		}
		ai++
		bi++
	}
}

// compareRight compares two digit runs without leading zeros by value: the
// longer run wins, and at equal length the first differing digit decides.
func compareRight(a, b string) int {
	bias := 0
	for i := 0; ; i++ {
		da := i < len(a) && isDigit(a[i])
		db := i < len(b) && isDigit(b[i])
		switch {
		case !da && !db:
			return bias
		case !da:
			return -1
		case !db:
			return 1
		}
		if bias == 0 && a[i] != b[i] {
			bias = cmpUint(uint64(a[i]), uint64(b[i]))
		}
	}
}

// compareLeft compares two digit runs digit by digit, left aligned.
func compareLeft(a, b string) int {
	for i := 0; ; i++ {
		da := i < len(a) && isDigit(a[i])
		db := i < len(b) && isDigit(b[i])
		switch {
		case !da && !db:
			return 0
		case !da:
			return -1
		case !db:
			return 1
		}
		if a[i] != b[i] {
			return cmpUint(uint64(a[i]), uint64(b[i]))
		}
	}
}
