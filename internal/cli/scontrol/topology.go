package scontrol

import (
	"fmt"
	"path/filepath"

	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/topology"
)

// showTopology is scontrol show topology [NAME]. The v0.0.44 API carries
// no topology, so it is read from the topology.conf beside slurm.conf, as
// the controller reads it.
func (c *cmd) showTopology(val *string) {
	conf := c.localConf()
	switch conf.get("TopologyPlugin") {
	case "topology/tree", "topology/block":
	default:
		if c.quiet != 1 {
			fmt.Fprintln(c.env.Stdout, "No topology information available")
		}
		return
	}
	t, err := topology.Load(filepath.Join(filepath.Dir(conf.path), "topology.conf"))
	if err != nil {
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "%s: error: %v\n", c.prog, err)
		return
	}
	only := ""
	if val != nil {
		only = *val
	}
	lines := t.Describe(only, hostlist.Compress)
	if len(lines) == 0 && only != "" {
		c.exitCode = 1
		if c.quiet != 1 {
			fmt.Fprintf(c.env.Stdout, "Switch %s not found\n", only)
		}
		return
	}
	for _, l := range lines {
		fmt.Fprintln(c.env.Stdout, l)
	}
}
