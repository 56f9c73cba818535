package scontrol

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/showconf"
)

// showConfig prints the configuration as `scontrol show config` does:
// "Configuration data as of <time>", the settings, a blank line and the
// controllers' ping status. The settings come from the local slurm.conf
// (v0.0.44 has no configuration endpoint) with Slurm's defaults for the
// rest; the boot time and version come from the controller.
func (c *cmd) showConfig(ctx context.Context, _ *string) {
	conf := c.localConf()
	src := showconf.Source{Path: conf.path, Conf: conf.cfg, BootTime: "Unknown", Version: clienv.SlurmVersion}
	// Without the statistics the boot time is Unknown and the version
	// the one Drover follows.
	if ans, err := readmodel.GetDiag(ctx, c.env.Client); err == nil && !ans.Failed() {
		for _, d := range ans.Records {
			src.BootTime = c.timeStr(d.StartTime)
			if d.Release != "" {
				src.Version = d.Release
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
	ans, err := readmodel.GetLicenses(ctx, c.env.Client)
	var re *restError
	if err != nil {
		re, _ = fromTransport(err)
	} else {
		re = fromAnswer(ans.Errors, ans.Status)
	}
	if re != nil {
		c.perror("slurm_load_license error", re)
		return
	}
	lics := ans.Records
	if len(lics) == 0 {
		fmt.Fprintln(c.env.Stdout, "No licenses configured in Slurm.")
		return
	}
	sortLicenses(lics)
	for i := range lics {
		if val != nil && lics[i].Name != *val {
			continue
		}
		fmt.Fprint(c.env.Stdout, formatLicense(&lics[i], c.oneLiner, c.timeStr))
	}
}

// sortLicenses sorts by name, keeping the controller's order among
// licenses of one name.
func sortLicenses(l []readmodel.License) {
	slices.SortStableFunc(l, func(a, b readmodel.License) int { return strings.Compare(a.Name, b.Name) })
}

// formatLicense prints one license as scontrol's _print_license_info does.
func formatLicense(l *readmodel.License, oneLiner bool, timeStr func(int64) string) string {
	sep := "\n    "
	if oneLiner {
		sep = " "
	}
	remote := "no"
	if l.Remote {
		remote = "yes"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "LicenseName=%s%sTotal=%d Used=%d Free=%d Reserved=%d Remote=%s",
		l.Name, sep, l.Total, l.Used, l.Free, l.Reserved, remote)
	switch {
	case l.Nodes != "":
		// slurmrestd does not report the license mode; node-bound
		// licenses are the ones that have one.
		fmt.Fprintf(&b, "%sNodes=%s Mode=1\n", sep, l.Nodes)
	case l.Remote:
		fmt.Fprintf(&b, "%sLastConsumed=%d LastDeficit=%d LastUpdate=%s\n", sep,
			l.LastConsumed, l.LastDeficit, timeStr(l.LastUpdate))
	default:
		b.WriteString("\n")
	}
	return b.String()
}
