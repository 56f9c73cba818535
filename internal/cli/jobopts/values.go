package jobopts

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cstrconv"
)

// cStrtol parses the start of s as C's strtol(s, &end, 10) does
// (cstrconv.Strtol): the value, clamped to the int64 range on overflow,
// the unparsed rest, and whether any digit was read.
func cStrtol(s string) (v int64, rest string, ok bool) {
	v, rest = cstrconv.Strtol(s)
	return v, rest, len(rest) < len(s)
}

// atoll is strtoll(s, NULL, 10): junk after the number is ignored and no
// number at all reads as 0, as Slurm's --nice and --priority do.
func atoll(s string) int64 {
	v, _, _ := cStrtol(s)
	return v
}

func isCSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

func isBlank(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isCSpace(s[i]) {
			return false
		}
	}
	return true
}

// parseInt is Slurm's parse_int: a whole decimal number, at least 1 when
// positive is set (else at least 0), below INT_MAX. Failures exit 1.
func parseInt(name, val string, positive bool) (int, error) {
	v, rest, _ := cStrtol(val)
	if rest != "" || v < 0 || (positive && v <= 0) {
		return 0, intErrorf("Invalid numeric value \"%s\" for %s.", val, name)
	}
	if v >= math.MaxInt32 {
		return 0, intErrorf("Numeric argument (%d) too large for %s.", v, name)
	}
	return int(v), nil
}

// strToMbytes is Slurm's str_to_mbytes: a number of megabytes with an
// optional K, M, G or T suffix (optionally followed by B), rounding
// kilobytes up.
func strToMbytes(s string) (uint64, bool) {
	v, rest, ok := cStrtol(s)
	if !ok || v < 0 || v == math.MaxInt64 {
		return 0, false
	}
	u := uint64(v)
	if rest == "" {
		return u, true
	}
	unit := rest[0] | 0x20
	if len(rest) > 2 || (len(rest) == 2 && rest[1]|0x20 != 'b') {
		return 0, false
	}
	switch unit {
	case 'k':
		return (u + 1023) / 1024, true
	case 'm':
		return u, true
	case 'g':
		return mulCheck(u, 1024)
	case 't':
		return mulCheck(u, 1024*1024)
	}
	return 0, false
}

func mulCheck(u, m uint64) (uint64, bool) {
	if u > math.MaxUint64/m {
		return 0, false
	}
	return u * m, true
}

// strToNodes is Slurm's str_to_nodes: a count with an optional k or m
// suffix. ok is false without digits; the value is -1 when out of range.
func strToNodes(s string) (n int, rest string, ok bool) {
	v, rest, ok := cStrtol(s)
	if !ok {
		return -1, s, false
	}
	if rest != "" && (rest[0]|0x20) == 'k' {
		v *= 1024
		rest = rest[1:]
	}
	if rest != "" && (rest[0]|0x20) == 'm' {
		v *= 1024 * 1024
		rest = rest[1:]
	}
	if v < 0 || v > math.MaxInt32 {
		return -1, rest, true
	}
	return int(v), rest, true
}

// maxJobSizeBitmap bounds the node counts of a --nodes list, as Slurm's
// MAX_JOB_SIZE_BITMAP does.
const maxJobSizeBitmap = 16384

// parseNodeCount is Slurm's verify_node_count: "N", "min-max", or a list of
// sizes ("1,4,8", "2-8:2").
func parseNodeCount(arg string) (NodeCount, error) {
	bad := func(s string) error { return optErrorf("\"%s\" is not a valid node count", s) }
	var nc NodeCount
	switch {
	case strings.ContainsAny(arg, ",:"):
		sizes, ok := parseSizeList(arg)
		if !ok || len(sizes) == 0 {
			return NodeCount{}, bad(arg)
		}
		nc = NodeCount{Min: sizes[0], Max: sizes[len(sizes)-1], Sizes: arg}
	case strings.Contains(arg, "-"):
		minS, maxS, _ := strings.Cut(arg, "-")
		lo, rest, _ := strToNodes(minS)
		if !isBlank(rest) {
			return NodeCount{}, bad(minS)
		}
		if lo < 0 {
			lo = 1
		}
		hi, rest, _ := strToNodes(maxS)
		if !isBlank(rest) {
			return NodeCount{}, bad(maxS)
		}
		nc = NodeCount{Min: lo, Max: hi}
	default:
		n, rest, _ := strToNodes(arg)
		if !isBlank(rest) || n < 0 {
			return NodeCount{}, bad(arg)
		}
		nc = NodeCount{Min: n, Max: n}
	}
	if nc.Max != 0 && nc.Max < nc.Min {
		return NodeCount{}, optErrorf("Maximum node count %d is less than minimum node count %d", nc.Max, nc.Min)
	}
	return nc, nil
}

// parseSizeList reads a bitmap list of node counts: comma-separated
// numbers or ranges "a-b" with an optional step ":s". It returns the sorted
// distinct sizes.
func parseSizeList(s string) ([]int, bool) {
	var seen [maxJobSizeBitmap]bool
	count := 0
	for part := range strings.SplitSeq(s, ",") {
		rng, stepS, hasStep := strings.Cut(part, ":")
		loS, hiS, isRange := strings.Cut(rng, "-")
		lo, err := strconv.Atoi(loS)
		if err != nil || lo < 0 || lo >= maxJobSizeBitmap {
			return nil, false
		}
		hi, step := lo, 1
		if isRange {
			if hi, err = strconv.Atoi(hiS); err != nil || hi < lo || hi >= maxJobSizeBitmap {
				return nil, false
			}
		}
		if hasStep {
			if step, err = strconv.Atoi(stepS); err != nil || step <= 0 {
				return nil, false
			}
		}
		for n := lo; n <= hi; n += step {
			if !seen[n] {
				seen[n] = true
				count++
			}
		}
	}
	out := make([]int, 0, count)
	for n := 0; n < maxJobSizeBitmap && len(out) < count; n++ {
		if seen[n] {
			out = append(out, n)
		}
	}
	return out, true
}

// mailTypes are the REST names of the mail events, in Slurm's bit order.
var mailTypes = []string{"BEGIN", "END", "FAIL", "REQUEUE", "TIME=100%", "TIME=90%", "TIME=80%", "TIME=50%", "STAGE_OUT", "ARRAY_TASKS", "INVALID_DEPENDENCY"}

// parseMailType is Slurm's parse_mail_type: a comma list of event names;
// unknown names are skipped, NONE clears the list, and a list with nothing
// known in it is invalid.
func parseMailType(arg string) ([]string, bool) {
	set := map[string]bool{}
	none := false
	for tok := range strings.SplitSeq(arg, ",") {
		switch strings.ToUpper(tok) {
		case "NONE":
			set, none = map[string]bool{}, true
		case "ARRAY_TASKS":
			set["ARRAY_TASKS"] = true
		case "BEGIN":
			set["BEGIN"] = true
		case "END":
			set["END"] = true
		case "FAIL":
			set["FAIL"] = true
		case "INVALID_DEPEND":
			set["INVALID_DEPENDENCY"] = true
		case "REQUEUE":
			set["REQUEUE"] = true
		case "ALL":
			for _, t := range []string{"INVALID_DEPENDENCY", "BEGIN", "END", "FAIL", "REQUEUE", "STAGE_OUT"} {
				set[t] = true
			}
		case "STAGE_OUT":
			set["STAGE_OUT"] = true
		case "TIME_LIMIT":
			set["TIME=100%"] = true
		case "TIME_LIMIT_90":
			set["TIME=90%"] = true
		case "TIME_LIMIT_80":
			set["TIME=80%"] = true
		case "TIME_LIMIT_50":
			set["TIME=50%"] = true
		}
		if none {
			break
		}
	}
	if len(set) == 0 && !none {
		return nil, false
	}
	out := []string{}
	for _, t := range mailTypes {
		if set[t] {
			out = append(out, t)
		}
	}
	return out, true
}

// signalNames are the names Slurm's sig_name2num knows, with their numbers
// on Linux.
var signalNames = []struct {
	name string
	num  int
}{
	{"HUP", 1}, {"INT", 2}, {"QUIT", 3}, {"ABRT", 6}, {"KILL", 9}, {"ALRM", 14},
	{"TERM", 15}, {"CHLD", 17}, {"USR1", 10}, {"USR2", 12}, {"PIPE", 13}, {"URG", 23},
	{"CONT", 18}, {"STOP", 19}, {"TSTP", 20}, {"TTIN", 21}, {"TTOU", 22}, {"XCPU", 24},
}

// sigNameToNum is Slurm's sig_name2num: a number, or a signal name with or
// without "SIG", any case. 0 means unknown.
func sigNameToNum(s string) int {
	if v, rest, ok := cStrtol(s); ok {
		if isBlank(rest) && v >= math.MinInt32 && v <= math.MaxInt32 {
			return int(v)
		}
		return 0
	}
	p := strings.TrimLeft(s, " \t\n\v\f\r")
	if len(p) >= 3 && strings.EqualFold(p[:3], "SIG") {
		p = p[3:]
	}
	for _, sn := range signalNames {
		if len(p) >= len(sn.name) && strings.EqualFold(p[:len(sn.name)], sn.name) && isBlank(p[len(sn.name):]) {
			return sn.num
		}
	}
	return 0
}

// parseSignal is Slurm's get_signal_opts: [{R|B|RB|BR}:]sig[@delay].
func parseSignal(arg string) (Signal, bool) {
	var sig Signal
	s := arg
	if len(s) > 0 && (s[0]|0x20) == 'r' {
		sig.Reservation = true
		s = s[1:]
	}
	if len(s) > 0 && (s[0]|0x20) == 'b' {
		sig.Batch = true
		s = s[1:]
	}
	if len(s) > 0 && (s[0]|0x20) == 'r' {
		sig.Reservation = true
		s = s[1:]
	}
	s = strings.TrimPrefix(s, ":")
	name, delay, hasDelay := strings.Cut(s, "@")
	num := sigNameToNum(name)
	if num < 1 || num > 0xffff {
		return Signal{}, false
	}
	sig.Signal = strconv.Itoa(num)
	sig.Delay = 60
	if !hasDelay {
		return sig, true
	}
	d, rest, _ := cStrtol(delay)
	if d < 0 || d > 0xffff || rest != "" {
		return Signal{}, false
	}
	sig.Delay = int(d)
	return sig, true
}

// parseDistribution re-implements Slurm's verify_dist_type: "plane=N", or
// up to three levels of block|cyclic|fcyclic (or '*' for the default),
// "arbitrary"/"hostfile", optionally followed by ",pack" or ",nopack"
// (which may also stand alone). It returns the normalised distribution,
// the plane size (0 if none) and the pack flag.
func parseDistribution(arg string, getenv func(string) string) (dist string, plane int, pack string, err error) {
	if len(arg) >= 5 && strings.EqualFold(arg[:5], "plane") {
		size := ""
		if _, after, ok := strings.Cut(arg, "="); ok {
			size = after
		} else if getenv != nil {
			size = getenv("SLURM_DIST_PLANESIZE")
		}
		v, rest, ok := cStrtol(size)
		if !ok || rest != "" || v <= 0 || v > math.MaxInt32 {
			f := optErrorf("Invalid plane size or size not specified")
			f.lines = append(f.lines, "error: Invalid --distribution specification")
			return "", 0, "", f
		}
		return "plane", int(v), "", nil
	}
	bad := optErrorf("Invalid --distribution specification")
	if arg == "" || arg[0] == ',' {
		return "", 0, "", bad
	}
	base, flag, _ := strings.Cut(arg, ",")
	var levels []string
	socket := ""
	// Like strtok, empty fields between colons do not count as levels.
	toks := strings.FieldsFunc(base, func(r rune) bool { return r == ':' })
	for i, tok := range toks {
		if i > 2 {
			return "", 0, "", bad
		}
		if tok == "*" {
			switch i {
			case 0:
				tok = "block"
			case 1:
				tok = "cyclic"
			default:
				tok = socket
			}
		}
		if i == 1 {
			socket = tok
		}
		levels = append(levels, strings.ToLower(tok))
	}
	d := strings.Join(levels, ":")
	switch {
	case d == "pack" || d == "nopack":
		pack, d = d, ""
	case d == "hostfile":
		d = "arbitrary"
	case d == "arbitrary" || validDistLevels(levels):
	default:
		return "", 0, "", bad
	}
	if flag != "" {
		f := strings.ToLower(flag)
		if d == "" || (f != "pack" && f != "nopack") {
			return "", 0, "", bad
		}
		pack = f
	}
	return d, 0, pack, nil
}

// validDistLevels checks node:socket:core distribution names: the node level
// is block or cyclic, the others block, cyclic or fcyclic.
func validDistLevels(levels []string) bool {
	if len(levels) == 0 || (levels[0] != "block" && levels[0] != "cyclic") {
		return false
	}
	for _, l := range levels[1:] {
		if l != "block" && l != "cyclic" && l != "fcyclic" {
			return false
		}
	}
	return true
}

// rlimitNames are the resource limits Slurm propagates, in its order.
var rlimitNames = []string{"CPU", "FSIZE", "DATA", "STACK", "CORE", "RSS", "NPROC", "NOFILE", "MEMLOCK", "AS"}

// parseRlimits is Slurm's parse_rlimits for --propagate: "ALL", "NONE", or
// a list of limit names (with or without "RLIMIT_"). It returns the names to
// propagate.
func parseRlimits(s string) ([]string, error) {
	switch s {
	case "ALL":
		return append([]string(nil), rlimitNames...), nil
	case "NONE":
		return nil, nil
	}
	want := map[string]bool{}
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		name := strings.TrimPrefix(tok, "RLIMIT_")
		if !slices.Contains(rlimitNames, name) {
			return nil, verifyErrorf("Bad rlimit name: %s", name)
		}
		want[name] = true
	}
	var out []string
	for _, n := range rlimitNames {
		if want[n] {
			out = append(out, n)
		}
	}
	return out, nil
}

// PropagatedLimits returns the resource limits sbatch forwards to the job
// (as SLURM_RLIMIT_<NAME>), in Slurm's order, and whether the user chose
// them with --propagate (Slurm then marks the values with a 'U'). Without
// --propagate every limit is forwarded, Slurm's default
// PropagateResourceLimits=ALL. Call it after Finish, which validates the
// list.
func (o *Options) PropagatedLimits() (names []string, user bool) {
	if !o.Propagate.Set {
		return append([]string(nil), rlimitNames...), false
	}
	names, _ = parseRlimits(o.Propagate.Val)
	return names, true
}
