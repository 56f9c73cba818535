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

// ulimitFlags are dash's and bash's `ulimit` options per resource, with
// the unit each takes (bytes per unit).
var ulimitFlags = map[int]struct {
	flag string
	unit uint64
}{
	unix.RLIMIT_CPU: {"-t", 1}, unix.RLIMIT_FSIZE: {"-f", 512}, unix.RLIMIT_DATA: {"-d", 1024},
	unix.RLIMIT_STACK: {"-s", 1024}, unix.RLIMIT_CORE: {"-c", 512}, unix.RLIMIT_RSS: {"-m", 1024},
	unix.RLIMIT_NPROC: {"-p", 1}, unix.RLIMIT_NOFILE: {"-n", 1}, unix.RLIMIT_MEMLOCK: {"-l", 1024},
	unix.RLIMIT_AS: {"-v", 1024},
}

// shell returns `ulimit -S` commands that set the job's soft limits,
// never above the hard limits the node daemon passes on, as slurmstepd
// does for PropagateResourceLimits. They run in the job's own shell
// prologue, after it became the user, so no privilege is involved.
func (p propagated) shell() string {
	var b strings.Builder
	for res, want := range p.limits {
		f, ok := ulimitFlags[res]
		if !ok {
			continue
		}
		var cur unix.Rlimit
		if err := unix.Getrlimit(res, &cur); err != nil {
			continue
		}
		soft := min(want, cur.Max)
		if soft == cur.Cur {
			continue
		}
		val := "unlimited"
		if soft != unix.RLIM_INFINITY {
			val = strconv.FormatUint(soft/f.unit, 10)
		}
		b.WriteString("ulimit -S " + f.flag + " " + val + " 2>/dev/null; ")
	}
	return b.String()
}

// validUmask accepts an octal umask such as "0022".
func validUmask(s string) bool {
	if s == "" || len(s) > 4 {
		return false
	}
	_, err := strconv.ParseUint(s, 8, 32)
	return err == nil
}
