package scontrol

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/slurmerr"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// hold is scontrol_hold: hold, holdu/uhold (user hold) or release the jobs
// of one word, which is a job id list or Name=/JobName=.
//
// slurmrestd v0.0.44 expresses holds with the job description's "hold"
// flag only, so user holds and administrator holds are sent alike (the
// controller decides which kind a hold by a non-operator is, as slurmctld
// does).
func (c *cmd) hold(ctx context.Context, op, word string) {
	if len(word) >= 6 && strings.EqualFold(word[:6], "JobID=") {
		word = word[6:]
	}
	if len(word) >= 4 && strings.EqualFold(word[:4], "Job=") {
		word = word[4:]
	}
	hold := hasPrefixFold(op, "holdu") || hasPrefixFold(op, "uhold") || hasPrefixFold(op, "hold")
	desc := v0044.V0044JobDescMsg{Hold: v0044.NewOptBool(hold)}

	if ids, ok := expandJobIDs(word); ok {
		for _, id := range ids {
			c.postJob(ctx, id, desc)
		}
		return
	}
	name := ""
	switch {
	case len(word) >= 5 && strings.EqualFold(word[:5], "Name="):
		name = word[5:]
	case len(word) >= 8 && strings.EqualFold(word[:8], "JobName="):
		name = word[8:]
	default:
		c.exitCode = 1
		if c.quiet != 1 {
			fmt.Fprintf(c.env.Stderr, "%s for job %s\n", slurmerr.InvalidJobID.Message(), word)
		}
		return
	}
	jobs, re := c.loadJobs(ctx, 0)
	if re != nil {
		c.exitCode = 1
		if c.quiet == -1 {
			fmt.Fprintf(c.env.Stderr, "slurm_load_job error: %s\n", re.Message)
		}
		return
	}
	for i := range jobs {
		j := &jobs[i]
		if j.Name != name {
			continue
		}
		if base, known := j.BaseState(); !known || base != readmodel.StatePending {
			if j.IsArrayTask() {
				continue
			}
			// Slurm sends the request anyway and reports the
			// controller's refusal.
		}
		var id string
		switch {
		case j.ArrayTaskStr != "":
			id = fmt.Sprintf("%d_%s", j.ArrayJobID, j.ArrayTaskStr)
		case j.IsArrayTask():
			id = fmt.Sprintf("%d_%d", j.ArrayJobID, j.ArrayTaskID)
		default:
			id = strconv.FormatUint(uint64(j.JobID), 10)
		}
		c.postJob(ctx, id, desc)
	}
}

// requeue is scontrol_requeue/scontrol_requeue_hold for every job id word
// after the optional flags ("Incomplete", "State=SpecialExit").
func (c *cmd) requeue(ctx context.Context, tag string, words []string, hold bool) {
	if len(words) == 0 {
		c.printfError("too few arguments for keyword:%s", tag)
		return
	}
	start := 0
	for start < len(words) && isRequeueFlag(words[start]) {
		start++
	}
	for _, word := range words[start:] {
		if word == "" {
			c.exitCode = 1
			continue
		}
		if len(word) >= 6 && strings.EqualFold(word[:6], "jobid=") {
			word = word[6:]
		}
		if len(word) >= 4 && strings.EqualFold(word[:4], "job=") {
			word = word[4:]
		}
		ids, ok := expandJobIDs(word)
		if !ok {
			c.exitCode = 1
			if c.quiet != 1 {
				fmt.Fprintf(c.env.Stderr, "%s for job %s\n", slurmerr.InvalidJobID.Message(), word)
			}
			continue
		}
		if c.opts.Requeue == nil {
			c.errorf("requeue is not supported by this controller")
			return
		}
		for _, id := range ids {
			if err := c.opts.Requeue(ctx, id, hold); err != nil {
				c.exitCode = 1
				if c.quiet != 1 {
					fmt.Fprintf(c.env.Stderr, "%s for job %s\n", requeueMessage(err), id)
				}
			}
		}
	}
}

// isRequeueFlag reports whether word is one of requeue's flags, as
// parse_requeue_flags accepts them.
func isRequeueFlag(word string) bool {
	if word != "" && len(word) <= len("incomplete") && strings.EqualFold(word, "incomplete"[:len(word)]) {
		return true
	}
	if len(word) < 6 || !strings.EqualFold(word[:6], "state=") {
		return false
	}
	s := word[6:]
	return hasPrefixFold(s, "specialexit") || hasPrefixFold(s, "se")
}

// requeueMessage is the text printed for a failed requeue: Slurm's
// message for the error's code when it carries one.
func requeueMessage(err error) string {
	var se *slurmerr.Error
	if errors.As(err, &se) {
		return se.Code.Message()
	}
	return err.Error()
}
