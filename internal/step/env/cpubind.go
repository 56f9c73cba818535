package env

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CPUBindUnit is the entity --cpu-bind binds tasks to.
type CPUBindUnit int

// Binding units, in the order Slurm's setup_env prefers them.
const (
	UnitNone    CPUBindUnit = iota // no unit given
	UnitThreads                    // threads
	UnitCores                      // cores
	UnitSockets                    // sockets
	UnitLdoms                      // ldoms
)

// String is the unit as SLURM_CPU_BIND_TYPE spells it ("" for none).
func (u CPUBindUnit) String() string {
	switch u {
	case UnitThreads:
		return "threads"
	case UnitCores:
		return "cores"
	case UnitSockets:
		return "sockets"
	case UnitLdoms:
		return "ldoms"
	}
	return ""
}

// CPUBindMode is how --cpu-bind places tasks.
type CPUBindMode int

// Binding modes.
const (
	ModeUnset    CPUBindMode = iota // no mode given
	ModeNone                        // none / no
	ModeMapCPU                      // map_cpu:<list>
	ModeMaskCPU                     // mask_cpu:<list>
	ModeRankLdom                    // rank_ldom
	ModeMapLdom                     // map_ldom:<list>
	ModeMaskLdom                    // mask_ldom:<list>
)

// String is the mode as SLURM_CPU_BIND_TYPE spells it: the modes that take
// a list end in ':' ("map_cpu:"), as setup_env writes them.
func (m CPUBindMode) String() string {
	switch m {
	case ModeNone:
		return "none"
	case ModeMapCPU:
		return "map_cpu:"
	case ModeMaskCPU:
		return "mask_cpu:"
	case ModeRankLdom:
		return "rank_ldom"
	case ModeMapLdom:
		return "map_ldom:"
	case ModeMaskLdom:
		return "mask_ldom:"
	}
	return ""
}

// takesList says whether the mode is followed by a list in SLURM_CPU_BIND.
func (m CPUBindMode) takesList() bool {
	return m == ModeMapCPU || m == ModeMaskCPU || m == ModeMapLdom || m == ModeMaskLdom
}

// CPUBind is a parsed --cpu-bind value (Slurm's cpu_bind_type flags and
// cpu_bind list).
type CPUBind struct {
	Verbose bool
	// OneThread is one_thread: it sets a flag, so the variables are
	// written, but no spelling of it appears in them.
	OneThread bool
	Unit      CPUBindUnit
	Mode      CPUBindMode
	// List is the map or mask list with multipliers expanded and "0x"
	// prefixes of masks dropped ("0x3*2" is "3,3"), as srun sends it.
	List string
}

// ErrCPUBind is wrapped by every ParseCPUBind error.
var ErrCPUBind = errors.New("invalid --cpu-bind")

// ParseCPUBind parses a --cpu-bind value as srun does
// (slurm_verify_cpu_bind): comma-separated words, case-insensitive, where a
// comma followed by a number stays inside a map or mask list
// ("verbose,map_cpu:0,1,cores"). Later words override earlier ones of the
// same kind; "rank" is obsolete and only drops a list given before it.
// "help" is refused: printing help is the shim's business.
func ParseCPUBind(arg string) (CPUBind, error) {
	var b CPUBind
	for _, tok := range SplitCPUBind(arg) {
		low := strings.ToLower(tok)
		switch {
		case low == "q" || low == "quiet":
			b.Verbose = false
		case low == "v" || low == "verbose":
			b.Verbose = true
		case low == "one_thread":
			b.OneThread = true
		case low == "no" || low == "none":
			b.Mode, b.List = ModeNone, ""
		case low == "rank":
			b.List = ""
		case low == "rank_ldom":
			b.Mode, b.List = ModeRankLdom, ""
		case strings.HasPrefix(low, "map_cpu") || strings.HasPrefix(low, "mapcpu"):
			if err := b.setList(ModeMapCPU, tok, "map_cpu"); err != nil {
				return CPUBind{}, err
			}
		case strings.HasPrefix(low, "mask_cpu") || strings.HasPrefix(low, "maskcpu"):
			if err := b.setList(ModeMaskCPU, tok, "mask_cpu"); err != nil {
				return CPUBind{}, err
			}
		case strings.HasPrefix(low, "map_ldom") || strings.HasPrefix(low, "mapldom"):
			if err := b.setList(ModeMapLdom, tok, "map_ldom"); err != nil {
				return CPUBind{}, err
			}
		case strings.HasPrefix(low, "mask_ldom") || strings.HasPrefix(low, "maskldom"):
			if err := b.setList(ModeMaskLdom, tok, "mask_ldom"); err != nil {
				return CPUBind{}, err
			}
		case low == "socket" || low == "sockets":
			b.Unit = UnitSockets
		case low == "core" || low == "cores":
			b.Unit = UnitCores
		case low == "thread" || low == "threads":
			b.Unit = UnitThreads
		case low == "ldom" || low == "ldoms":
			b.Unit = UnitLdoms
		default:
			return CPUBind{}, fmt.Errorf("%w: unrecognized argument %q", ErrCPUBind, tok)
		}
	}
	return b, nil
}

// SplitCPUBind splits a --cpu-bind value into its words at the commas that
// are not followed by a value, as slurm_verify_cpu_bind turns them into
// ';' (_isvalue): a comma before a digit, or before hex digits that run to
// a comma or the end, belongs to a map or mask list.
func SplitCPUBind(arg string) []string {
	var toks []string
	start := 0
	for i := 0; i < len(arg); i++ {
		if arg[i] == ',' && !isValue(arg[i+1:]) {
			toks = append(toks, arg[start:i])
			start = i + 1
		}
	}
	return append(toks, arg[start:])
}

func isValue(s string) bool {
	if s != "" && isDigit(s[0]) {
		return true
	}
	i := 0
	for i < len(s) && isHex(s[i]) {
		i++
	}
	return i == len(s) || s[i] == ','
}

// setList takes the list after the first ':' or '=' of tok (up to the next
// one, as strsep does) and expands it.
func (b *CPUBind) setList(m CPUBindMode, tok, name string) error {
	_, rest, ok := cutAny(tok, ":=")
	list := rest
	if ok {
		list, _, _ = cutAny(rest, ":=")
	}
	if !ok || list == "" {
		return fmt.Errorf("%w: missing list for \"--cpu-bind=%s:<list>\"", ErrCPUBind, name)
	}
	exp, err := expandMult(list, m == ModeMaskCPU || m == ModeMaskLdom)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCPUBind, name, err)
	}
	b.Mode, b.List = m, exp
	return nil
}

func cutAny(s, seps string) (before, after string, found bool) {
	if i := strings.IndexAny(s, seps); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// maxExpand bounds a list after its multipliers are applied, so that
// "0*999999999" cannot exhaust memory (Slurm caps the environment value at
// MAX_ENV_STRLEN in the same spirit).
const maxExpand = 1 << 16

// expandMult expands "v*n" multipliers and drops masks' "0x" prefix, as
// _expand_mult does; values are decimal for maps and hexadecimal for masks.
func expandMult(list string, mask bool) (string, error) {
	var out []string
	size := 0
	for _, tok := range strings.Split(list, ",") {
		if tok == "" {
			continue // strtok skips empty fields
		}
		if mask {
			tok = strings.TrimPrefix(tok, "0x")
		}
		count := 1
		if v, n, ok := strings.Cut(tok, "*"); ok {
			if n == "" || strings.IndexFunc(n, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
				return "", fmt.Errorf("invalid multiplier in %q", tok)
			}
			c, err := strconv.Atoi(n)
			if err != nil || c <= 0 {
				return "", fmt.Errorf("invalid multiplier in %q", tok)
			}
			tok, count = v, c
		}
		for i := 0; i < len(tok); i++ {
			if !isDigit(tok[i]) && !(mask && isHex(tok[i])) {
				return "", fmt.Errorf("invalid number %q", tok)
			}
		}
		size += count * (len(tok) + 1)
		if size > maxExpand {
			return "", fmt.Errorf("list %q too long once expanded", list)
		}
		for range count {
			out = append(out, tok)
		}
	}
	if len(out) == 0 {
		return "", fmt.Errorf("empty list %q", list)
	}
	return strings.Join(out, ","), nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool {
	return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// IsSet says whether the binding sets any flag: Slurm writes the
// SLURM_CPU_BIND variables only then ("quiet" or "rank" alone set none).
func (b CPUBind) IsSet() bool {
	return b.Verbose || b.OneThread || b.Unit != UnitNone || b.Mode != ModeUnset
}

// Type is SLURM_CPU_BIND_TYPE: the unit and the mode joined by a comma
// ("cores", "map_cpu:", "sockets,mask_cpu:").
func (b CPUBind) Type() string {
	u, m := b.Unit.String(), b.Mode.String()
	if u != "" && m != "" {
		return u + "," + m
	}
	return u + m
}

// vars returns SLURM_CPU_BIND, SLURM_CPU_BIND_TYPE, SLURM_CPU_BIND_LIST
// and SLURM_CPU_BIND_VERBOSE as setup_env writes them.
func (b CPUBind) vars() map[string]string {
	verbose := "quiet"
	if b.Verbose {
		verbose = "verbose"
	}
	list := ""
	if b.Mode.takesList() {
		list = b.List
	}
	bind := verbose
	if typ := b.Type(); typ != "" {
		bind += "," + typ + list
	}
	return map[string]string{
		"SLURM_CPU_BIND":         bind,
		"SLURM_CPU_BIND_TYPE":    b.Type(),
		"SLURM_CPU_BIND_LIST":    list,
		"SLURM_CPU_BIND_VERBOSE": verbose,
	}
}

// cpuBindNames are the variables setup_env clears before writing a
// binding.
var cpuBindNames = []string{"SLURM_CPU_BIND", "SLURM_CPU_BIND_LIST", "SLURM_CPU_BIND_TYPE", "SLURM_CPU_BIND_VERBOSE"}

// setCPUBind replaces the binding variables of env with b's.
func setCPUBind(env *environ, b CPUBind) {
	for _, n := range cpuBindNames {
		env.unset(n)
	}
	for k, v := range b.vars() {
		env.set(k, v)
	}
}
