package scontrol

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/cli/readmodel"
	"github.com/droverhq/drover/internal/slurmerr"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// top is scontrol top JOB_LIST: the listed pending jobs move to the head
// of the pending jobs they share a user, partition, account and QOS with,
// in the order given, as slurmctld does it: by moving nice values between
// those jobs, so that the user's jobs gain no priority in all. The v0.0.44
// API has no top operation, so the nice values are set job by job. Only
// operators may, unless SchedulerParameters has enable_user_top.
func (c *cmd) top(ctx context.Context, argv []string) {
	if len(argv) != 1 {
		c.exitCode = 1
		fmt.Fprintf(c.env.Stderr, "too %s arguments for keyword:top\n", map[bool]string{true: "few", false: "many"}[len(argv) == 0])
		return
	}
	fail := func(code slurmerr.Code) {
		c.exitCode = 1
		if c.quiet != 1 {
			fmt.Fprintf(c.env.Stderr, "slurm_top_job error: %s\n", code.Message())
		}
	}
	conf := c.localConf()
	if u := c.env.User; u.UID != 0 && u.Name != conf.get("SlurmUser") && !strings.Contains(strings.ToLower(conf.get("SchedulerParameters")), "enable_user_top") {
		fail(slurmerr.AccessDenied)
		return
	}
	jobs, re := c.loadJobs(ctx, 0)
	if re != nil {
		c.perror("slurm_top_job error", re)
		return
	}
	byID := map[string]*readmodel.JobInfo{}
	for i := range jobs {
		byID[strconv.FormatUint(uint64(jobs[i].JobID), 10)] = &jobs[i]
	}
	pending := func(j *readmodel.JobInfo) bool {
		base, known := j.BaseState()
		return known && base == readmodel.StatePending && !j.Hold
	}
	key := func(j *readmodel.JobInfo) string {
		return j.UserName + "\x00" + j.Partition + "\x00" + j.Account + "\x00" + j.QOS
	}
	var order []*readmodel.JobInfo
	group := ""
	for _, id := range strings.Split(argv[0], ",") {
		j := byID[strings.TrimSpace(id)]
		switch {
		case j == nil:
			fail(slurmerr.InvalidJobID)
			return
		case !pending(j):
			fail(slurmerr.JobNotPending)
			return
		case group != "" && key(j) != group:
			fail(slurmerr.AccessDenied)
			return
		}
		group = key(j)
		if !slices.Contains(order, j) {
			order = append(order, j)
		}
	}
	prio := func(j *readmodel.JobInfo) int64 { return int64(j.Priority) }
	var others []*readmodel.JobInfo
	for i := range jobs {
		j := &jobs[i]
		if pending(j) && key(j) == group && !slices.Contains(order, j) {
			others = append(others, j)
		}
	}
	slices.SortStableFunc(others, func(a, b *readmodel.JobInfo) int { return int(prio(b) - prio(a)) })
	order = append(order, others...)
	// The group's priorities, highest first, dealt out in the new order.
	slots := make([]int64, len(order))
	for i, j := range order {
		slots[i] = prio(j)
	}
	slices.SortFunc(slots, func(a, b int64) int { return int(b - a) })
	for i, j := range order {
		delta := slots[i] - prio(j)
		if delta == 0 {
			continue
		}
		nice := int32(int64(j.Nice) - delta)
		if !c.postJob(ctx, strconv.FormatUint(uint64(j.JobID), 10), v0044.V0044JobDescMsg{Nice: v0044.NewOptInt32(nice)}) {
			return
		}
	}
}
