package nodeagent

import (
	"slices"
	"strings"
	"testing"
)

func TestParseUserEnv(t *testing.T) {
	out := []byte("Welcome!\n\n\n\n" + userEnvStart + "\nHOME=/home/ann\nBASH_FUNC_f%%=() {  echo\n}\nnoise from a profile\nPATH=/bin\n" + userEnvStop + "\nbye\n")
	env, ok := parseUserEnv(out)
	want := []string{"HOME=/home/ann", "BASH_FUNC_f%%=() {  echo\n}", "PATH=/bin"}
	if !ok || !slices.Equal(env, want) {
		t.Errorf("parseUserEnv: %q %v, want %q", env, ok, want)
	}
	if _, ok := parseUserEnv([]byte(userEnvStart + "\nA=1\n")); ok {
		t.Error("an environment without its end marker was taken")
	}
	if !wantsUserEnv([]string{"A=1", "SLURM_GET_USER_ENV=1"}) || wantsUserEnv([]string{"SLURM_GET_USER_ENV=0"}) {
		t.Error("wantsUserEnv")
	}
}

// FuzzParseUserEnv: any output of a login shell parses without a panic,
// into variables with valid names.
func FuzzParseUserEnv(f *testing.F) {
	f.Add([]byte(userEnvStart + "\nHOME=/h\nBASH_FUNC_x%%=() {\n}\n" + userEnvStop + "\n"))
	f.Add([]byte("junk\n" + userEnvStart + "\n=x\n1A=2\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		env, _ := parseUserEnv(out)
		for _, kv := range env {
			name, _, ok := strings.Cut(kv, "=")
			if !ok || !validEnvName(name) {
				t.Fatalf("entry %q", kv)
			}
		}
	})
}
