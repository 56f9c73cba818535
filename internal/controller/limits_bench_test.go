package controller

import (
	"strconv"
	"testing"
	"time"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/controller/ctlstate"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/priority"
)

// limitsFSM is a busy site under AccountingStorageEnforce=limits: 20
// accounts of 50 users each with GrpTRES, GrpTRESMins and MaxJobs, a QOS
// with per-user limits, pending jobs and running ones from every user,
// and a year of usage.
func limitsFSM(b *testing.B, pending, running int) *ctlstate.State {
	b.Helper()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s := ctlstate.New(100, false)
	s.Usage, s.LimitUsage = priority.Usage{}, priority.Usage{}
	ch := assoc.Change{{Kind: assoc.KindQOS, QOS: &assoc.QOS{Name: "normal", UsageFactor: 1,
		Limits: assoc.Limits{MaxJobs: assoc.Count(40), MaxTRESPerUser: assoc.TRES{"cpu": 512}, GrpSubmitJobs: assoc.Count(1_000_000)}}}}
	var users []string
	for a := range 20 {
		acct := "acct" + strconv.Itoa(a)
		ch = append(ch, assoc.Item{Kind: assoc.KindAccount, Account: &assoc.Account{Name: acct}},
			assoc.Item{Kind: assoc.KindAssoc, Assoc: &assoc.Association{Account: acct, ParentAccount: "root", Shares: 1,
				Limits: assoc.Limits{GrpTRES: assoc.TRES{"cpu": 4096}, GrpTRESMins: assoc.TRES{"cpu": 1 << 40}}}})
		for u := range 50 {
			user := "u" + strconv.Itoa(a*50+u)
			users = append(users, user)
			ch = append(ch, assoc.Item{Kind: assoc.KindUser, User: &assoc.User{Name: user, DefaultAccount: acct}},
				assoc.Item{Kind: assoc.KindAssoc, Assoc: &assoc.Association{Account: acct, User: user, Shares: 1,
					Limits: assoc.Limits{MaxJobs: assoc.Count(100)}}})
			s.Usage[acct+"/"+user] = 1e6
			s.LimitUsage["cpu:"+acct+"/"+user] = 1e6
			s.LimitUsage["wall:"+acct+"/"+user] = 1e5
		}
	}
	m, err := assoc.New().Apply(ch)
	if err != nil {
		b.Fatal(err)
	}
	s.Acct = m
	for i := range pending + running {
		user := users[i%len(users)]
		r := job.Request{Name: "j", Partition: "gpu", WorkDir: "/home/" + user, UserID: uint32(1000 + i%len(users)), UserName: user,
			Account: "acct" + strconv.Itoa(i%len(users)/50), QOS: "normal", MinNodes: 1, MaxNodes: 1, NumTasks: 1, CPUsPerTask: 8, TimeLimit: 600}
		res := s.Apply(&ctlstate.Command{Op: ctlstate.OpSubmit, Time: t0, MinJobID: 100, Submit: &ctlstate.SubmitCmd{Req: r, ScriptKey: "s", Priority: 1}})
		if res.Err != nil {
			b.Fatal(res.Err)
		}
		if i < running {
			a := job.Allocation{Nodes: []job.NodeAlloc{{Node: "n" + strconv.Itoa(i), CPUs: 8, MemMB: 1000, Tasks: 1}}}
			s.Apply(&ctlstate.Command{Op: ctlstate.OpStart, Time: t0, Start: &ctlstate.StartCmd{Starts: []ctlstate.StartEntry{{JobID: res.JobID, Task: job.NoTask, Alloc: a}}}})
		}
	}
	return s
}

// BenchmarkPolicy is what limits add to each scheduling pass: every
// pending job's limits and what every running job holds.
func BenchmarkPolicy(b *testing.B) {
	s := limitsFSM(b, 50_000, 5_000)
	c := &Controller{cfg: Config{Enforce: assoc.Enforce{Limits: true}}, st: s, now: func() time.Time { return time.Date(2026, 3, 1, 13, 0, 0, 0, time.UTC) }}
	var pending []*job.Job
	for _, id := range s.JobIDs() {
		if j := s.Jobs[id]; j.State == job.Pending {
			pending = append(pending, j)
		}
	}
	b.ResetTimer()
	for range b.N {
		if p := c.policyLocked(pending); p == nil {
			b.Fatal("no policy")
		}
	}
}

// BenchmarkSubmitLimits is what the submit limits add to one submission.
func BenchmarkSubmitLimits(b *testing.B) {
	s := limitsFSM(b, 50_000, 5_000)
	r := job.Request{UserName: "u1", Account: "acct0", QOS: "normal"}
	b.ResetTimer()
	for range b.N {
		if err := s.SubmitLimitErr(&r, nil); err != nil {
			b.Fatal(err)
		}
	}
}
