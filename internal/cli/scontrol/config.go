package scontrol

import (
	"context"
	"fmt"
	"strings"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/showconf"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// showConfig prints the configuration as `scontrol show config` does:
// "Configuration data as of <time>", the settings, a blank line and the
// controllers' ping status. The settings come from the local slurm.conf
// (v0.0.44 has no configuration endpoint) with Slurm's defaults for the
// rest; the boot time and version come from the controller.
func (c *cmd) showConfig(ctx context.Context, _ *string) {
	conf := c.localConf()
	src := showconf.Source{Path: conf.path, Conf: conf.cfg, BootTime: "Unknown", Version: clienv.SlurmVersion}
	if res, err := c.env.Client.SlurmV0044GetDiag(ctx); err == nil {
		if d, ok := res.(*v0044.V0044OpenapiDiagResp); ok {
			src.BootTime = c.timeStr(epoch(d.Statistics.ReqTimeStart))
			if m, ok := d.Meta.Get(); ok {
				if s, ok := m.Slurm.Get(); ok && s.Release.Or("") != "" {
					src.Version = s.Release.Or("")
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Configuration data as of %s\n", c.timeStr(c.now().Unix()))
	for _, l := range showconf.Lines(src) {
		fmt.Fprintf(&b, "%-23s = %s\n", l.Name, l.Value)
	}
	b.WriteString("\n")
	fmt.Fprint(c.env.Stdout, b.String())
	c.printPings(ctx)
}
