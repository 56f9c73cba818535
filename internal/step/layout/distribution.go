package layout

import (
	"math"
	"strings"

	"github.com/droverhq/drover/internal/cstrconv"
)

// Kind is the first part of -m/--distribution: how tasks go to nodes.
type Kind int

// The node distributions of srun(1).
const (
	// BlockDist puts consecutive tasks on the same node.
	BlockDist Kind = iota
	// CyclicDist deals tasks round robin over the nodes.
	CyclicDist
	// PlaneDist deals blocks of PlaneSize tasks round robin.
	PlaneDist
	// ArbitraryDist places each task on the node listed for it (-w with
	// repeats, or SLURM_HOSTFILE).
	ArbitraryDist
)

// String is the spelling SLURM_DISTRIBUTION uses (format_task_dist_states).
func (k Kind) String() string {
	switch k {
	case BlockDist:
		return "block"
	case CyclicDist:
		return "cyclic"
	case PlaneDist:
		return "plane"
	case ArbitraryDist:
		return "arbitrary"
	}
	return "unknown"
}

// Pack values of Distribution: the ",Pack" and ",NoPack" suffixes.
const (
	Pack   = "Pack"
	NoPack = "NoPack"
)

// A Distribution is -m/--distribution.
//
// Set tells whether the node part was given. When it was not (no -m, or
// only "-m pack"/"-m nopack"), srun picks it when it asks for the step:
// cyclic when the step has no more tasks than its minimum node count,
// block otherwise (launch.c, _create_job_step_create_request); Place
// reports the result in Layout.Dist. A Distribution that is not Set but
// has a Kind other than BlockDist, or a Socket or Core part, counts as
// given.
type Distribution struct {
	Kind      Kind
	PlaneSize int    // for Plane
	Socket    string // second part as given ("block", "cyclic", "fcyclic", "*", ""); layout within a node is not Drover's concern beyond keeping it
	Core      string // third part
	Pack      string // "", "Pack", "NoPack"
	Set       bool   // given explicitly
}

// baseGiven tells whether the node part is known (not SLURM_DIST_UNKNOWN).
func (d Distribution) baseGiven() bool {
	return d.Set || d.Kind != BlockDist || d.Socket != "" || d.Core != ""
}

// String is SLURM_DISTRIBUTION's value, as srun's set_distribution writes
// it: the node, socket and core parts in Slurm's spelling with "*"
// resolved ("block:*" is "block:cyclic", a "*" core part inherits the
// socket part), then ",pack" or ",nopack" in lower case. The plane size is
// not part of it (srun exports SLURM_DIST_PLANESIZE). A Distribution whose
// node part was not given prints as "block", slurmctld's default; use
// Layout.Dist for what srun exports for a placed step.
func (d Distribution) String() string {
	var b strings.Builder
	b.WriteString(d.Kind.String())
	if d.Kind == BlockDist || d.Kind == CyclicDist {
		sock := strings.ToLower(d.Socket)
		if sock == "*" {
			sock = "cyclic"
		}
		if sock != "" {
			b.WriteString(":" + sock)
			core := strings.ToLower(d.Core)
			if core == "*" {
				core = sock
			}
			if core != "" {
				b.WriteString(":" + core)
			}
		}
	}
	switch d.Pack {
	case Pack:
		b.WriteString(",pack")
	case NoPack:
		b.WriteString(",nopack")
	}
	return b.String()
}

// valid tells whether slurmctld's step_create accepts d (it answers
// ESLURM_BAD_DIST otherwise). Only hand-built values can fail:
// ParseDistribution returns valid ones.
func (d Distribution) valid() bool {
	switch d.Pack {
	case "", Pack, NoPack:
	default:
		return false
	}
	switch d.Kind {
	case BlockDist, CyclicDist:
		if d.Socket == "" {
			return d.Core == ""
		}
		return lllpPart(d.Socket) && (d.Core == "" || lllpPart(d.Core))
	case PlaneDist:
		return d.PlaneSize > 0 && d.Socket == "" && d.Core == ""
	case ArbitraryDist:
		return d.Socket == "" && d.Core == ""
	}
	return false
}

func lllpPart(s string) bool {
	switch strings.ToLower(s) {
	case "*", "block", "cyclic", "fcyclic":
		return true
	}
	return false
}

// ParseDistribution parses -m/--distribution as srun's verify_dist_type
// does (src/common/proc_args.c): case-insensitive
// {*|block|cyclic}[:{*|block|cyclic|fcyclic}[:{*|block|cyclic|fcyclic}]],
// "arbitrary" or "hostfile", "plane=<size>", each optionally followed by
// ",pack" or ",nopack", or "pack"/"nopack" alone. Like strtok, empty parts
// between colons are skipped ("block::cyclic" is "block:cyclic"); anything
// starting with "plane" is a plane distribution and takes no other part.
//
// srun takes the plane size from SLURM_DIST_PLANESIZE when "=<size>" is
// missing; ParseDistribution reads no environment, so a caller honouring
// the variable appends "="+value first. A refusal is an *Error with srun's
// lines ("Invalid --distribution specification", preceded by "Invalid
// plane size or size not specified" for a bad plane).
func ParseDistribution(s string) (Distribution, error) {
	if len(s) >= 5 && strings.EqualFold(s[:5], "plane") {
		return parsePlane(s)
	}
	d, ok := parseBase(s)
	if !ok {
		return Distribution{}, srunError("Invalid --distribution specification")
	}
	return d, nil
}

// parsePlane is _parse_plane_dist: the size after the first '=' must be a
// whole strtol number in 1..INT_MAX.
func parsePlane(s string) (Distribution, error) {
	bad := srunError("Invalid plane size or size not specified", "Invalid --distribution specification")
	i := strings.IndexByte(s, '=')
	if i < 0 {
		return Distribution{}, bad
	}
	n, ok := strtol(s[i+1:])
	if !ok || n <= 0 || n > math.MaxInt32 {
		return Distribution{}, bad
	}
	return Distribution{Kind: PlaneDist, PlaneSize: int(n), Set: true}, nil
}

// strtol accepts what C's strtol(s, &end, 10) consumes entirely: leading
// white space, an optional sign, and at least one digit; values beyond
// int64 report !ok (strtol's ERANGE).
func strtol(s string) (int64, bool) { return cstrconv.Atol(s) }

// parseBase is _parse_dist_base.
func parseBase(s string) (Distribution, bool) {
	if s == "" || s[0] == ',' {
		return Distribution{}, false
	}
	base, flags, _ := strings.Cut(s, ",")
	var parts []string
	for _, p := range strings.Split(base, ":") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 || len(parts) > 3 {
		return Distribution{}, false
	}
	var d Distribution
	node := strings.ToLower(parts[0])
	switch {
	case len(parts) == 1 && (node == "arbitrary" || node == "hostfile"):
		d = Distribution{Kind: ArbitraryDist, Set: true}
	case len(parts) == 1 && (node == "pack" || node == "nopack"):
		d.Pack = packFlag(node)
	case node == "*" || node == "block" || node == "cyclic":
		d = Distribution{Kind: BlockDist, Set: true}
		if node == "cyclic" {
			d.Kind = CyclicDist
		}
		for i, p := range parts[1:] {
			l := strings.ToLower(p)
			if l != "*" && l != "block" && l != "cyclic" && l != "fcyclic" {
				return Distribution{}, false
			}
			if i == 0 {
				d.Socket = p
			} else {
				d.Core = p
			}
		}
	default:
		return Distribution{}, false
	}
	if flags != "" {
		f := strings.ToLower(flags)
		if f != "pack" && f != "nopack" {
			return Distribution{}, false
		}
		// Both flags ("pack,nopack") set both bits in Slurm; the block
		// layout then packs, so Pack wins here.
		if d.Pack != Pack {
			d.Pack = packFlag(f)
		}
	}
	return d, true
}

func packFlag(lower string) string {
	if lower == "pack" {
		return Pack
	}
	return NoPack
}
