package scontrol

import (
	"fmt"
	"io"
	"os"

	"github.com/droverhq/drover/internal/showconf"
	"github.com/droverhq/drover/internal/slurmconf"
)

// maxHostlistFile bounds what is read from hostlist files, as Slurm
// refuses files over 1 MB.
const maxHostlistFile = 1 << 20

// localConfig is what scontrol reads from the local slurm.conf: the
// settings the v0.0.44 API does not carry (partition flags such as
// Default=YES, SlurmdPort, TrackWCKey) and the data of "show config".
type localConfig struct {
	// loaded is false when no slurm.conf could be read; the commands then
	// print Slurm's defaults.
	loaded bool
	path   string
	cfg    *slurmconf.Config
}

// get returns the value of a global setting as written, "" when unset.
func (l localConfig) get(key string) string { return l.source().Get(key) }

func (l localConfig) getDefault(key, def string) string { return l.source().GetDefault(key, def) }

// bool reads a yes/no setting as Slurm does.
func (l localConfig) bool(key string) bool { return l.source().Bool(key) }

// source is the configuration as `show config` reads it.
func (l localConfig) source() showconf.Source { return showconf.Source{Path: l.path, Conf: l.cfg} }

// partFlags are the partition settings slurmrestd v0.0.44 leaves out of
// partition_info (Slurm's "flags", marked FIXME in its data parser).
type partFlags struct {
	Default, Hidden, RootOnly, ExclusiveUser, ExclusiveTopo bool
	LLN, DisableRootJobs, ReqResv, PowerDownOnIdle          bool
	PreemptMode                                             string
}

// partitionFlags returns the flags of every partition named in slurm.conf.
func (l localConfig) partitionFlags() map[string]partFlags {
	out := map[string]partFlags{}
	if l.cfg == nil {
		return out
	}
	for _, p := range l.cfg.Partitions {
		out[p.Name] = partFlags{
			Default:         p.Default,
			Hidden:          p.Hidden,
			RootOnly:        p.RootOnly,
			ExclusiveUser:   p.ExclusiveUser,
			ExclusiveTopo:   p.ExclusiveTopo,
			LLN:             p.LLN,
			DisableRootJobs: p.DisableRootJobs,
			ReqResv:         p.ReqResv,
			PowerDownOnIdle: p.PowerDownOnIdle,
			PreemptMode:     p.PreemptMode,
		}
	}
	return out
}

// localConf reads the slurm.conf named by SLURM_CONF (or the default
// path) once. A missing or unreadable file yields an empty configuration.
func (c *cmd) localConf() localConfig {
	if c.conf != nil {
		return *c.conf
	}
	path := c.env.SlurmConfPath()
	conf := localConfig{path: path}
	if cfg, err := slurmconf.Load(path); err == nil {
		conf.cfg, conf.loaded = cfg, true
	}
	c.conf = &conf
	return conf
}

// readAllLimited reads a hostlist file from standard input.
func readAllLimited(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, io.ErrUnexpectedEOF
	}
	return io.ReadAll(io.LimitReader(r, maxHostlistFile))
}

// readFileLimited reads a hostlist file named on the command line.
func readFileLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open hostlist file: %w", err)
	}
	defer f.Close()
	return readAllLimited(f)
}
