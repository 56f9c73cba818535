package sbatch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Slurm error numbers sbatch treats specially when submitting.
const (
	errEAGAIN            = 11   // EAGAIN
	errDescToRecordCopy  = 2007 // ESLURM_ERROR_ON_DESC_TO_RECORD_COPY
	errNodesBusy         = 2016 // ESLURM_NODES_BUSY
	errPortsBusy         = 2059 // ESLURM_PORTS_BUSY
	maxSubmitRetries     = 15
	genericSubmitFailure = "Batch job submission failed"
)

// connectFailure is what sbatch prints when slurmctld cannot be reached
// (SLURM_COMMUNICATIONS_CONNECTION_ERROR's text).
const connectFailure = "Unable to contact slurm controller (connect failure)"

// submitError is a rejected submission as the slurmrestd envelope reports
// it: Slurm's error number and text, and the request-specific detail.
type submitError struct {
	number int
	text   string
	detail string
}

// submit sends the job, retrying the way sbatch does while slurmctld is
// busy, and returns the new job's id. It prints the failure and returns the
// exit status when the job was not submitted.
func (c *cmd) submit(ctx context.Context, descs []v0044.V0044JobDescMsg, verbose bool) (int32, int, bool) {
	if c.env.Client == nil {
		c.errorf("%s: %s", genericSubmitFailure, connectFailure)
		return 0, c.errorExit, false
	}
	body := v0044.V0044JobSubmitReq{Job: v0044.NewOptV0044JobDescMsg(descs[0])}
	if len(descs) > 1 {
		// A heterogeneous job: its components in order, the first with
		// the script.
		body = v0044.V0044JobSubmitReq{Jobs: descs}
	}
	req := v0044.NewOptV0044JobSubmitReq(body)
	for retries := 0; ; retries++ {
		resp, err := c.env.Client.SlurmV0044PostJobSubmit(ctx, req)
		if err != nil {
			if isConnectError(err) {
				c.errorf("%s: %s", genericSubmitFailure, connectFailure)
			} else {
				if verbose {
					c.errorf("%v", err)
				}
				c.errorf("%s: %s", genericSubmitFailure, "Unexpected message received")
			}
			return 0, c.errorExit, false
		}
		var body v0044.V0044OpenapiJobSubmitResponse
		switch r := resp.(type) {
		case *v0044.V0044OpenapiJobSubmitResponse:
			body = *r
		case *v0044.V0044OpenapiJobSubmitResponseStatusCode:
			body = r.Response
		}
		if len(body.Errors) == 0 && body.JobID.Set {
			c.printUserMsg(body.JobSubmitUserMsg.Or(""))
			return body.JobID.Value, 0, true
		}
		se := firstError(body)
		msg := ""
		switch se.number {
		case errDescToRecordCopy:
			msg = "Slurm job queue full, sleeping and retrying"
		case errNodesBusy, errPortsBusy:
			msg = "Job creation temporarily disabled, retrying"
		case errEAGAIN:
			msg = "Slurm temporarily unable to accept job, sleeping and retrying"
		}
		if msg == "" || retries >= maxSubmitRetries {
			c.printSubmitError(body, se)
			return 0, c.errorExit, false
		}
		switch {
		case retries > 0:
			// sbatch logs later retries at debug level only.
		case se.number == errNodesBusy || se.number == errPortsBusy:
			if !c.quiet {
				fmt.Fprintf(c.env.Stderr, "%s: %s\n", c.prog, msg)
			}
		default:
			c.errorf("%s", msg)
		}
		if err := c.proc.sleep(ctx, time.Duration(retries+1)*time.Second); err != nil {
			c.errorf("%s: %v", genericSubmitFailure, err)
			return 0, c.errorExit, false
		}
	}
}

// firstError picks the error that explains a failed submission: the first
// entry of errors[], or, when slurmrestd answered without an error or a job
// id (a request it could not read), its first warning.
func firstError(body v0044.V0044OpenapiJobSubmitResponse) submitError {
	if len(body.Errors) > 0 {
		e := body.Errors[0]
		return submitError{
			number: int(e.ErrorNumber.Or(0)),
			text:   e.Error.Or(""),
			detail: e.Description.Or(""),
		}
	}
	if len(body.Warnings) > 0 {
		return submitError{text: body.Warnings[0].Description.Or("")}
	}
	return submitError{}
}

// printSubmitError prints a rejected submission as sbatch does: the
// request-specific detail of each error on its own line ("invalid partition
// specified: nosuch"), then "Batch job submission failed: <Slurm's error
// text>". slurmrestd's own generic description ("Batch job submission
// failed") is not repeated.
func (c *cmd) printSubmitError(body v0044.V0044OpenapiJobSubmitResponse, first submitError) {
	for _, e := range body.Errors {
		d := e.Description.Or("")
		if d == "" || d == genericSubmitFailure || d == e.Error.Or("") {
			continue
		}
		for l := range strings.SplitSeq(strings.TrimRight(d, "\n"), "\n") {
			c.errorf("%s", l)
		}
	}
	text := first.text
	if text == "" {
		text = "Unspecified error"
	}
	c.errorf("%s: %s", genericSubmitFailure, text)
}

// printUserMsg prints the job_submit plugin's message, line by line, at
// sbatch's info level (silenced by --quiet).
func (c *cmd) printUserMsg(msg string) {
	if msg == "" || c.quiet {
		return
	}
	for l := range strings.SplitSeq(strings.TrimRight(msg, "\n"), "\n") {
		fmt.Fprintf(c.env.Stderr, "%s: %s\n", c.prog, l)
	}
}

// isConnectError reports whether err means the controller could not be
// reached at all, as opposed to an answer sbatch could not understand.
func isConnectError(err error) bool {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Op == "dial" {
		return true
	}
	var dnsErr *net.DNSError
	return errors.As(err, &dnsErr) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ENOENT) ||
		errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH)
}
