package plugconf

import "github.com/droverhq/drover/plugins/protocol"

// Apply returns env with changes made.
func Apply(env []string, changes []protocol.EnvChange) []string {
	out := append([]string(nil), env...)
	for _, c := range changes {
		i := Index(out, c.Name)
		switch {
		case c.Unset:
			if i >= 0 {
				out = append(out[:i], out[i+1:]...)
			}
		case i < 0:
			out = append(out, c.Name+"="+c.Value)
		case c.Overwrite:
			out[i] = c.Name + "=" + c.Value
		}
	}
	return out
}

// Index is the place of name in env (the last, as getenv finds it), or
// -1.
func Index(env []string, name string) int {
	for i := len(env) - 1; i >= 0; i-- {
		if len(env[i]) > len(name) && env[i][len(name)] == '=' && env[i][:len(name)] == name {
			return i
		}
	}
	return -1
}

// OptionEnvName is the variable that carries the value of a plugin's
// option from the command that took it to every later stage:
// _SLURM_SPANK_OPTION_<plugin>_<option>, every character but letters and
// digits written as '_', as spank.c's _opt_env_name does.
func OptionEnvName(plugin, option string) string {
	canon := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				b[i] = '_'
			}
		}
		return string(b)
	}
	return "_SLURM_SPANK_OPTION_" + canon(plugin) + "_" + canon(option)
}
