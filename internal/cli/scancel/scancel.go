// Package scancel is the drop-in scancel: it signals or cancels jobs named
// by id or selected by filters, through DELETE /slurm/v0.0.44/job/{id}
// (and DELETE /jobs for --ctld), with Slurm 25.11's messages and exit
// codes.
package scancel

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/slurmerr"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

var _ clienv.Command = Run

// Slurm error numbers scancel treats specially.
const (
	errInvalidJobID    = slurmerr.InvalidJobID
	errAlreadyDone     = slurmerr.AlreadyDone
	errTransitionState = slurmerr.TransitionStateNoUpdate
	// errConnection is SLURM_COMMUNICATIONS_CONNECTION_ERROR.
	errConnection slurmerr.Code = 1001
)

// maxRetries bounds the retries of a job in a transitional state.
const maxRetries = 10

// Run is scancel's entry point (a clienv.Command).
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
	c := &canceller{env: env, opts: o, stdin: bufio.NewReader(env.Stdin)}
	var rc int
	switch {
	case o.plain():
		rc = c.signalOperands(ctx)
	case o.ctld:
		rc = c.signalThroughController(ctx)
	default:
		rc = c.signalSelected(ctx)
	}
	// Slurm passes its largest error number to exit(3), which keeps the
	// low byte.
	return rc & 0xff
}

// canceller is one scancel invocation.
type canceller struct {
	env   *clienv.Env
	opts  *options
	stdin *bufio.Reader
}

func (c *canceller) errorf(format string, a ...any) {
	fmt.Fprintf(c.env.Stderr, "%s: error: "+format+"\n", append([]any{c.env.Prog}, a...)...)
}

func (c *canceller) verbosef(format string, a ...any) {
	if c.opts.verbose > 0 {
		fmt.Fprintf(c.env.Stderr, "%s: "+format+"\n", append([]any{c.env.Prog}, a...)...)
	}
}

// signal is the signal to send: SIGKILL unless -s said otherwise.
func (c *canceller) signal() uint16 {
	if c.opts.signal == 0 {
		return sigKill
	}
	return c.opts.signal
}

// jobType is how messages name the part of a job signalled.
func (c *canceller) jobType() string {
	switch {
	case c.opts.full:
		return "full "
	case c.opts.batch:
		return "batch "
	}
	return ""
}

// signalOperands sends each operand, as written, to the controller: what
// scancel does when given job ids and nothing else.
func (c *canceller) signalOperands(ctx context.Context) int {
	rc := 0
	for _, id := range c.opts.operands {
		rc = max(rc, c.kill(ctx, id))
	}
	return rc
}

// kill signals one job id string and reports failures as scancel's
// _cancel_job_id does; it returns the error number to fold into the exit
// code (0 for a job that is already gone, when the signal was SIGKILL).
func (c *canceller) kill(ctx context.Context, id string) int {
	o := c.opts
	if o.signal == 0 {
		c.verbosef("Terminating %sjob %s", c.jobType(), id)
	} else {
		c.verbosef("Signal %d to %sjob %s", o.signal, c.jobType(), id)
	}
	var code slurmerr.Code
	var msg string
	for try := 0; try < maxRetries; try++ {
		code, msg = c.deleteJob(ctx, id)
		if code != errTransitionState {
			break
		}
		c.verbosef("Job is in transitional state, retrying")
		if !sleep(ctx, time.Duration(5+try)*time.Second) {
			break
		}
	}
	if code == slurmerr.NoError {
		return 0
	}
	if o.verbose > 0 || (code != errAlreadyDone && code != errInvalidJobID) {
		c.errorf("Kill job error on job id %s: %s", id, msg)
	}
	if (code == errAlreadyDone || code == errInvalidJobID) && c.signal() == sigKill {
		return 0
	}
	return int(code)
}

// deleteJob is one DELETE /job/{id}. More than one kill flag does not fit
// its single flags parameter; such requests go through DELETE /jobs.
func (c *canceller) deleteJob(ctx context.Context, id string) (slurmerr.Code, string) {
	flags := c.flags()
	if len(flags) > 1 {
		msg := c.killMsg()
		msg.Jobs = v0044.V0044KillJobsMsgJobsArray{id}
		res, err := c.env.Client.SlurmV0044DeleteJobs(ctx, v0044.NewOptV0044KillJobsMsg(msg))
		if err != nil {
			return errConnection, connectionMessage
		}
		status, errs, _ := killJobsResult(res)
		for _, s := range status {
			if code, m := statusError(s); code != 0 {
				return code, m
			}
		}
		return firstError(errs)
	}
	p := v0044.SlurmV0044DeleteJobParams{JobID: id}
	if c.opts.signal != 0 {
		p.Signal = v0044.NewOptString(signalParam(c.opts.signal))
	}
	if len(flags) == 1 {
		p.Flags = v0044.NewOptSlurmV0044DeleteJobFlags(v0044.SlurmV0044DeleteJobFlags(flags[0]))
	}
	res, err := c.env.Client.SlurmV0044DeleteJob(ctx, p)
	if err != nil {
		return errConnection, connectionMessage
	}
	var resp v0044.V0044OpenapiKillJobResp
	switch r := res.(type) {
	case *v0044.V0044OpenapiKillJobResp:
		resp = *r
	case *v0044.V0044OpenapiKillJobRespStatusCode:
		resp = r.Response
		if len(resp.Errors) == 0 && len(resp.Status) == 0 {
			return slurmerr.Unspecified, slurmerr.Unspecified.Message()
		}
	}
	for _, s := range resp.Status {
		if code, m := statusError(s); code != 0 {
			return code, m
		}
	}
	return firstError(resp.Errors)
}

// connectionMessage is slurm_strerror(SLURM_COMMUNICATIONS_CONNECTION_ERROR).
const connectionMessage = "Unable to contact slurm controller (connect failure)"

// flags are the kill flags of the request (KILL_JOB_BATCH and friends).
func (c *canceller) flags() []v0044.V0044KillJobsMsgFlagsItem {
	o := c.opts
	var f []v0044.V0044KillJobsMsgFlagsItem
	if o.batch {
		f = append(f, v0044.V0044KillJobsMsgFlagsItemBATCHJOB)
	}
	if o.cron {
		f = append(f, v0044.V0044KillJobsMsgFlagsItemCRONJOBS)
	}
	if o.full {
		f = append(f, v0044.V0044KillJobsMsgFlagsItemFULLJOB)
	}
	if o.hurry {
		f = append(f, v0044.V0044KillJobsMsgFlagsItemHURRY)
	}
	return f
}

func statusError(s v0044.V0044KillJobsRespJob) (slurmerr.Code, string) {
	e, ok := s.Error.Get()
	if !ok || e.Code.Or(0) == 0 {
		return 0, ""
	}
	code := slurmerr.Code(e.Code.Or(0))
	msg := e.String.Or(e.Message.Or(""))
	if msg == "" {
		msg = code.Message()
	}
	return code, msg
}

func firstError(errs v0044.V0044OpenapiErrors) (slurmerr.Code, string) {
	for _, e := range errs {
		code := slurmerr.Code(e.ErrorNumber.Or(0))
		if code == 0 {
			continue
		}
		msg := e.Error.Or("")
		if msg == "" {
			msg = code.Message()
		}
		return code, msg
	}
	return slurmerr.NoError, ""
}

// sleep waits d, or until ctx ends (it then reports false). Tests replace
// it to exercise retries without waiting.
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

// confirm asks before signalling a job (-i). End of input counts as "no".
func (c *canceller) confirm(j *readmodel.Job, id string) bool {
	for {
		fmt.Fprintf(c.env.Stdout, "Cancel job_id=%s name=%s partition=%s [y/n]? ", id, orNull(j.Name), orNull(j.Partition))
		line, err := c.stdin.ReadString('\n')
		switch {
		case strings.HasPrefix(line, "y"), strings.HasPrefix(line, "Y"):
			return true
		case strings.HasPrefix(line, "n"), strings.HasPrefix(line, "N"):
			return false
		case err != nil:
			fmt.Fprintln(c.env.Stdout)
			return false
		}
	}
}

func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}
