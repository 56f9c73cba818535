package nodeagent

import (
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// rlimitNames maps sbatch's SLURM_RLIMIT_<NAME> variables to resources.
var rlimitNames = map[string]int{
	"CPU": unix.RLIMIT_CPU, "FSIZE": unix.RLIMIT_FSIZE, "DATA": unix.RLIMIT_DATA,
	"STACK": unix.RLIMIT_STACK, "CORE": unix.RLIMIT_CORE, "RSS": unix.RLIMIT_RSS,
	"NPROC": unix.RLIMIT_NPROC, "NOFILE": unix.RLIMIT_NOFILE, "MEMLOCK": unix.RLIMIT_MEMLOCK,
	"AS": unix.RLIMIT_AS,
}

// propagated is what the submission asked to carry over from the submit
// host: resource limits and the umask. slurmstepd applies them and takes
// the variables out of the job's environment; so does Drover.
type propagated struct {
	limits map[int]uint64
	umask  string
}

// takePropagated removes SLURM_RLIMIT_* and SLURM_UMASK from env.
func takePropagated(env *envList) propagated {
	p := propagated{limits: map[int]uint64{}}
	kept := env.keys[:0]
	for _, k := range env.keys {
		v := env.vals[k]
		switch {
		case strings.HasPrefix(k, "SLURM_RLIMIT_"):
			if res, ok := rlimitNames[strings.TrimPrefix(k, "SLURM_RLIMIT_")]; ok {
				// "U" marks a limit the user named with --propagate.
				if n, err := strconv.ParseUint(strings.TrimPrefix(v, "U"), 10, 64); err == nil {
					p.limits[res] = n
				}
			}
			delete(env.vals, k)
		case k == "SLURM_UMASK":
			p.umask = v
			delete(env.vals, k)
		default:
			kept = append(kept, k)
		}
	}
	env.keys = kept
	return p
}

// apply sets the job's soft limits, never above the hard limits the node
// daemon runs with, as slurmstepd does for PropagateResourceLimits.
func (p propagated) apply(pid int) error {
	var first error
	for res, want := range p.limits {
		var cur unix.Rlimit
		if err := unix.Prlimit(pid, res, nil, &cur); err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		soft := want
		if soft > cur.Max {
			soft = cur.Max
		}
		if soft == cur.Cur {
			continue
		}
		nl := unix.Rlimit{Cur: soft, Max: cur.Max}
		if err := unix.Prlimit(pid, res, &nl, nil); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// validUmask accepts an octal umask such as "0022".
func validUmask(s string) bool {
	if s == "" || len(s) > 4 {
		return false
	}
	_, err := strconv.ParseUint(s, 8, 32)
	return err == nil
}
