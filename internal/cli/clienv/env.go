// Package clienv holds what every drop-in Slurm command needs from its
// surroundings: standard streams, environment, clock, identity and the
// slurmrestd client. Commands take an *Env instead of reaching for globals so
// that tests can run them in-process against a real server.
package clienv

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Env is the context of one command invocation.
type Env struct {
	// Prog is the command's name as Slurm prints it in messages ("sbatch").
	Prog   string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the caller's environment (SLURM_TIME_FORMAT, SBATCH_*...).
	Getenv func(string) string
	// Environ is the caller's whole environment, as os.Environ returns it;
	// sbatch --export=ALL forwards it.
	Environ func() []string
	// Now is the clock; output that depends on the time (squeue's TIME
	// column) reads it.
	Now func() time.Time
	// Client reaches the controller through the slurmrestd v0.0.44 API.
	Client API
	// Client45 reaches it through v0.0.45, for the operations v0.0.44
	// lacks (partitions made and changed at run time); nil in tests that
	// do not need it.
	Client45 API45
	// Call sends one of Drover's own requests, for what v0.0.44 has no
	// operation for (job steps): in as JSON, the answer decoded into out
	// (see connect.Call).
	Call func(ctx context.Context, method, path string, in, out any) error
	// User is the caller's identity.
	User User
	// Hostname is the submit host's name (SLURM_SUBMIT_HOST).
	Hostname string
	// Cwd is the caller's working directory.
	Cwd string
}

// User identifies the person running a command.
type User struct {
	Name string
	UID  uint32
	GID  uint32
}

// SlurmVersion is the Slurm release whose behaviour the drop-in commands
// follow; every command's --version prints "slurm " + SlurmVersion.
const SlurmVersion = "25.11.0"

// Command is the entry point of one drop-in command: it parses args (without
// the program name), does its work and returns the process exit code.
type Command func(ctx context.Context, env *Env, args []string) int

// DefaultSlurmConf is where Slurm's commands look for slurm.conf when
// SLURM_CONF is not set and their installation names none.
const DefaultSlurmConf = "/etc/slurm/slurm.conf"

// ShimConf is the name of the link `drover install-shims --conf` puts
// beside the commands: the slurm.conf of the cluster they belong to.
const ShimConf = "slurm.conf"

// CachedSlurmConf is the copy a configless host keeps (the login
// service's cache, or the link a node daemon makes to its own): Slurm's
// commands read it when there is no local slurm.conf.
const CachedSlurmConf = "/run/slurm/conf/slurm.conf"

// defaultConf is DefaultConfPath's answer, found once per process.
var defaultConf = sync.OnceValue(func() string {
	return findConf(commandDir(), DefaultSlurmConf, CachedSlurmConf)
})

// findConf is the first of: the ShimConf in the command's folder dir,
// the default slurm.conf, the configless cache's; the default if none
// exists (its absence is then reported where it is read).
func findConf(dir, def, cached string) string {
	regular := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.Mode().IsRegular()
	}
	if dir != "" {
		if p := filepath.Join(dir, ShimConf); regular(p) {
			return p
		}
	}
	if !regular(def) && regular(cached) {
		return cached
	}
	return def
}

// DefaultConfPath is the slurm.conf a command reads without SLURM_CONF:
// the one its installation names (the ShimConf beside the command as it
// was started), as Slurm's commands read the one built into them, so
// that a command run with every SLURM_* variable removed still reaches
// its own cluster; DefaultSlurmConf otherwise, or CachedSlurmConf when
// only that exists (a configless login host or node, as Slurm's
// commands fall back to /run/slurm/conf/slurm.conf).
func DefaultConfPath() string { return defaultConf() }

// commandDir is the folder of the command as it was started: argv[0]'s,
// or the PATH entry that holds it.
func commandDir() string {
	arg0 := os.Args[0]
	if !strings.Contains(arg0, "/") {
		p, err := exec.LookPath(arg0)
		if err != nil {
			return ""
		}
		arg0 = p
	}
	abs, err := filepath.Abs(arg0)
	if err != nil {
		return ""
	}
	return filepath.Dir(abs)
}

// SlurmConfPath is the slurm.conf the command reads: SLURM_CONF, or the
// default path.
func (e *Env) SlurmConfPath() string {
	if e.Getenv != nil {
		if p := e.Getenv("SLURM_CONF"); p != "" {
			return p
		}
	}
	return DefaultConfPath()
}
