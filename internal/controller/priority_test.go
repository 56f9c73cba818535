package controller_test

import (
	"testing"
	"time"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/priority"
)

// Under priority/multifactor the job size factor puts a bigger job first
// even when it came later; nice lowers a job; an operator's Priority=
// fixes one; with priority/basic earlier submissions come first.
func TestMultifactorPriority(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) {
		cfg.Priority = &priority.Config{WeightJobSize: 10000, WeightAge: 1000, MaxAge: time.Hour}
	})
	c.RegisterAll()
	small := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NodeList = []string{"n1"}; r.Exclusive = true }))
	c.Clock.Advance(30 * time.Minute)
	big := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NodeList = []string{"n1", "n2"}; r.MinNodes = 2; r.Exclusive = true }))
	// small: age 0.5 -> 500, size (1/4 + 1/32)/2 -> 1406; big: size
	// (2/4 + 2/32)/2 -> 2812.
	if p := c.Job(small).Priority; p != 1906 {
		t.Errorf("small job priority %d, want 1906", p)
	}
	if p := c.Job(big).Priority; p != 2812 {
		t.Errorf("big job priority %d, want 2812", p)
	}
	schedule(t, c)
	if c.Job(big).State != job.Running || c.Job(small).State != job.Pending {
		t.Errorf("big %v small %v: the higher priority job should start", c.Job(big).State, c.Job(small).State)
	}
	nice := int32(300)
	if err := c.Ctl.Update(ctx, ctltest.Alice, controller.JobSelector{ID: small}, controller.JobUpdate{Nice: &nice}); err != nil {
		t.Fatal(err)
	}
	if p := c.Job(small).Priority; p != 1606 {
		t.Errorf("after nice 300: %d, want 1606", p)
	}
	fixed := uint32(99)
	if err := c.Ctl.Update(ctx, ctltest.Root, controller.JobSelector{ID: small}, controller.JobUpdate{Priority: &fixed}); err != nil {
		t.Fatal(err)
	}
	c.Clock.Advance(time.Hour)
	if p := c.Job(small).Priority; p != 99 {
		t.Errorf("fixed priority moved to %d", p)
	}

	basic := ctltest.New(t)
	basic.RegisterAll()
	a := basic.Submit(ctltest.Alice, ctltest.Request())
	b := basic.Submit(ctltest.Alice, ctltest.Request())
	if pa, pb := basic.Job(a).Priority, basic.Job(b).Priority; pa <= pb {
		t.Errorf("priority/basic: %d then %d", pa, pb)
	}
}

// Fair-share: CPU-seconds a user's jobs ran count against the user's next
// jobs; the usage survives a restart.
func TestFairSharePriority(t *testing.T) {
	c := ctltest.New(t, func(cfg *controller.Config) {
		cfg.Priority = &priority.Config{WeightFairshare: 1000, MaxAge: time.Hour, DecayHalfLife: 7 * 24 * time.Hour, CalcPeriod: 5 * time.Minute, FairTree: true}
	})
	c.RegisterAll()
	ran := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.NumTasks = 4 }))
	c.Ctl.UpdateUsage(ctx)
	schedule(t, c)
	c.Clock.Advance(time.Hour)
	c.Finish(ran, "exited", 0, 0)
	c.Clock.Advance(5 * time.Minute)
	c.Ctl.UpdateUsage(ctx)
	_, usage := c.Ctl.ShareRows()
	if got := usage["root/alice"]; got != 4*3600 {
		t.Errorf("alice's usage %v, want %v CPU-seconds", got, 4*3600)
	}
	a := c.Submit(ctltest.Alice, ctltest.Request())
	b := c.Submit(ctltest.Bob, ctltest.Request())
	c.Clock.Advance(5 * time.Minute)
	c.Ctl.UpdateUsage(ctx)
	// Three user associations: root's own, then bob and alice under
	// root. Unused, root and bob share the first rank; alice ranks third.
	factors := userFactors(c.Ctl)
	if factors["bob"] != 1 || factors["root"] != 1 || factors["alice"] != 1.0/3 {
		t.Errorf("fair tree factors %v, want bob 1 root 1 alice 1/3", factors)
	}
	if pa, pb := c.Job(a).Priority, c.Job(b).Priority; pa != 333 || pb != 1000 {
		t.Errorf("priorities alice %d bob %d, want 333 and 1000", pa, pb)
	}
	c.Restart()
	if _, usage := c.Ctl.ShareRows(); usage["root/alice"] < 4*3600*0.99 {
		t.Errorf("usage after a restart: %v", usage)
	}
	if pa := c.Job(a).Priority; pa != 333 {
		t.Errorf("alice's priority after a restart %d", pa)
	}
}

// userFactors is every user's fair-share factor, by user name.
func userFactors(ctl *controller.Controller) map[string]float64 {
	rows, _ := ctl.ShareRows()
	out := map[string]float64{}
	for _, r := range rows {
		if r.User != "" {
			out[r.User] = r.FairShare
		}
	}
	return out
}
