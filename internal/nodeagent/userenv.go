package nodeagent

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"
)

// The markers around the environment a login shell prints, as slurmd's
// env_array_user_default brackets it (the user's login scripts may print
// before and after).
const (
	userEnvStart = "XXXXSLURMSTARTPARSINGHEREXXXX"
	userEnvStop  = "XXXXSLURMSTOPPARSINGHEREXXXXX"
)

// userEnvTimeout is how long a login shell may take to print its
// environment (25.11's DEFAULT_GET_ENV_TIMEOUT).
const userEnvTimeout = 120 * time.Second

// wantsUserEnv says a batch job asks for its user's login environment:
// sbatch --get-user-env, --export=NONE or a list (SLURM_GET_USER_ENV=1).
func wantsUserEnv(env []string) bool {
	return slices.Contains(env, "SLURM_GET_USER_ENV=1")
}

// withUserEnv is a batch job's environment under its user's login
// environment, as slurmd's _get_user_env builds it: the variables the
// user's login shell sets ("su - USER"), each overridden by the job's.
func withUserEnv(ctx context.Context, user string, env []string) ([]string, error) {
	login, err := loginEnv(ctx, user)
	if err != nil {
		return nil, err
	}
	out := newEnvList(login)
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out.set(k, v)
		}
	}
	return out.list(), nil
}

// loginEnv runs user's login shell through su and reads the environment
// it prints.
func loginEnv(ctx context.Context, user string) ([]string, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the node daemon must run as root to load a user's environment")
	}
	su, err := exec.LookPath("su")
	if err != nil {
		return nil, fmt.Errorf("load %s's environment: %w", user, err)
	}
	envCmd := "/usr/bin/env"
	if _, err := os.Stat(envCmd); err != nil {
		envCmd = "/bin/env"
	}
	ctx, cancel := context.WithTimeout(ctx, userEnvTimeout)
	defer cancel()
	script := "/bin/echo; /bin/echo; /bin/echo; /bin/echo " + userEnvStart + "; " + envCmd + "; /bin/echo " + userEnvStop
	cmd := exec.CommandContext(ctx, su, "-", user, "-c", script)
	cmd.Env = []string{"ENVIRONMENT=BATCH"}
	cmd.Stdin = nil
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("load %s's environment: timed out after %s", user, userEnvTimeout)
	}
	env, ok := parseUserEnv(out)
	if !ok {
		if err == nil {
			err = errors.New("no environment printed")
		}
		return nil, fmt.Errorf("load %s's environment: %w", user, err)
	}
	return env, nil
}

// parseUserEnv reads the NAME=value lines between the markers; an
// exported shell function ("BASH_FUNC_f%%=() {" up to its "}") spans
// lines, and other lines are the login scripts' own output, skipped. ok
// is false when the markers are missing.
func parseUserEnv(out []byte) ([]string, bool) {
	var env []string
	in, done, inFunc := false, false, false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && line == userEnvStart:
			in = true
		case in && line == userEnvStop:
			in, done = false, true
		case in && inFunc:
			env[len(env)-1] += "\n" + line
			inFunc = line != "}"
		case in:
			name, value, ok := strings.Cut(line, "=")
			if !ok || !validEnvName(name) {
				continue
			}
			env = append(env, line)
			inFunc = strings.HasPrefix(value, "() {") && !strings.HasSuffix(value, "}")
		}
	}
	return env, done
}

// validEnvName is a shell variable's name, or an exported function's
// (BASH_FUNC_name%%).
func validEnvName(s string) bool {
	if f, ok := strings.CutPrefix(s, "BASH_FUNC_"); ok {
		s = strings.TrimSuffix(strings.TrimSuffix(f, "%%"), "()")
	}
	if s == "" {
		return false
	}
	for i, r := range s {
		ok := r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9')
		if !ok {
			return false
		}
	}
	return true
}
