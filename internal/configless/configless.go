// Package configless is Slurm's "configless" mode
// (SlurmctldParameters=enable_configless): the controller hands its
// configuration files to node daemons and login hosts over the
// authenticated node protocol, and they keep them in a cache folder
// and run from it. It holds what both sides share: which files go to
// whom, how a reply is checked and written, and how a node finds the
// controller (--conf-server, or the DNS SRV record _slurmctld._tcp).
package configless

import (
	"errors"
	"fmt"
	"strings"

	"github.com/droverhq/drover/internal/nodeproto"
)

// SlurmdFiles are the files a node daemon gets, as Slurm 25.11's
// slurmctld sends slurmd (slurmd_config_files in fetch_config.c).
var SlurmdFiles = []string{
	"acct_gather.conf", "cgroup.conf", "cli_filter.lua", "gres.conf", "helpers.conf",
	"job_container.conf", "mpi.conf", "namespace.yaml", "oci.conf", "plugstack.conf",
	"scrun.lua", "slurm.conf", "topology.conf", "topology.yaml",
}

// ClientFiles are the files a login host's credential service gets for
// the commands, as Slurm 25.11 sends sackd and the commands
// (client_config_files).
var ClientFiles = []string{
	"cli_filter.lua", "oci.conf", "plugstack.conf", "scrun.lua", "slurm.conf",
	"topology.conf", "topology.yaml",
}

// CacheFolder is the folder under SlurmdSpoolDir where a node daemon
// keeps the files, as slurmd's SlurmdSpoolDir/conf-cache.
const CacheFolder = "conf-cache"

// RunConf is where a login host's credential service keeps the files
// and where the commands look for slurm.conf when there is no local one
// (Slurm's /run/slurm/conf, which sackd fills and slurmd links to its
// cache).
const RunConf = "/run/slurm/conf"

// MaxFiles bounds how many files a reply may carry: Slurm's lists and
// their includes and scripts are a few dozen at most.
const MaxFiles = 256

// MaxReply bounds a reply's size, as every node protocol body is bound.
const MaxReply = nodeproto.MaxBody

// ErrBadReply is wrapped by every refusal of a controller's reply.
var ErrBadReply = errors.New("configless: the controller's reply is not a configuration")

// ValidName refuses a file name that could reach outside the cache
// folder (a path, "..", a name with a NUL), that starts with "." (the
// cache's own temporary files do) or that names a key: keys are never
// distributed by configless mode, a host gets its key from its admin.
func ValidName(name string) error {
	switch {
	case name == "":
		return errors.New("empty file name")
	case len(name) > 255:
		return fmt.Errorf("file name of %d bytes", len(name))
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("file name %q is a path", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("file name %q starts with a dot", name)
	case isKey(name):
		return fmt.Errorf("file name %q is a key's: keys are not distributed", name)
	}
	return nil
}

// isKey names the cluster key, its key set and TLS private keys.
func isKey(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".key") || strings.HasSuffix(n, ".jwks") ||
		strings.HasSuffix(n, ".pem") && strings.Contains(n, "key")
}

// Check refuses a reply a cache must not take: too many files, a name
// ValidName refuses, the same name twice, or no slurm.conf.
func Check(r *nodeproto.ConfigReply) error {
	if r == nil {
		return fmt.Errorf("%w: empty", ErrBadReply)
	}
	if len(r.Files) > MaxFiles {
		return fmt.Errorf("%w: %d files, more than %d", ErrBadReply, len(r.Files), MaxFiles)
	}
	seen := make(map[string]bool, len(r.Files))
	for _, f := range r.Files {
		if err := ValidName(f.Name); err != nil {
			return fmt.Errorf("%w: %w", ErrBadReply, err)
		}
		if seen[f.Name] {
			return fmt.Errorf("%w: %s twice", ErrBadReply, f.Name)
		}
		seen[f.Name] = true
		if !f.Exists && (f.Content != "" || f.Execute) {
			return fmt.Errorf("%w: %s is said not to exist but has content", ErrBadReply, f.Name)
		}
	}
	if !hasSlurmConf(r) {
		return fmt.Errorf("%w: no slurm.conf", ErrBadReply)
	}
	return nil
}

func hasSlurmConf(r *nodeproto.ConfigReply) bool {
	for _, f := range r.Files {
		if f.Name == "slurm.conf" && f.Exists {
			return true
		}
	}
	return false
}
