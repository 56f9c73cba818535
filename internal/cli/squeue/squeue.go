// Package squeue is the drop-in squeue: it lists jobs from the controller
// (GET /slurm/v0.0.44/jobs, or /job/{id} for a single -j), filters, folds
// and sorts them and prints them in Slurm 25.11's formats, byte for byte.
package squeue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/jobfmt"
	"github.com/droverhq/drover/internal/cli/jobstream"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/fieldsel"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

var _ clienv.Command = Run

// Default formats, as squeue builds them when neither -o, -O nor their
// environment variables are given.
const (
	defaultFormat     = "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,statecompact:.2 ,timeused:.10 ,numnodes:.6 ,reasonlist:0"
	defaultLongFormat = "jobarrayid:.18 ,partition:.9 ,name:.8 ,username:.8 ,state:.8 ,timeused:.10 ,timelimit:.9 ,numnodes:.6 ,reasonlist:0"
	onlyStateFormat   = "%.18i %.2t"
)

// Run is squeue's entry point (a clienv.Command).
func Run(ctx context.Context, env *clienv.Env, args []string) int {
	o, err := parseOptions(env, args)
	if err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
		return 1
	}
	if o.stepFlag {
		return printSteps(ctx, env, o, o.steps)
	}
	q := &queue{env: env, opts: o}
	if err := q.resolveNodes(ctx); err != nil {
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 1
	}
	code := 0
	for {
		if !o.noHeader && (o.iterate > 0 || o.verbose > 0 || o.long) {
			fmt.Fprintln(env.Stdout, env.Now().Format("Mon Jan 02 15:04:05 2006"))
		}
		if c := q.once(ctx); c != 0 {
			code = c
		}
		if o.iterate <= 0 {
			return code
		}
		fmt.Fprintln(env.Stdout)
		if !sleep(ctx, time.Duration(o.iterate)*time.Second) {
			return code
		}
	}
}

// sleep waits d, or until ctx ends (it then reports false). Tests replace
// it to run -i without waiting.
var sleep = func(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// queue is one squeue invocation.
type queue struct {
	env  *clienv.Env
	opts *options
	// format is parsed once, on the first successful load, as squeue
	// does: its errors are reported once.
	format *jobfmt.Format
}

// once loads, filters and prints the jobs; it returns the exit code.
func (q *queue) once(ctx context.Context) int {
	o, env := q.opts, q.env
	var stream *jsonStream
	if o.json && !o.yaml && len(o.jobs) != 1 {
		// The list is printed as it arrives (YAML is made of the whole
		// text).
		s, err := q.newJSONStream()
		if err != nil {
			fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
			return 1
		}
		stream = s
		ctx = jobstream.With(ctx, s.job)
	}
	resp, jobs, err := q.load(ctx)
	if err != nil {
		fmt.Fprintf(env.Stderr, "slurm_load_jobs error: %s\n", err)
		return 1
	}
	if stream != nil {
		if err := stream.finish(resp); err != nil {
			fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
			return 1
		}
		return 0
	}
	if o.json {
		if err := q.printJSON(resp); err != nil {
			fmt.Fprintf(env.Stderr, "%s: error: %v\n", env.Prog, err)
			return 1
		}
		return 0
	}
	if o.verbose > 0 {
		fmt.Fprintf(env.Stdout, "last_update_time=%d records=%d\n", resp.LastUpdate.Number.Or(0), len(jobs))
	}
	if q.format == nil {
		q.format = q.parseFormat()
	}
	return q.print(jobs)
}

// parseFormat builds the column list from the options, reporting unknown
// fields as squeue does (and keeping their places).
func (q *queue) parseFormat() *jobfmt.Format {
	f, invalid := q.columns()
	for _, bad := range invalid {
		fmt.Fprintf(q.env.Stderr, "%s: error: Invalid job format specification: %s\n", q.env.Prog, bad)
	}
	return &f
}

// columns parses the format the options select.
func (q *queue) columns() (f jobfmt.Format, invalid []string) {
	o := q.opts
	switch {
	case o.format != nil:
		f, invalid = jobfmt.ParseFormat(*o.format)
	case o.formatLong != nil:
		f, invalid = jobfmt.ParseLongFormat(*o.formatLong)
	case o.onlyState:
		f, invalid = jobfmt.ParseFormat(onlyStateFormat)
	case o.long:
		f, invalid = jobfmt.ParseLongFormat(defaultLongFormat)
	default:
		f, invalid = jobfmt.ParseLongFormat(defaultFormat)
	}
	return f, invalid
}

// members lists the job record members this squeue reads (its columns,
// sort keys and filters), or nil when it needs whole records: for --json,
// and for fields and keys without a member list (jobfmt.LetterMembers).
// The controller may then send only those (fieldsel); a slurmrestd that
// ignores the hint sends whole records, which print the same.
func (q *queue) members() []string {
	o := q.opts
	if o.json {
		return nil
	}
	f, _ := q.columns()
	out, ok := f.Members()
	if !ok {
		return nil
	}
	// Always read: the records' identity, the array task merging
	// (name, partition, state, reason), the first sort pass (start time)
	// and the default sort (partition, state, priority).
	out = append(out, jobfmt.IDMembers...)
	out = append(out, "name", "partition", "job_state", "state_reason", "state_description", "start_time", "priority")
	sortSpec := defaultSort
	if o.sort != nil {
		sortSpec = *o.sort
	}
	if strings.Contains(strings.ToLower(sortSpec), "cluster") {
		return nil
	}
	for i := 0; i < len(sortSpec); i++ {
		c := sortSpec[i]
		switch c {
		case ',', '+', '-':
			continue
		}
		m, ok := jobfmt.LetterMembers(c)
		if !ok {
			return nil
		}
		out = append(out, m...)
	}
	filters := []struct {
		on      bool
		members []string
	}{
		{o.licenses != nil, []string{"licenses"}},
		{o.accounts != nil, []string{"account"}},
		{o.qos != nil, []string{"qos"}},
		{o.nodes != nil, []string{"nodes"}},
		{o.notMe || o.users != nil, []string{"user_id", "user_name"}},
		{o.reservation != "", []string{"resv_name"}},
		{o.runOver != 0 || o.runUnder != 0, []string{"end_time", "suspend_time", "pre_sus_time"}},
	}
	for _, fl := range filters {
		if fl.on {
			out = append(out, fl.members...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// load asks the controller for the jobs: GET /job/{id} when exactly one
// job was named (squeue's slurm_load_job), GET /jobs otherwise. The job
// list of GET /jobs is read record by record into squeue's own rows
// (jobstream) unless --json prints the records themselves; the answer
// then comes back without them.
func (q *queue) load(ctx context.Context) (*v0044.V0044OpenapiJobInfoResp, []*readmodel.Job, error) {
	o := q.opts
	var flags v0044.OptSlurmV0044GetJobsFlags
	switch {
	case o.all || len(o.jobs) > 0:
		flags = v0044.NewOptSlurmV0044GetJobsFlags(v0044.SlurmV0044GetJobsFlagsALL)
	case o.json || (o.format != nil && strings.Contains(*o.format, "C")):
		flags = v0044.NewOptSlurmV0044GetJobsFlags(v0044.SlurmV0044GetJobsFlagsDETAIL)
	}
	var (
		res  any
		err  error
		rows []*readmodel.Job
	)
	if len(o.jobs) == 1 {
		p := v0044.SlurmV0044GetJobParams{JobID: utoa(o.jobs[0].jobID)}
		if f, ok := flags.Get(); ok {
			p.Flags = v0044.NewOptSlurmV0044GetJobFlags(v0044.SlurmV0044GetJobFlags(f))
		}
		res, err = q.env.Client.SlurmV0044GetJob(ctx, p)
	} else {
		ctx = fieldsel.With(ctx, q.members())
		if !o.json {
			// Rows are made in slabs: one allocation per 256 jobs,
			// and a row never moves once made.
			var slab []readmodel.Job
			ctx = jobstream.With(ctx, func(w *v0044.V0044JobInfo) error {
				if len(slab) == 0 {
					slab = make([]readmodel.Job, 256)
				}
				j := &slab[0]
				slab = slab[1:]
				*j = readmodel.FromV0044Job(w)
				rows = append(rows, j)
				return nil
			})
		}
		res, err = q.env.Client.SlurmV0044GetJobs(ctx, v0044.SlurmV0044GetJobsParams{Flags: flags})
	}
	if err != nil {
		return nil, nil, transportError(err)
	}
	switch r := res.(type) {
	case *v0044.V0044OpenapiJobInfoResp:
		if len(r.Jobs) > 0 {
			// A whole answer: GET /job/{id}, --json, or a transport
			// that does not stream (the tests' own).
			for _, j := range readmodel.FromV0044Jobs(r.Jobs) {
				rows = append(rows, &j)
			}
		}
		return r, rows, nil
	case *v0044.V0044OpenapiJobInfoRespStatusCode:
		return nil, nil, restError(r.StatusCode, r.Response.Errors)
	}
	return nil, nil, fmt.Errorf("unexpected response %T", res)
}

// slurmError carries the text slurm_perror prints for a failed request
// (slurm_strerror's wording) and, for debugging, the underlying cause.
type slurmError struct {
	msg   string
	cause error
}

func (e *slurmError) Error() string { return e.msg }
func (e *slurmError) Unwrap() error { return e.cause }

// restError is the controller's own error text (slurm_strerror of its
// error number), or Slurm's wording for an answer it does not understand.
func restError(status int, errs v0044.V0044OpenapiErrors) error {
	for _, e := range errs {
		if msg := e.Error.Or(""); msg != "" {
			return &slurmError{msg: msg}
		}
	}
	return &slurmError{msg: "Unexpected message received", cause: fmt.Errorf("HTTP status %d", status)}
}

// transportError words a failure to reach the controller as Slurm does.
func transportError(err error) error {
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return &slurmError{msg: "Socket timed out on send/recv operation", cause: err}
	}
	return &slurmError{msg: "Unable to contact slurm controller (connect failure)", cause: err}
}

// print filters, folds, sorts and prints jobs; it returns the exit code.
func (q *queue) print(jobs []*readmodel.Job) int {
	o, env := q.opts, q.env
	w := env.Stdout
	ctx := &jobfmt.Context{
		Now:            env.Now(),
		TimeFormat:     env.Getenv("SLURM_TIME_FORMAT"),
		ExpandPatterns: o.expand,
		NoConvert:      o.noConvert,
		// squeue -r sets SLURM_BITSTR_LEN=0 for itself.
		FullArrayIDs: o.array || env.Getenv("SLURM_BITSTR_LEN") != "",
	}
	if !o.noHeader {
		io.WriteString(w, q.format.Header()+"\n")
	}
	recs := q.filter(jobs, ctx.Now)
	if !o.array {
		combinePendingTasks(recs, env.Getenv("SLURM_BITSTR_LEN"))
		recs = compact(recs)
	}
	if err := q.sort(recs, ctx.Now); err != nil {
		return err.code
	}
	var b strings.Builder
	var scratch readmodel.Job
	for _, r := range recs {
		if r == nil {
			continue
		}
		q.printRecord(&b, r, ctx, &scratch)
	}
	io.WriteString(w, b.String())
	return 0
}

// printRecord prints one record; with -r an array meta record prints one
// line per pending task. j is the room the record's row is made in,
// reused from one record to the next.
func (q *queue) printRecord(b *strings.Builder, r *record, ctx *jobfmt.Context, j *readmodel.Job) {
	*j = *r.job
	j.Partition = r.part
	if r.jobPrio != 0 {
		j.Priority = r.jobPrio
	}
	if q.opts.array && j.ArrayTaskStr != "" {
		tasks, _ := jobfmt.ParseTaskSet(j.ArrayTaskStr)
		j.ArrayTaskStr = ""
		for _, rg := range tasks.Ranges() {
			for id := uint64(rg.First); id <= uint64(rg.Last); id++ {
				j.ArrayTaskID = uint32(id)
				q.format.WriteRow(b, j, ctx)
				b.WriteByte('\n')
			}
		}
		return
	}
	q.format.WriteRow(b, j, ctx)
	b.WriteByte('\n')
}
