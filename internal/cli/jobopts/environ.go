package jobopts

import (
	"strconv"
	"strings"
)

// Environ is an ordered environment, NAME=value entries without duplicates.
// It behaves like the C environment Slurm's commands edit: setting an
// existing name replaces it in place, a new name goes at the end.
type Environ struct {
	names  []string
	values map[string]string
}

// NewEnviron builds an Environ from "NAME=value" entries (os.Environ's
// format); later duplicates replace earlier ones, entries without '=' are
// skipped.
func NewEnviron(entries []string) *Environ {
	e := &Environ{values: map[string]string{}}
	for _, kv := range entries {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		e.Set(k, v)
	}
	return e
}

// Set sets name to value, overwriting it (env_array_overwrite, setenv).
func (e *Environ) Set(name, value string) {
	if _, ok := e.values[name]; !ok {
		e.names = append(e.names, name)
	}
	e.values[name] = value
}

// Add sets name only if it is not set yet (env_array_append, setenv
// without overwrite).
func (e *Environ) Add(name, value string) {
	if _, ok := e.values[name]; !ok {
		e.Set(name, value)
	}
}

// Unset removes name.
func (e *Environ) Unset(name string) {
	if _, ok := e.values[name]; !ok {
		return
	}
	delete(e.values, name)
	for i, n := range e.names {
		if n == name {
			e.names = append(e.names[:i], e.names[i+1:]...)
			break
		}
	}
}

// Lookup returns the value of name.
func (e *Environ) Lookup(name string) (string, bool) {
	v, ok := e.values[name]
	return v, ok
}

// List returns the entries as "NAME=value", in order.
func (e *Environ) List() []string {
	out := make([]string, len(e.names))
	for i, n := range e.names {
		out[i] = n + "=" + e.values[n]
	}
	return out
}

// mergeSlurm copies the variables Slurm always forwards, whatever --export
// says: names starting with "SLURM" and SPANK option variables
// (env_array_merge_slurm_spank).
func (e *Environ) mergeSlurm(from *Environ) {
	for _, n := range from.names {
		if strings.HasPrefix(n, "SLURM") || strings.HasPrefix(n, "_SLURM_SPANK_OPTION_") {
			e.Set(n, from.values[n])
		}
	}
}

func (e *Environ) mergeAll(from *Environ) {
	for _, n := range from.names {
		e.Set(n, from.values[n])
	}
}

// splitQuoted splits s on sep outside single or double quotes, and strips
// quotes that enclose a whole item, as Slurm's find_quote_token does for
// --export lists.
func splitQuoted(s string, sep byte) []string {
	var out []string
	var single, double bool
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) {
			switch s[i] {
			case '\'':
				single = !single
				continue
			case '"':
				double = !double
				continue
			}
			if s[i] != sep || single || double {
				continue
			}
		}
		tok := s[start:i]
		if len(tok) >= 2 && (tok[0] == '\'' || tok[0] == '"') && tok[len(tok)-1] == tok[0] {
			tok = tok[1 : len(tok)-1]
		}
		if tok != "" || i < len(s) {
			out = append(out, tok)
		}
		start = i + 1
	}
	return out
}

// ExportEnvironment builds the environment sent with the job from the
// command's own environment, following --export (sbatch's
// _fill_job_desc_from_opts):
//
//   - unset or ALL: the whole environment;
//   - NIL: only the SLURM* variables;
//   - NONE: only the SLURM* variables, and the node loads the user's login
//     environment (SLURM_GET_USER_ENV=1);
//   - a list: the named variables (NAME copies the caller's value,
//     NAME=value sets one, ALL adds everything), plus the SLURM* variables,
//     and SLURM_GET_USER_ENV=1.
//
// --get-user-env also sets SLURM_GET_USER_ENV=1, and an arbitrary
// distribution passes the node list in SLURM_ARBITRARY_NODELIST.
func (o *Options) ExportEnvironment(own *Environ) *Environ {
	out := NewEnviron(nil)
	getUserEnv := o.GetUserEnv
	exp := o.Export.Val
	switch {
	case !o.Export.Set || strings.EqualFold(exp, "ALL"):
		out.mergeAll(own)
	case strings.EqualFold(exp, "NIL"):
		out.mergeSlurm(own)
	case strings.EqualFold(exp, "NONE"):
		out.mergeSlurm(own)
		getUserEnv = true
	default:
		for _, tok := range splitQuoted(exp, ',') {
			switch name, value, hasValue := strings.Cut(tok, "="); {
			case strings.EqualFold(tok, "ALL"):
				out.mergeAll(own)
			case hasValue:
				out.Set(name, value)
			default:
				if v, ok := own.Lookup(tok); ok {
					out.Set(tok, v)
				}
			}
		}
		out.mergeSlurm(own)
		getUserEnv = true
	}
	if getUserEnv {
		out.Set("SLURM_GET_USER_ENV", "1")
	}
	if o.Distribution == "arbitrary" {
		out.Set("SLURM_ARBITRARY_NODELIST", o.requiredNodes())
	}
	return out
}

// StepEnvironment is what srun sends its tasks of its own environment,
// following --export as srun's _build_user_env does: unset or ALL
// everything; otherwise the listed variables (NAME copies srun's value,
// NAME=value sets one; the list stops at NONE) and the SLURM_* and SPANK
// variables, with everything again when ALL is among them (overriding
// the listed values).
func (o *Options) StepEnvironment(own *Environ) *Environ {
	if !o.Export.Set {
		return own
	}
	out := NewEnviron(nil)
	all := false
	for _, tok := range splitQuoted(o.Export.Val, ',') {
		if strings.EqualFold(tok, "ALL") {
			all = true
		}
		if strings.EqualFold(tok, "NONE") {
			break
		}
		if name, value, ok := strings.Cut(tok, "="); ok {
			out.Set(name, value)
		} else if v, ok := own.Lookup(tok); ok {
			out.Set(tok, v)
		}
	}
	if all {
		out.mergeAll(own)
	} else {
		for _, n := range own.names {
			if strings.HasPrefix(n, "SLURM_") || strings.HasPrefix(n, "SPANK_") || strings.HasPrefix(n, "_SLURM_SPANK_OPTION_") {
				out.Set(n, own.values[n])
			}
		}
	}
	return out
}

// AddJobEnv adds the variables sbatch derives from the options to a job's
// environment: AddOptionEnv's (set_env_from_opts: GPU requests, the hints
// that make MPI launchers use srun), then set_envs' task counts,
// distribution and bindings.
func (o *Options) AddJobEnv(env *Environ) {
	o.AddOptionEnv(env)
	itoa := strconv.Itoa
	if o.CPUsPerTask.Set {
		env.Set("SLURM_CPUS_PER_TASK", itoa(o.CPUsPerTask.Val))
	}
	if d := o.DistributionEnv(); d != "" {
		env.Set("SLURM_DISTRIBUTION", d)
	}
	if o.MemBind != "" {
		types, list, _ := parseMemBind(o.MemBind)
		mb := memBindEnv(types)
		if list != "" {
			mb += ":" + list
		}
		env.Set("SLURM_MEM_BIND", mb)
		verbose := "quiet"
		for _, t := range types {
			if t == "VERBOSE" {
				verbose = "verbose"
			}
		}
		env.Set("SLURM_MEM_BIND_VERBOSE", verbose)
	}
	if o.Ntasks.Set && o.Ntasks.Val > 0 {
		env.Set("SLURM_NPROCS", itoa(o.Ntasks.Val))
		env.Set("SLURM_NTASKS", itoa(o.Ntasks.Val))
	}
	if o.NtasksPerCore.Set {
		env.Set("SLURM_NTASKS_PER_CORE", itoa(o.NtasksPerCore.Val))
	}
	if o.NtasksPerGPU.Set && !o.NtasksPerTRES.Set {
		env.Set("SLURM_NTASKS_PER_GPU", itoa(o.NtasksPerGPU.Val))
	}
	if o.NtasksPerNode.Set {
		env.Set("SLURM_NTASKS_PER_NODE", itoa(o.NtasksPerNode.Val))
	}
	if o.NtasksPerSocket.Set {
		env.Set("SLURM_NTASKS_PER_SOCKET", itoa(o.NtasksPerSocket.Val))
	}
	if o.NtasksPerTRES.Set {
		env.Set("SLURM_NTASKS_PER_TRES", itoa(o.NtasksPerTRES.Val))
	}
	if o.PlaneSize.Set {
		env.Set("SLURM_DIST_PLANESIZE", itoa(o.PlaneSize.Val))
	}
	if o.ThreadsPerCore.Set {
		env.Set("SLURM_THREADS_PER_CORE", itoa(o.ThreadsPerCore.Val))
	}
}

// AddOptionEnv adds the variables sbatch and salloc both derive from the
// options as given (set_env_from_opts): GPU requests, --tres-per-task,
// --tres-bind, and the hints that make MPI launchers started inside the
// job use srun.
func (o *Options) AddOptionEnv(env *Environ) {
	itoa := strconv.Itoa
	if o.CPUsPerGPU.Set {
		env.Set("SLURM_CPUS_PER_GPU", itoa(o.CPUsPerGPU.Val))
	}
	if o.GPUs != "" {
		env.Set("SLURM_GPUS", o.GPUs)
	}
	if o.GPUFreq != "" {
		env.Set("SLURM_GPU_FREQ", o.GPUFreq)
	}
	if o.GPUsPerNode != "" {
		env.Set("SLURM_GPUS_PER_NODE", o.GPUsPerNode)
	}
	if o.GPUsPerSocket != "" {
		env.Set("SLURM_GPUS_PER_SOCKET", o.GPUsPerSocket)
	}
	if o.GPUsPerTask != "" {
		// 25.11 carries it in SLURM_TRES_PER_TASK only; scripts and
		// tools (Ray) still read the variable older releases set.
		env.Set("SLURM_GPUS_PER_TASK", o.GPUsPerTask)
	}
	if o.MemPerGPU.Set {
		env.Set("SLURM_MEM_PER_GPU", strconv.FormatUint(o.MemPerGPU.Val, 10))
	}
	if o.TRESPerTask != "" {
		env.Set("SLURM_TRES_PER_TASK", o.TRESPerTask)
	}
	if o.TRESBind != "" {
		env.Set("SLURM_TRES_BIND", o.TRESBind)
	}
	// MPI launchers started inside the job are told to use srun.
	env.Add("OMPI_MCA_plm_slurm_args", "--external-launcher")
	env.Add("PRTE_MCA_plm_slurm_args", "--external-launcher")
	for _, h := range [][2]string{
		{"HYDRA_BOOTSTRAP", "HYDRA_LAUNCHER_EXTRA_ARGS"},
		{"I_MPI_HYDRA_BOOTSTRAP", "I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS"},
	} {
		if v, ok := env.Lookup(h[0]); !ok || v == "slurm" {
			env.Add(h[0], "slurm")
			env.Add(h[1], "--external-launcher")
		}
	}
}

// DistributionEnv is SLURM_DISTRIBUTION's value (set_distribution), "" when
// -m was not given.
func (o *Options) DistributionEnv() string {
	d := o.Distribution
	if o.DistPack != "" {
		if d != "" {
			d += ","
		}
		d += o.DistPack
	}
	return d
}

// memBindEnv spells the binding types the way SLURM_MEM_BIND shows them
// (slurm_xstr_mem_bind_type).
func memBindEnv(types []string) string {
	var parts []string
	for _, t := range types {
		switch t {
		case "VERBOSE":
		case "MAP":
			parts = append(parts, "map_mem")
		case "MASK":
			parts = append(parts, "mask_mem")
		default:
			parts = append(parts, strings.ToLower(t))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}
