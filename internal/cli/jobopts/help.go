package jobopts

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/pflag"
)

// helpColumn is where descriptions start in --help, as in Slurm's text.
const helpColumn = 30

// Help returns the text of --help: the options Drover implements, laid out
// like Slurm's help (short option, long option with its argument, and a
// description from column 31). srun's and salloc's are Slurm's own text, in
// its sections, less the options Drover refuses.
func (p *Parser) Help() string {
	switch p.cmd {
	case cmdSrun:
		return p.filterHelp(srunHelpText) + p.pluginHelp()
	case cmdSalloc:
		return p.filterHelp(sallocHelpText) + p.pluginHelp()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s [OPTIONS...] script [args...]\n\nOptions:\n", p.cfg.Prog)
	var help, other []*pflag.Flag
	p.fs.VisitAll(func(f *pflag.Flag) {
		d := f.Value.(*optDef)
		switch {
		case d.long == "help" || d.long == "usage":
			help = append(help, f)
		case d.long == "version":
			other = append(other, f)
		case d.hidden:
		default:
			writeHelpLine(&b, f)
		}
	})
	b.WriteString("\nHelp options:\n")
	for _, f := range help {
		writeHelpLine(&b, f)
	}
	b.WriteString("\nOther options:\n")
	for _, f := range other {
		writeHelpLine(&b, f)
	}
	b.WriteString("\n")
	b.WriteString(p.pluginHelp())
	return b.String()
}

func writeHelpLine(b *strings.Builder, f *pflag.Flag) {
	d := f.Value.(*optDef)
	left := "      "
	if d.short != 0 {
		left = fmt.Sprintf("  -%c, ", d.short)
	}
	left += "--" + d.long
	switch d.arg {
	case requiredArgument:
		left += "=" + d.argName
	case optionalArgument:
		if d.argName != "" {
			left += "[=" + d.argName + "]"
		}
	}
	if len(left) >= helpColumn {
		fmt.Fprintf(b, "%s\n%s%s\n", left, strings.Repeat(" ", helpColumn), d.usage)
		return
	}
	fmt.Fprintf(b, "%-*s%s\n", helpColumn, left, d.usage)
}

// Usage returns the text of --usage: a brief synopsis (Slurm's, for srun
// and salloc).
func (p *Parser) Usage() string {
	switch p.cmd {
	case cmdSrun:
		return srunUsageText
	case cmdSalloc:
		return sallocUsageText
	}
	pad := strings.Repeat(" ", len("Usage: ")+len(p.cfg.Prog)+1)
	lines := []string{
		"[-N nnodes] [-n ntasks]",
		"[-c ncpus] [-p partition] [--hold] [--parsable] [-t minutes]",
		"[-D path] [--no-kill] [--overcommit]",
		"[--input file] [--output file] [--error file]",
		"[--time-min=minutes] [--licenses=names]",
		"[--chdir=directory] [--oversubscribe] [-m dist] [-J jobname]",
		"[--verbose] [--gid=group] [--uid=user]",
		"[--contiguous] [--mincpus=n] [--mem=MB] [--tmp=MB] [-C list]",
		"[--account=name] [--dependency=type:jobid[+time]] [--comment=name]",
		"[--mail-type=type] [--mail-user=user] [--nice[=value]] [--wait]",
		"[--requeue[=expedite]] [--no-requeue] [--ntasks-per-node=n]",
		"[--propagate] [--nodefile=file] [--nodelist=hosts] [--exclude=hosts]",
		"[--network=type] [--mem-per-cpu=MB] [--qos=qos] [--gres=list]",
		"[--reservation=name] [--array=index_values] [--export[=names]]",
		"[--gpus=n] [--gpus-per-node=n] [--gpus-per-task=n] [--mem-per-gpu=MB]",
		"executable [args...]",
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: %s %s\n", p.cfg.Prog, lines[0])
	for _, l := range lines[1:] {
		b.WriteString(pad)
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// helpOption finds the long option a help line describes ("  -N,
// --nodes=N ...", "      --cpu-bind= ..."), compiled on first use: most
// runs print no help.
var helpOption = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {2}(?:-[A-Za-z], | {4})--([A-Za-z0-9_-]+)`) })

// filterHelp drops from a help text the entries of options this parser
// does not offer or hides (the ones Drover refuses): an entry is an option
// line and the lines below it indented to the description column.
func (p *Parser) filterHelp(text string) string {
	var b strings.Builder
	lines := strings.SplitAfter(text, "\n")
	cont := strings.Repeat(" ", helpColumn)
	drop := false
	for _, l := range lines {
		if drop && strings.HasPrefix(l, cont) {
			continue
		}
		drop = false
		if m := helpOption().FindStringSubmatch(l); m != nil {
			f := p.fs.Lookup(m[1])
			if f == nil || f.Hidden {
				drop = true
				continue
			}
		}
		b.WriteString(l)
	}
	return b.String()
}
