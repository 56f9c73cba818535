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

// showLicenses is scontrol_print_licenses: licenses sorted by name.
func (c *cmd) showLicenses(ctx context.Context, val *string) {
	res, err := c.env.Client.SlurmV0044GetLicenses(ctx)
	var lics v0044.V0044Licenses
	var re *restError
	if err != nil {
		re, _ = fromTransport(err)
	} else {
		switch r := res.(type) {
		case *v0044.V0044OpenapiLicensesResp:
			if e := fromErrors(r.Errors, 200); e != nil && e.Code != 0 {
				re = e
			}
			lics = r.Licenses
		case *v0044.V0044OpenapiLicensesRespStatusCode:
			if re = fromErrors(r.Response.Errors, r.StatusCode); re == nil {
				re = fromStatus(r.StatusCode)
			}
		default:
			re = fromStatus(0)
		}
	}
	if re != nil {
		c.perror("slurm_load_license error", re)
		return
	}
	if len(lics) == 0 {
		fmt.Fprintln(c.env.Stdout, "No licenses configured in Slurm.")
		return
	}
	sorted := make([]v0044.V0044License, len(lics))
	copy(sorted, lics)
	sortLicenses(sorted)
	for i := range sorted {
		if val != nil && sorted[i].LicenseName.Or("") != *val {
			continue
		}
		fmt.Fprint(c.env.Stdout, formatLicense(&sorted[i], c.oneLiner, c.timeStr))
	}
}

func sortLicenses(l []v0044.V0044License) {
	for i := 1; i < len(l); i++ {
		for j := i; j > 0 && l[j].LicenseName.Or("") < l[j-1].LicenseName.Or(""); j-- {
			l[j], l[j-1] = l[j-1], l[j]
		}
	}
}

// formatLicense prints one license as scontrol's _print_license_info does.
func formatLicense(l *v0044.V0044License, oneLiner bool, timeStr func(int64) string) string {
	sep := "\n    "
	if oneLiner {
		sep = " "
	}
	remote := "no"
	if l.Remote.Or(false) {
		remote = "yes"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "LicenseName=%s%sTotal=%d Used=%d Free=%d Reserved=%d Remote=%s",
		l.LicenseName.Or(""), sep, l.Total.Or(0), l.Used.Or(0), l.Free.Or(0), l.Reserved.Or(0), remote)
	switch {
	case l.Nodes.Or("") != "":
		// slurmrestd does not report the license mode; node-bound
		// licenses are the ones that have one.
		fmt.Fprintf(&b, "%sNodes=%s Mode=1\n", sep, l.Nodes.Or(""))
	case l.Remote.Or(false):
		fmt.Fprintf(&b, "%sLastConsumed=%d LastDeficit=%d LastUpdate=%s\n", sep,
			l.LastConsumed.Or(0), l.LastDeficit.Or(0), timeStr(l.LastUpdate.Or(0)))
	default:
		b.WriteString("\n")
	}
	return b.String()
}
