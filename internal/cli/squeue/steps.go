package squeue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/hostlist"
	"github.com/droverhq/drover/internal/job"
	stepproto "github.com/droverhq/drover/internal/step/proto"
)

// defaultStepFormat is squeue -s's format (squeue.c).
const defaultStepFormat = "%.15i %.8j %.9P %.8u %.9M %N"

// stepColumn is one field of a step format: a letter, its width and
// alignment, and the text before it.
type stepColumn struct {
	prefix string
	letter byte
	width  int
	right  bool
	set    bool
}

func parseStepFormat(f string) (cols []stepColumn, suffix string) {
	for {
		i := strings.IndexByte(f, '%')
		if i < 0 || i+1 >= len(f) {
			return cols, f
		}
		c := stepColumn{prefix: f[:i]}
		f = f[i+1:]
		if f[0] == '.' {
			c.right = true
			f = f[1:]
		}
		n := 0
		for n < len(f) && f[n] >= '0' && f[n] <= '9' {
			n++
		}
		if n > 0 {
			c.width, _ = strconv.Atoi(f[:n])
			c.set = true
		}
		f = f[n:]
		if f == "" {
			return cols, ""
		}
		c.letter = f[0]
		f = f[1:]
		cols = append(cols, c)
	}
}

// printSteps is squeue -s: the running steps (batch steps included), one
// line each, in the step format.
func printSteps(ctx context.Context, env *clienv.Env, o *options, filter []string) int {
	var list stepproto.List
	if err := env.Call(ctx, "GET", stepproto.PathList, nil, &list); err != nil {
		fmt.Fprintf(env.Stderr, "slurm_get_job_steps error: %v\n", err)
		return 1
	}
	format := defaultStepFormat
	if o.format != nil {
		format = *o.format
	}
	cols, suffix := parseStepFormat(format)
	now := time.Now()
	if env.Now != nil {
		now = env.Now()
	}
	line := func(cell func(c stepColumn) string) {
		var b strings.Builder
		for _, c := range cols {
			b.WriteString(c.prefix)
			v := cell(c)
			if c.set && len(v) > c.width {
				v = v[:c.width]
			}
			pad := strings.Repeat(" ", max(c.width-len(v), 0))
			if c.right {
				b.WriteString(pad + v)
			} else {
				b.WriteString(v + pad)
			}
		}
		b.WriteString(suffix)
		fmt.Fprintln(env.Stdout, b.String())
	}
	if !o.noHeader {
		line(func(c stepColumn) string { return stepHeader(c.letter) })
	}
	for _, s := range list.Steps {
		id := stepID(s)
		if len(filter) > 0 && !matchStep(filter, s, id) {
			continue
		}
		if len(o.users) > 0 && !userSelected(o, s) {
			continue
		}
		line(func(c stepColumn) string { return stepCell(c.letter, s, id, now) })
	}
	return 0
}

func stepID(s stepproto.Step) string {
	if s.StepID == job.BatchStep {
		return fmt.Sprintf("%d.batch", s.JobID)
	}
	return fmt.Sprintf("%d.%d", s.JobID, s.StepID)
}

// matchStep keeps the steps an operand names: "12" (every step of the
// job) or "12.0".
func matchStep(filter []string, s stepproto.Step, id string) bool {
	for _, f := range filter {
		if f == id || f == strconv.FormatUint(uint64(s.JobID), 10) {
			return true
		}
	}
	return false
}

func userSelected(o *options, s stepproto.Step) bool {
	for _, u := range o.users {
		if u.name == s.User || (u.hasUID && u.uid == s.UserID) {
			return true
		}
	}
	return false
}

func stepHeader(letter byte) string {
	switch letter {
	case 'i':
		return "STEPID"
	case 'j':
		return "NAME"
	case 'P':
		return "PARTITION"
	case 'u':
		return "USER"
	case 'U':
		return "UID"
	case 'M':
		return "TIME"
	case 'l':
		return "TIME_LIMIT"
	case 'S':
		return "START_TIME"
	case 'N':
		return "NODELIST"
	case 'A':
		return "TASKS"
	case 'C':
		return "CPUS"
	case 'F':
		return "ARRAY_JOB_ID"
	}
	return ""
}

func stepCell(letter byte, s stepproto.Step, id string, now time.Time) string {
	switch letter {
	case 'i':
		return id
	case 'j':
		return s.Name
	case 'P':
		return s.Partition
	case 'u':
		return s.User
	case 'U':
		return strconv.FormatUint(uint64(s.UserID), 10)
	case 'M':
		return stepSecs(int64(now.Sub(s.StartTime).Seconds()))
	case 'l':
		if s.TimeLimit == job.Infinite {
			return "UNLIMITED"
		}
		return stepSecs(int64(s.TimeLimit) * 60)
	case 'S':
		return s.StartTime.Local().Format("2006-01-02T15:04:05")
	case 'N':
		return hostlist.Compress(s.Nodes)
	case 'A':
		n := uint32(0)
		for _, t := range s.Tasks {
			n += t
		}
		return strconv.FormatUint(uint64(n), 10)
	case 'C':
		n := uint32(0)
		for _, c := range s.CPUs {
			n += c
		}
		return strconv.FormatUint(uint64(n), 10)
	case 'F':
		return strconv.FormatUint(uint64(s.JobID), 10)
	}
	return ""
}

// stepSecs writes a duration as squeue does: M:SS, H:MM:SS, D-HH:MM:SS.
func stepSecs(v int64) string {
	v = max(v, 0)
	d, h, m, s := v/86400, v/3600%24, v/60%60, v%60
	switch {
	case d > 0:
		return fmt.Sprintf("%d-%02d:%02d:%02d", d, h, m, s)
	case h > 0:
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}
