// Package sstat is the drop-in `sstat` command: what the running steps of
// a job use now, as their node daemons measure it (GET
// /drover/v1/job/{id}/stat, which the controller answers by asking the
// step's nodes, as slurmctld and slurmd answer REQUEST_JOB_STEP_STAT), in
// sstat's columns and units.
package sstat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/coltable"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/cli/getopt"
	"github.com/droverhq/drover/internal/slurmerr"
	stepproto "github.com/droverhq/drover/internal/step/proto"
)

var longOptions = []string{"allsteps", "helpformat", "help", "pidformat", "jobs", "noheader", "noconvert",
	"format", "fields", "parsable", "parsable2", "usage", "verbose", "version"}

// selector is one -j item: a job, and a step of it or none.
type selector struct {
	job uint32
	// step is "" (the job's first srun step, or all with -a), "batch",
	// "extern" or a number.
	step string
}

type options struct {
	jobs      []selector
	allSteps  bool
	pids      bool
	format    []column
	noHeader  bool
	parsable  bool
	parsable2 bool
	conv      format
}

const usageText = `sstat [<OPTION>] -j <job(.stepid)>
    Valid <OPTION> values are:
      -a, --allsteps:
                   Print all steps for the given job(s) when no step is
                   specified.
      -e, --helpformat:
                   Print a list of fields that can be specified with the
                   '--format' option
     -h, --help:   Print this description of use.
     -i, --pidformat:
                   Predefined format to list the pids running for each
                   job step.  (JobId,Nodes,Pids)
     -j, --jobs:
                   Format is <job(.step)>. Stat this job step
                   or comma-separated list of job steps. This option is
                   required.  The step portion will default to the lowest
                   numbered (not batch, extern, etc) step running if not
                   specified, unless the --allsteps flag is set where not
                   specifying a step will result in all running steps
                   to be displayed. A step id of 'batch' will display the
                   information about the batch step. A step id of 'extern'
                   will display the information about the extern step
                   when using PrologFlags=contain.
     -n, --noheader:
                   No header will be added to the beginning of output.
                   The default is to print a header.
     --noconvert:  Don't convert units from their original type
                   (e.g. 2048M won't be converted to 2G).
     -o, --format:
                   Comma separated list of fields. (use "--helpformat"
                   for a list of available fields).
     -p, --parsable: output will be '|' delimited with a '|' at the end
     -P, --parsable2: output will be '|' delimited without a '|' at the end
     --usage:      Display brief usage message.
     -v, --verbose:
                   Primarily for debugging purposes, report the state of
                   various variables during processing.
     -V, --version: Print version.
`

// Run is the sstat command.
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	o, rc, done := parse(env, args)
	if done {
		return rc
	}
	var lines []stepStat
	for _, sel := range o.jobs {
		lines = append(lines, o.stat(ctx, env, sel)...)
	}
	rows := make([][]string, len(lines))
	for i := range lines {
		rows[i] = make([]string, len(o.format))
		for k, c := range o.format {
			rows[i][k] = c.Field.cell(&lines[i], o.conv)
		}
	}
	cols := make([]coltable.Column, len(o.format))
	for i, c := range o.format {
		cols[i] = coltable.Column{Name: c.Field.name, Width: c.Width, Left: c.Field.name == "JobID"}
	}
	coltable.Print(env.Stdout, cols, rows, coltable.Style{NoHeader: o.noHeader, Parsable: o.parsable, Parsable2: o.parsable2, Delimiter: "|"})
	return 0
}

// stat asks for one -j item's steps and returns its lines; problems are
// reported on stderr as sstat reports them, and do not change the exit
// code.
func (o *options) stat(ctx context.Context, env *clienv.Env, sel selector) []stepStat {
	path := strings.Replace(stepproto.PathStat, "{job_id}", strconv.FormatUint(uint64(sel.job), 10), 1)
	if sel.step != "" && sel.step != "extern" {
		path += "?step=" + url.QueryEscape(sel.step)
	}
	name := func() string { return fmt.Sprintf("StepId=%d.%s", sel.job, sel.step) }
	var reply stepproto.Stats
	if sel.step != "extern" {
		if err := env.Call(ctx, "GET", path, nil, &reply); err != nil {
			var re *connect.RequestError
			switch {
			case errors.As(err, &re) && re.Code == int32(slurmerr.InvalidJobID):
				fmt.Fprintf(env.Stderr, "sstat: error: couldn't get steps for job %d\n", sel.job)
			case sel.step != "":
				fmt.Fprintf(env.Stderr, "sstat: error: problem getting step_layout for %s: %v\n", name(), err)
			default:
				fmt.Fprintf(env.Stderr, "sstat: error: couldn't get steps for job %d: %v\n", sel.job, err)
			}
			return nil
		}
	}
	steps := reply.Steps
	switch {
	case sel.step != "" && len(steps) == 0:
		// No extern steps here (PrologFlags=contain is not supported).
		fmt.Fprintf(env.Stderr, "sstat: error: %s not found running.\n", name())
		return nil
	case len(steps) == 0:
		fmt.Fprintf(env.Stderr, "sstat: error: No steps running for job %d\n", sel.job)
		return nil
	case sel.step == "" && !o.allSteps:
		// The lowest numbered srun step; none is no error.
		var first *stepproto.StepStat
		for i := range steps {
			if s := &steps[i]; s.StepID != stepproto.BatchStep && (first == nil || s.StepID < first.StepID) {
				first = s
			}
		}
		if first == nil {
			return nil
		}
		steps = []stepproto.StepStat{*first}
	}
	var out []stepStat
	for i := range steps {
		s := &steps[i]
		var answered []stepproto.NodeStat
		for _, n := range s.Nodes {
			if n.Error != "" {
				fmt.Fprintf(env.Stderr, "sstat: error: slurm_job_step_stat: there was an error with the request to %s rc = %s\n", n.Node, n.Error)
				continue
			}
			answered = append(answered, n)
		}
		if len(answered) == 0 {
			continue
		}
		if o.pids {
			for _, n := range answered {
				out = append(out, newStepStat(s, []stepproto.NodeStat{n}))
			}
			continue
		}
		out = append(out, newStepStat(s, answered))
	}
	return out
}

func parse(env *clienv.Env, args []string) (options, int, bool) {
	const prog = "sstat"
	var o options
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var jobs, formatArg string
	var help, usage, version, helpFormat bool
	var verbose int
	fs.BoolVarP(&o.allSteps, "allsteps", "a", false, "")
	fs.BoolVarP(&helpFormat, "helpformat", "e", false, "")
	fs.BoolVarP(&help, "help", "h", false, "")
	fs.BoolVarP(&o.pids, "pidformat", "i", false, "")
	fs.StringVarP(&jobs, "jobs", "j", "", "")
	fs.BoolVarP(&o.noHeader, "noheader", "n", false, "")
	fs.BoolVar(&o.conv.noConvert, "noconvert", false, "")
	fs.StringVarP(&formatArg, "format", "o", "", "")
	fs.BoolVarP(&o.parsable, "parsable", "p", false, "")
	fs.BoolVarP(&o.parsable2, "parsable2", "P", false, "")
	fs.BoolVar(&usage, "usage", false, "")
	fs.CountVarP(&verbose, "verbose", "v", "")
	fs.BoolVarP(&version, "version", "V", false, "")
	argv, err := getopt.ExpandLong(args, longOptions, map[string]string{"fields": "format"})
	if err == nil {
		err = fs.Parse(argv)
	}
	if err != nil {
		fmt.Fprintln(env.Stderr, getopt.Message(prog, err))
		fmt.Fprintf(env.Stderr, "Try \"%s --help\" for more information\n", prog)
		return o, 1, true
	}
	switch {
	case help:
		io.WriteString(env.Stdout, usageText)
		return o, 0, true
	case usage:
		fmt.Fprintln(env.Stdout, "Usage: sstat [options] -j <job(.stepid)>\n\tUse --help for help")
		return o, 0, true
	case version:
		fmt.Fprintln(env.Stdout, "slurm "+clienv.SlurmVersion)
		return o, 0, true
	case helpFormat:
		for i, n := range fields().order {
			fmt.Fprintf(env.Stdout, "%-20s", n)
			if i%4 == 3 || i == len(fields().order)-1 {
				fmt.Fprintln(env.Stdout)
			}
		}
		return o, 0, true
	}
	// A bare argument is a job, as -j.
	items := getopt.SplitList(jobs)
	for _, a := range fs.Args() {
		items = append(items, getopt.SplitList(a)...)
	}
	for _, item := range items {
		sel, err := parseSelector(item)
		if err != nil {
			fmt.Fprintf(env.Stderr, "sstat: fatal: Bad job/step specified: %s\n", item)
			return o, 1, true
		}
		o.jobs = append(o.jobs, sel)
	}
	f := defaultFormat
	switch {
	case formatArg != "":
		f = formatArg
	case o.pids:
		f = pidFormat
	}
	if o.format, err = parseFormat(f); err != nil {
		fmt.Fprintf(env.Stderr, "sstat: error: %v\n", err)
		return o, 1, true
	}
	if len(o.jobs) == 0 {
		fmt.Fprintln(env.Stderr, "sstat: error: You didn't give me any jobs to stat.")
		return o, 1, true
	}
	return o, 0, false
}

// parseSelector reads "JOB", "JOB.STEP", "JOB.batch" or "JOB.extern".
func parseSelector(s string) (selector, error) {
	head, step, hasStep := strings.Cut(strings.TrimSpace(s), ".")
	id, err := strconv.ParseUint(head, 10, 32)
	if err != nil || id == 0 {
		return selector{}, fmt.Errorf("invalid job id %q", head)
	}
	sel := selector{job: uint32(id)}
	if !hasStep {
		return sel, nil
	}
	switch step {
	case "batch", "extern":
	default:
		if _, err := strconv.ParseUint(step, 10, 32); err != nil {
			return selector{}, fmt.Errorf("invalid step %q", step)
		}
	}
	sel.step = step
	return sel, nil
}
