package acctpolicy

import (
	"testing"

	"github.com/droverhq/drover/internal/assoc"
	"github.com/droverhq/drover/internal/job"
)

func alloc(nodes, cpus int, mem uint64, gpus int) *job.Allocation {
	a := &job.Allocation{}
	for i := range nodes {
		na := job.NodeAlloc{Node: "n" + string(rune('1'+i)), CPUs: uint32(cpus), MemMB: mem}
		for g := range gpus {
			na.GPUs = append(na.GPUs, g)
		}
		a.Nodes = append(a.Nodes, na)
	}
	return a
}

// TestPolicy: each limit holds a job with Slurm's reason, and the jobs a
// pass starts count for the next.
func TestPolicy(t *testing.T) {
	j := func(id job.ID, cpus, timeLimit uint32) *job.Job {
		return &job.Job{ID: id, Req: job.Request{NumTasks: cpus, CPUsPerTask: 1, MinNodes: 1, TimeLimit: timeLimit, UserName: "ann"}}
	}
	group := Counter{Key: "assoc:1", Scope: ScopeAssoc, Kind: Grp, Jobs: assoc.Count(2), TRES: assoc.TRES{"cpu": 8}}
	perUser := Counter{Key: "qos:normal/user:ann", Scope: ScopeQOS, Kind: PerUser, Jobs: assoc.Count(1)}
	for name, tc := range map[string]struct {
		limits  Job
		use     map[string]*Use
		j       *job.Job
		a       *job.Allocation
		runWant job.Reason
		fitWant job.Reason
	}{
		"nothing held":           {Job{Counters: []Counter{group}}, nil, j(1, 4, 60), alloc(1, 4, 0, 0), "", ""},
		"group jobs":             {Job{Counters: []Counter{group}}, map[string]*Use{"assoc:1": {Jobs: 2}}, j(1, 1, 60), nil, "AssocGrpJobsLimit", ""},
		"per user jobs":          {Job{Counters: []Counter{perUser}}, map[string]*Use{"qos:normal/user:ann": {Jobs: 1}}, j(1, 1, 60), nil, "QOSMaxJobsPerUserLimit", ""},
		"max jobs":               {Job{Counters: []Counter{{Key: "assocmax:1", Scope: ScopeAssoc, Kind: Max, Jobs: assoc.Count(0)}}}, nil, j(1, 1, 60), nil, "AssocMaxJobsLimit", ""},
		"wall, QOS first":        {Job{MaxWall: []ScopedCount{{ScopeAssoc, 30}, {ScopeQOS, 30}}}, nil, j(1, 1, 60), nil, "QOSMaxWallDurationPerJobLimit", ""},
		"wall, unlimited job":    {Job{MaxWall: []ScopedCount{{ScopeAssoc, 30}}}, nil, j(1, 1, job.Infinite), nil, "AssocMaxWallDurationPerJobLimit", ""},
		"cpus per job":           {Job{MaxTRESPerJob: []ScopedTRES{{ScopeAssoc, assoc.TRES{"cpu": 2}}}}, nil, j(1, 4, 60), nil, "AssocMaxCpuPerJobLimit", ""},
		"min cpus":               {Job{MinTRESPerJob: []ScopedTRES{{ScopeQOS, assoc.TRES{"cpu": 8}}}}, nil, j(1, 4, 60), nil, "QOSMinCpuNotSatisfied", ""},
		"group cpus":             {Job{Counters: []Counter{group}}, map[string]*Use{"assoc:1": {Jobs: 1, TRES: map[string]uint64{"cpu": 6}}}, j(1, 4, 60), alloc(1, 4, 0, 0), "", "AssocGrpCpuLimit"},
		"group gpus":             {Job{Counters: []Counter{{Key: "qos:g", Scope: ScopeQOS, TRES: assoc.TRES{"gres/gpu": 2}}}}, nil, j(1, 1, 60), alloc(1, 1, 0, 4), "", "QOSGrpGRES"},
		"per user memory":        {Job{Counters: []Counter{{Key: "u", Scope: ScopeQOS, Kind: PerUser, TRES: assoc.TRES{"mem": 1000}}}}, nil, j(1, 1, 60), alloc(1, 1, 2000, 0), "", "QOSMaxMemoryPerUser"},
		"cpus per node":          {Job{MaxTRESPerNode: []ScopedTRES{{ScopeQOS, assoc.TRES{"cpu": 2}}}}, nil, j(1, 6, 60), alloc(2, 3, 0, 0), "", "QOSMaxCpuPerNode"},
		"typed GPUs not counted": {Job{MaxTRESPerJob: []ScopedTRES{{ScopeAssoc, assoc.TRES{"gres/gpu:a100": 0}}}}, nil, j(1, 1, 60), alloc(1, 1, 0, 1), "", ""},
	} {
		p := &Policy{Jobs: map[job.ID]*Job{tc.j.ID: &tc.limits}, Use: tc.use}
		if got := p.Runnable(tc.j); got != tc.runWant {
			t.Errorf("%s: Runnable = %q, want %q", name, got, tc.runWant)
		}
		if tc.a != nil {
			if got := p.Fits(tc.j, tc.a); got != tc.fitWant {
				t.Errorf("%s: Fits = %q, want %q", name, got, tc.fitWant)
			}
		}
	}
	// Starts count for the jobs after them.
	limits := &Job{Counters: []Counter{group}}
	p := &Policy{Jobs: map[job.ID]*Job{1: limits, 2: limits, 3: limits}}
	for id := job.ID(1); id <= 2; id++ {
		if r := p.Runnable(j(id, 2, 60)); r != "" {
			t.Fatalf("job %d: %s", id, r)
		}
		p.Started(j(id, 2, 60), alloc(1, 2, 0, 0))
	}
	if r := p.Runnable(j(3, 2, 60)); r != "AssocGrpJobsLimit" {
		t.Errorf("third job: %q", r)
	}
	var none *Policy
	if none.Runnable(j(1, 1, 1)) != "" || none.Fits(j(1, 1, 1), alloc(1, 1, 0, 0)) != "" {
		t.Error("a nil policy holds jobs")
	}
	none.Started(j(1, 1, 1), alloc(1, 1, 0, 0))
}

// TestMinuteLimits: TRES-minutes used, held by running jobs until their
// time limits, and asked by one job.
func TestMinuteLimits(t *testing.T) {
	j := &job.Job{ID: 1, Req: job.Request{NumTasks: 4, CPUsPerTask: 1, MinNodes: 1, TimeLimit: 60}}
	used := Counter{Key: "assoc:1", Scope: ScopeAssoc, Mins: assoc.TRES{"cpu": 1000}}
	run := Counter{Key: "qos:q", Scope: ScopeQOS, RunMins: assoc.TRES{"cpu": 300}}
	p := &Policy{Jobs: map[job.ID]*Job{1: {Counters: []Counter{used}}}}
	p.SetUsed("assoc:1", "cpu", 999)
	if r := p.Runnable(j); r != "" {
		t.Errorf("under GrpTRESMins: %q", r)
	}
	p.SetUsed("assoc:1", "cpu", 1000)
	if r := p.Runnable(j); r != "AssocGrpCPUMinutesLimit" {
		t.Errorf("at GrpTRESMins: %q", r)
	}
	p = &Policy{Jobs: map[job.ID]*Job{1: {Counters: []Counter{run}}}}
	if r := p.Fits(j, alloc(1, 4, 0, 0)); r != "" { // 240 CPU-minutes
		t.Errorf("under GrpTRESRunMins: %q", r)
	}
	p.Add(&Job{Counters: []Counter{run}}, job.TRES{CPUs: 1}, 61)
	if r := p.Fits(j, alloc(1, 4, 0, 0)); r != "QOSGrpCPURunMinutesLimit" {
		t.Errorf("over GrpTRESRunMins: %q", r)
	}
	p = &Policy{Jobs: map[job.ID]*Job{1: {MaxTRESMinsPerJob: []ScopedTRES{{ScopeAssoc, assoc.TRES{"cpu": 200}}}}}}
	if r := p.Runnable(j); r != "AssocMaxCpuMinutesPerJobLimit" {
		t.Errorf("over MaxTRESMinsPerJob: %q", r)
	}
	if r := minutesReason(ScopeQOS, "mem", "Run"); r != "QOSGrpMemoryRunMinutes" {
		t.Errorf("reason %q", r)
	}
}

func TestGrpWall(t *testing.T) {
	j := &job.Job{ID: 1, Req: job.Request{NumTasks: 1, CPUsPerTask: 1, MinNodes: 1, TimeLimit: 60}}
	c := Counter{Key: "qos:q", Scope: ScopeQOS, Wall: assoc.Count(120)}
	p := &Policy{Jobs: map[job.ID]*Job{1: {Counters: []Counter{c}}}}
	p.SetWall("qos:q", 119)
	if r := p.Runnable(j); r != "" {
		t.Errorf("under GrpWall: %q", r)
	}
	p.SetWall("qos:q", 120)
	if r := p.Runnable(j); r != "QOSGrpWallLimit" {
		t.Errorf("at GrpWall: %q", r)
	}
}

func TestPerAccountTRES(t *testing.T) {
	j := &job.Job{ID: 1, Req: job.Request{NumTasks: 2, CPUsPerTask: 1, MinNodes: 1, TimeLimit: 60}}
	c := Counter{Key: "qos:q/account:lab", Scope: ScopeQOS, Kind: PerAccount, TRES: assoc.TRES{"cpu": 3}}
	p := &Policy{Jobs: map[job.ID]*Job{1: {Counters: []Counter{c}}}}
	p.Add(&Job{Counters: []Counter{c}}, job.TRES{CPUs: 2}, 10)
	if r := p.Fits(j, alloc(1, 2, 0, 0)); r != "MaxCpuPerAccount" {
		t.Errorf("over MaxTRESPerAccount: %q", r)
	}
}

// TestTimedOut: a running job ends once its groups used their
// TRES-minutes or wall minutes, or it used its own TRES-minutes.
func TestTimedOut(t *testing.T) {
	j := &job.Job{ID: 1, Req: job.Request{NumTasks: 4, CPUsPerTask: 1, MinNodes: 1, TimeLimit: 60}}
	held := job.TRES{CPUs: 4, Nodes: 1}
	mins := Counter{Key: "assoc:1", Scope: ScopeAssoc, Mins: assoc.TRES{"cpu": 100}}
	wall := Counter{Key: "qos:q", Scope: ScopeQOS, Wall: assoc.Count(30)}
	perJob := ScopedTRES{ScopeQOS, assoc.TRES{"cpu": 200}}
	p := &Policy{Jobs: map[job.ID]*Job{1: {Counters: []Counter{mins, wall}, MaxTRESMinsPerJob: []ScopedTRES{perJob}}}}
	p.SetUsed("assoc:1", "cpu", 99)
	p.SetWall("qos:q", 29)
	if r := p.TimedOut(j, held, 49); r != "" {
		t.Errorf("under every limit: %q", r)
	}
	if r := p.TimedOut(j, held, 50); r != "QOS max tres(cpu) minutes per job" {
		t.Errorf("at 200 CPU-minutes of the job's 200: %q", r)
	}
	p.SetWall("qos:q", 30)
	if r := p.TimedOut(j, held, 1); r != "QOS group wall limit" {
		t.Errorf("at the QOS's GrpWall: %q", r)
	}
	p.SetWall("qos:q", 0)
	p.SetUsed("assoc:1", "cpu", 100)
	if r := p.TimedOut(j, held, 1); r != "Assoc group max tres(cpu) minutes" {
		t.Errorf("at the association's GrpTRESMins: %q", r)
	}
	var none *Policy
	if none.TimedOut(j, held, 1000) != "" {
		t.Error("a nil policy times jobs out")
	}
}

// TestSafe: under AccountingStorageEnforce=safe a job starts only if its
// time limit fits in what is left of a GrpTRESMins.
func TestSafe(t *testing.T) {
	j := &job.Job{ID: 1, Req: job.Request{NumTasks: 2, CPUsPerTask: 1, MinNodes: 1, TimeLimit: 60}}
	c := Counter{Key: "assoc:1", Scope: ScopeAssoc, Mins: assoc.TRES{"cpu": 200}}
	for _, tc := range []struct {
		safe bool
		used uint64
		want job.Reason
	}{{false, 100, ""}, {true, 80, ""}, {true, 81, "AssocGrpCPUMinutesLimit"}} {
		p := &Policy{Jobs: map[job.ID]*Job{1: {Counters: []Counter{c}}}, Safe: tc.safe}
		p.SetUsed("assoc:1", "cpu", tc.used)
		if r := p.Fits(j, alloc(1, 2, 0, 0)); r != tc.want {
			t.Errorf("safe %v, %d used: %q, want %q", tc.safe, tc.used, r, tc.want)
		}
	}
}

// TestDenied: what a QOS with DenyOnLimit refuses, with the reasons real
// Slurm 22.05 printed for the same limits and requests.
func TestDenied(t *testing.T) {
	j := func(cpus, nodes, timeLimit uint32) *job.Job {
		return &job.Job{ID: 1, Req: job.Request{NumTasks: cpus, CPUsPerTask: 1, MinNodes: nodes, TimeLimit: timeLimit}}
	}
	q := func(c Counter) Job { c.Key, c.Scope = "qos:q", ScopeQOS; return Job{Counters: []Counter{c}} }
	for name, tc := range map[string]struct {
		limits Job
		j      *job.Job
		want   job.Reason
	}{
		"within":              {Job{MaxWall: []ScopedCount{{ScopeQOS, 10}}}, j(1, 1, 5), ""},
		"max wall":            {Job{MaxWall: []ScopedCount{{ScopeQOS, 10}}}, j(1, 1, 20), "QOSMaxWallDurationPerJobLimit"},
		"no time limit":       {Job{MaxWall: []ScopedCount{{ScopeAssoc, 10}}}, j(1, 1, job.Infinite), "AssocMaxWallDurationPerJobLimit"},
		"cpus per job":        {Job{MaxTRESPerJob: []ScopedTRES{{ScopeQOS, assoc.TRES{"cpu": 2}}}}, j(4, 1, 5), "QOSMaxCpuPerJobLimit"},
		"group cpus, alone":   {q(Counter{TRES: assoc.TRES{"cpu": 2}}), j(3, 1, 5), "QOSGrpCpuLimit"},
		"per user cpus":       {q(Counter{Kind: PerUser, TRES: assoc.TRES{"cpu": 1}}), j(2, 1, 5), "QOSMaxCpuPerUserLimit"},
		"per account cpus":    {q(Counter{Kind: PerAccount, TRES: assoc.TRES{"cpu": 1}}), j(2, 1, 5), "MaxCpuPerAccount"},
		"cpus per node":       {Job{MaxTRESPerNode: []ScopedTRES{{ScopeQOS, assoc.TRES{"cpu": 1}}}}, j(2, 1, 5), "QOSMaxCpuPerNode"},
		"cpus per node, wide": {Job{MaxTRESPerNode: []ScopedTRES{{ScopeQOS, assoc.TRES{"cpu": 1}}}}, j(2, 2, 5), ""},
		"min cpus":            {Job{MinTRESPerJob: []ScopedTRES{{ScopeQOS, assoc.TRES{"cpu": 4}}}}, j(2, 1, 5), "QOSMinCpuNotSatisfied"},
		"cpu-minutes per job": {Job{MaxTRESMinsPerJob: []ScopedTRES{{ScopeQOS, assoc.TRES{"cpu": 10}}}}, j(1, 1, 20), "QOSMaxCpuMinutesPerJobLimit"},
		"run minutes":         {q(Counter{RunMins: assoc.TRES{"cpu": 10}}), j(1, 1, 20), "QOSGrpCPURunMinutesLimit"},
		"group minutes":       {q(Counter{Mins: assoc.TRES{"cpu": 10}}), j(1, 1, 20), "QOSGrpCPUMinutesLimit"},
		"group wall":          {q(Counter{Wall: assoc.Count(0)}), j(2, 1, job.Infinite), "QOSGrpWallLimit"},
		"job counts":          {q(Counter{Jobs: assoc.Count(0)}), j(1, 1, 5), ""},
		"QOS before assoc": {Job{MaxWall: []ScopedCount{{ScopeAssoc, 1}},
			MaxTRESPerJob: []ScopedTRES{{ScopeQOS, assoc.TRES{"cpu": 1}}}}, j(2, 1, 5), "QOSMaxCpuPerJobLimit"},
	} {
		if got := Denied(tc.j, &tc.limits); got != tc.want {
			t.Errorf("%s: %q, want %q", name, got, tc.want)
		}
	}
	if Denied(j(100, 1, job.Infinite), nil) != "" {
		t.Error("no limits denied a job")
	}
}
