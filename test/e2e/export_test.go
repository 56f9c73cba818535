package e2e

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSrunExport: srun --export, SLURM_EXPORT_ENV and SRUN_EXPORT_ENV
// choose what of srun's environment its tasks get, as Slurm's srun does;
// sbatch --export=NONE tells the job's steps to do the same.
func TestSrunExport(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	env := []string{"FOO=foo", "BAR=bar"}
	vars := func(args ...string) string {
		t.Helper()
		r := c.RunEnv(env, "", "srun", append(args, "/usr/bin/env")...)
		if r.Code != 0 {
			t.Fatalf("srun %v: %+v", args, r)
		}
		var out []string
		for _, l := range strings.Split(r.Stdout, "\n") {
			if strings.HasPrefix(l, "FOO=") || strings.HasPrefix(l, "BAR=") || strings.HasPrefix(l, "BAZ=") || strings.HasPrefix(l, "PATH=") {
				out = append(out, l[:strings.IndexByte(l, '=')])
			}
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	if got := vars(); got != "BAR,FOO,PATH" {
		t.Errorf("srun passed %q", got)
	}
	if got := vars("--export=NONE"); got != "" {
		t.Errorf("srun --export=NONE passed %q", got)
	}
	if got := vars("--export=FOO,BAZ=z"); got != "BAZ,FOO" {
		t.Errorf("srun --export=FOO,BAZ=z passed %q", got)
	}
	env = append(env, "SLURM_EXPORT_ENV=NONE")
	if got := vars(); got != "" {
		t.Errorf("SLURM_EXPORT_ENV=NONE srun passed %q", got)
	}
	env = append(env, "SRUN_EXPORT_ENV=BAR")
	if got := vars(); got != "BAR" {
		t.Errorf("SRUN_EXPORT_ENV=BAR srun passed %q", got)
	}

	// sbatch --export=NONE: the job's srun follows it. (The job has the
	// login environment's PATH, which does not hold the shims.)
	id := c.Submit("#!/bin/bash\necho export=$SLURM_EXPORT_ENV\nFOO=inner "+c.shimPath+"/srun /usr/bin/env | grep -c '^FOO=' || true\n",
		"--export=NONE", "-o", "exp.out")
	c.WaitState(id, "COMPLETED", 30*time.Second)
	if got := c.ReadFile("exp.out"); got != "export=NONE\n0\n" {
		t.Errorf("a --export=NONE job's srun:\n%s", got)
	}
}

// TestUserEnvironment: --export=NONE and a list, and --get-user-env in
// every form older scripts write, give the batch script its user's login
// environment, the job's own variables over it, as slurmd's
// env_array_user_default loads it ("su - USER").
func TestUserEnvironment(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	env := []string{"FOO=submitted", "LOGNAME=submitter"}
	script := "#!/bin/bash\necho \"foo=${FOO-unset} logname=${LOGNAME-unset} home=${HOME-unset} path=${PATH:+set}\"\n"
	for _, tc := range []struct {
		args []string
		want string
	}{
		// Only SLURM_* from sbatch; the rest from the login shell.
		{[]string{"--export=NONE"}, "foo=unset logname=root home=/root path=set\n"},
		// A list: its variables over the login environment.
		{[]string{"--export=FOO"}, "foo=submitted logname=root home=/root path=set\n"},
		// Everything sbatch had, over the login environment.
		{[]string{"--get-user-env"}, "foo=submitted logname=submitter home=" + os.Getenv("HOME") + " path=set\n"},
		{[]string{"--get-user-env=10L"}, "foo=submitted logname=submitter home=" + os.Getenv("HOME") + " path=set\n"},
		{[]string{"--get-user-env=S"}, "foo=submitted logname=submitter home=" + os.Getenv("HOME") + " path=set\n"},
	} {
		r := c.RunEnv(env, script, "sbatch", append([]string{"--parsable", "-o", "ue.out", "--open-mode=truncate"}, tc.args...)...)
		if r.Code != 0 {
			t.Fatalf("sbatch %v: %+v", tc.args, r)
		}
		id := strings.TrimSpace(r.Stdout)
		c.WaitState(id, "COMPLETED", 30*time.Second)
		if got := c.ReadFile("ue.out"); got != tc.want {
			t.Errorf("sbatch %v: the script saw %q, want %q", tc.args, got, tc.want)
		}
	}
	if r := c.Run("", "sbatch", "--get-user-env=10X", "--wrap", "true"); r.Code != 255 || r.Stderr != "sbatch: error: Invalid --get-user-env specification\n" {
		t.Errorf("sbatch --get-user-env=10X: %+v", r)
	}
}
