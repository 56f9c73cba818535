package jobopts

import (
	"strings"
)

// nobody is Slurm's SLURM_AUTH_NOBODY id, which --uid and --gid refuse.
const nobody = 99

// maxNice bounds --nice: NICE_OFFSET - 3.
const maxNice = 0x80000000 - 3

// parseUint16 is Slurm's parse_uint16: a whole number below NO_VAL16.
func parseUint16(s string) (int, bool) {
	v, rest, _ := cStrtol(s)
	if rest != "" || v < 0 || v >= 0xfffe {
		return 0, false
	}
	return int(v), true
}

// parseProfile is acct_gather_profile_from_string: "none", "all", or any
// mix of energy, task, lustre and network, found as substrings. It returns
// the REST profile names, or nil when nothing matched.
func parseProfile(s string) []string {
	l := strings.ToLower(s)
	switch {
	case strings.Contains(l, "none"):
		return []string{"NONE"}
	case strings.Contains(l, "all"):
		return []string{"ENERGY", "LUSTRE", "NETWORK", "TASK"}
	}
	var out []string
	for _, p := range []struct{ sub, name string }{
		{"energy", "ENERGY"}, {"lustre", "LUSTRE"}, {"network", "NETWORK"}, {"task", "TASK"},
	} {
		if strings.Contains(l, p.sub) {
			out = append(out, p.name)
		}
	}
	return out
}

// parseMemBind follows slurm_verify_mem_bind: a comma list of
// [no]verbose/quiet, none, rank, local, prefer, sort/nosort and
// map_mem:<list> or mask_mem:<list>. It returns the REST binding types and
// the map or mask list.
func parseMemBind(arg string) (types []string, list string, err error) {
	add := func(t string) {
		for _, x := range types {
			if x == t {
				return
			}
		}
		types = append(types, t)
	}
	// Commas followed by a digit belong to a map or mask list.
	var toks []string
	start := 0
	for i := 0; i < len(arg); i++ {
		if arg[i] == ',' && (i+1 >= len(arg) || arg[i+1] < '0' || arg[i+1] > '9') {
			toks = append(toks, arg[start:i])
			start = i + 1
		}
	}
	toks = append(toks, arg[start:])
	for _, tok := range toks {
		lt := strings.ToLower(tok)
		switch {
		case lt == "help":
			return nil, "", &Exit{Stdout: memBindHelp}
		case lt == "p" || lt == "prefer":
			add("PREFER")
		case lt == "q" || lt == "quiet":
		case lt == "v" || lt == "verbose":
			add("VERBOSE")
		case lt == "no" || lt == "none":
			add("NONE")
		case lt == "rank":
			add("RANK")
		case lt == "local":
			add("LOCAL")
		case lt == "sort" || lt == "nosort":
		case strings.HasPrefix(lt, "map_mem") || strings.HasPrefix(lt, "mapmem"):
			l := listAfter(tok)
			if l == "" {
				return nil, "", optErrorf("missing list for \"--mem-bind=map_mem:<list>\"")
			}
			add("MAP")
			list = l
		case strings.HasPrefix(lt, "mask_mem") || strings.HasPrefix(lt, "maskmem"):
			l := listAfter(tok)
			if l == "" {
				return nil, "", optErrorf("missing list for \"--mem-bind=mask_mem:<list>\"")
			}
			add("MASK")
			list = l
		default:
			return nil, "", optErrorf("unrecognized --mem-bind argument \"%s\"", tok)
		}
	}
	return types, list, nil
}

// listAfter returns what follows the first ':' or '=' of tok.
func listAfter(tok string) string {
	if i := strings.IndexAny(tok, ":="); i >= 0 {
		return tok[i+1:]
	}
	return ""
}

const memBindHelp = `Memory bind options:
    --mem-bind=         Bind memory to locality domains (ldom)
    nosort              avoid sorting pages at startup
    sort                sort pages at startup
    q[uiet],            quietly bind before task runs (default)
    v[erbose],          verbosely report binding before task runs
    no[ne]              don't bind tasks to memory (default)
    rank                bind by task rank
    local               bind to memory local to processor
    map_mem:<list>      bind by mapping memory of CPU IDs to tasks as specified
                        where <list> is <cpuid1>,<cpuid2>,...<cpuidN>
    mask_mem:<list>     bind by setting memory of CPU masks on tasks as specified
                        where <list> is <mask1>,<mask2>,...<maskN>
    prefer              prefer the specified binding domain
    help                show this help message
`

// setExtraNodeInfo parses -B S[:C[:T]]: each field is a count, a min-max
// range or '*'; the minimum is requested. Cores per socket cannot be carried
// by the v0.0.44 job description, so a cores field is refused.
func setExtraNodeInfo(p *Parser, v string, _ bool) error {
	fields := strings.SplitN(v, ":", 3)
	whats := []string{"first arg of -B", "second arg of -B", "third arg of -B"}
	var vals [3]Maybe[int]
	for i, f := range fields {
		n, ok, err := resourceArgRange(f, whats[i])
		if err != nil {
			return err
		}
		if ok {
			vals[i] = Some(n)
		}
	}
	if vals[1].Set {
		return unsupportedf("A cores per socket count in --extra-node-info")
	}
	p.opts.SocketsPerNode, p.opts.CoresPerSocket, p.opts.ThreadsPerCore = vals[0], vals[1], vals[2]
	return nil
}

// resourceArgRange is get_resource_arg_range: "", "*" (any: ok is false),
// "n" or "min-max" with k/m suffixes. It returns the minimum.
func resourceArgRange(arg, what string) (int, bool, error) {
	if arg == "" || arg[0] == '*' {
		return 0, false, nil
	}
	bad := func() (int, bool, error) {
		return 0, false, intErrorf("Invalid numeric value \"%s\" for %s.", arg, what)
	}
	v, rest, _ := cStrtol(arg)
	if rest != "" && (rest[0]|0x20) == 'k' {
		v *= 1024
		rest = rest[1:]
	} else if rest != "" && (rest[0]|0x20) == 'm' {
		v *= 1048576
		rest = rest[1:]
	}
	if (rest != "" && rest[0] != '-') || v < 0 {
		return bad()
	}
	if v > 0x7fffffff {
		return 0, false, intErrorf("Numeric argument (%d) too large for %s.", v, what)
	}
	if rest == "" {
		return int(v), true, nil
	}
	hi, rest2, _ := cStrtol(rest[1:])
	if rest2 != "" && ((rest2[0]|0x20) == 'k' || (rest2[0]|0x20) == 'm') {
		rest2 = rest2[1:]
	}
	if (rest2 != "" && rest2[0] != '-') || hi <= 0 {
		return bad()
	}
	return int(v), true, nil
}

// setGRESFlags parses --gres-flags.
func setGRESFlags(p *Parser, v string, _ bool) error {
	enforce, disable, share := false, false, false
	for tok := range strings.SplitSeq(v, ",") {
		if tok == "" {
			continue
		}
		switch strings.ToLower(tok) {
		case "allow-task-sharing":
			if p.cmd != cmdSrun {
				return optErrorf("--gres-flags=allow-task-sharing is only used with srun.")
			}
			share = true
		case "disable-binding":
			disable = true
		case "enforce-binding":
			enforce = true
		case "multiple-tasks-per-sharing", "one-task-per-sharing":
			return unsupportedf("--gres-flags=%s", tok)
		default:
			return optErrorf("Invalid --gres-flags specification: %s", tok)
		}
	}
	if enforce && disable {
		return optErrorf("Invalid --gres-flags combo: disable-binding and enforce-binding are mutually exclusive.")
	}
	p.opts.GRESEnforceBind, p.opts.GRESDisableBind = enforce, disable
	p.opts.GRESAllowTaskSharing = share
	return nil
}

// prependTRESType is gres_prepend_tres_type: "gpu:2,nic" becomes
// "gres/gpu:2,gres/nic", without doubling an existing "gres/".
func prependTRESType(s string) string {
	out := "gres/" + strings.ReplaceAll(s, ",", ",gres/")
	return strings.ReplaceAll(out, "gres/gres/", "gres/")
}
