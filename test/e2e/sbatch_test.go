package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSbatchDirectivesAndCommandLine checks sbatch's precedence: #SBATCH
// lines, then SBATCH_* variables, then the command line; directives after
// the first command are ignored; --comment shows in scontrol.
func TestSbatchDirectivesAndCommandLine(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	script := "#!/bin/bash\n" +
		"#SBATCH -J fromdirective\n" +
		"#SBATCH -n 2\n" +
		"#SBATCH -o prec-%j.out\n" +
		"#SBATCH --comment=\"from a directive\"\n" +
		"#SBATCH -t 7 # a trailing comment\n" +
		"echo name=$SLURM_JOB_NAME ntasks=$SLURM_NTASKS\n" +
		"#SBATCH -J too-late\n"
	must(t, os.WriteFile(filepath.Join(c.WorkDir, "prec.sh"), []byte(script), 0o644))

	// The command line beats the directives.
	r := c.Run("", "sbatch", "--parsable", "-n", "3", "-t", "9", "prec.sh")
	if !regexp.MustCompile(`^\d+\n$`).MatchString(r.Stdout) || r.Code != 0 || r.Stderr != "" {
		t.Fatalf("sbatch --parsable: %+v, want only the job id", r)
	}
	id := strings.TrimSpace(r.Stdout)
	c.WaitState(id, "COMPLETED", 20*time.Second)
	if got, want := c.ReadFile("prec-"+id+".out"), "name=fromdirective ntasks=3\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	f := fieldMap(c.MustRun("", "scontrol", "show", "job", id))
	for k, want := range map[string]string{"JobName": "fromdirective", "NumTasks": "3", "TimeLimit": "00:09:00", "Comment": "from a directive"} {
		if f[k] != want {
			t.Errorf("scontrol show job: %s=%q, want %q", k, f[k], want)
		}
	}

	// The environment beats the directives, the command line beats both.
	r = c.RunEnv([]string{"SBATCH_JOB_NAME=fromenv", "SBATCH_TIMELIMIT=11"}, "", "sbatch", "prec.sh")
	m := regexp.MustCompile(`^Submitted batch job (\d+)\n$`).FindStringSubmatch(r.Stdout)
	if m == nil || r.Code != 0 {
		t.Fatalf("sbatch: %+v", r)
	}
	c.WaitState(m[1], "COMPLETED", 20*time.Second)
	if got, want := c.ReadFile("prec-"+m[1]+".out"), "name=fromenv ntasks=2\n"; got != want {
		t.Errorf("with SBATCH_JOB_NAME: output %q, want %q", got, want)
	}
	if got := fieldMap(c.MustRun("", "scontrol", "show", "job", m[1]))["TimeLimit"]; got != "00:11:00" {
		t.Errorf("with SBATCH_TIMELIMIT=11: TimeLimit=%s", got)
	}
	id3 := c.Submit("", "-J", "fromcli", "-o", "cli.out", "prec.sh")
	c.WaitState(id3, "COMPLETED", 20*time.Second)
	if got := c.ReadFile("cli.out"); got != "name=fromcli ntasks=2\n" {
		t.Errorf("-J on the command line: output %q", got)
	}
}

// TestSbatchScriptSourcesAndNames submits scripts from a file, standard
// input, /dev/stdin and --wrap, and checks the default job names.
func TestSbatchScriptSourcesAndNames(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	body := "#!/bin/sh\necho name=$SLURM_JOB_NAME args=$*\n"
	must(t, os.WriteFile(filepath.Join(c.WorkDir, "named.sh"), []byte(body), 0o644))
	ids := map[string]string{
		"named.sh": c.Submit("", "-o", "named.out", "named.sh", "a", "b"),
		"sbatch":   c.Submit(body, "-o", "stdin.out"),
		"stdin":    c.Submit(body, "-o", "devstdin.out", "/dev/stdin"),
		"wrap":     c.Submit("", "-o", "wrap.out", "--wrap", "echo name=$SLURM_JOB_NAME args="),
	}
	outs := map[string]string{"named.sh": "named.out", "sbatch": "stdin.out", "stdin": "devstdin.out", "wrap": "wrap.out"}
	for name, id := range ids {
		c.WaitState(id, "COMPLETED", 20*time.Second)
		want := "name=" + name + " args=\n"
		if name == "named.sh" {
			want = "name=named.sh args=a b\n"
		}
		if got := c.ReadFile(outs[name]); got != want {
			t.Errorf("%s: output %q, want %q", name, got, want)
		}
		if got := c.MustRun("", "squeue", "-h", "-t", "all", "-j", id, "-o", "%j"); got != name+"\n" {
			t.Errorf("squeue %%j of the %s job: %q", name, got)
		}
	}
	// Without --parsable sbatch says which job it submitted.
	r := c.Run(body, "sbatch", "-H")
	if !regexp.MustCompile(`^Submitted batch job \d+\n$`).MatchString(r.Stdout) || r.Code != 0 {
		t.Errorf("sbatch: %+v", r)
	}
}

// TestSbatchOutputPatterns checks every filename pattern of -o and -e on
// the tasks of an array.
func TestSbatchOutputPatterns(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	id := c.Submit("", "--array=1-2", "-J", "pat",
		"-o", "o-%A-%a-%j-%J-%x-%u-%N-%n-%t-%%.out", "-e", "e-%j-%x.err",
		"--wrap", "echo out; echo err >&2")
	re := regexp.MustCompile(`^o-(\d+)-(\d+)-(\d+)-(\d+)-pat-root-n1-0-0-%\.out$`)
	deadline := time.Now().Add(20 * time.Second)
	var outs []string
	for time.Now().Before(deadline) {
		outs, _ = filepath.Glob(filepath.Join(c.WorkDir, "o-*"))
		if len(outs) == 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(outs) != 2 {
		t.Fatalf("output files %v, want two", outs)
	}
	var tasks, jobs []string
	for _, o := range outs {
		m := re.FindStringSubmatch(filepath.Base(o))
		if m == nil {
			t.Errorf("output file %s does not match %s", filepath.Base(o), re)
			continue
		}
		if m[1] != id || m[3] != m[4] {
			t.Errorf("%s: %%A=%s (want %s), %%j=%s %%J=%s (want equal for the batch step)", filepath.Base(o), m[1], id, m[3], m[4])
		}
		tasks = append(tasks, m[2])
		jobs = append(jobs, m[3])
		c.WaitState(m[3], "COMPLETED", 20*time.Second)
		if got := c.ReadFile(o); got != "out\n" {
			t.Errorf("%s: %q", filepath.Base(o), got)
		}
		if got := c.ReadFile("e-" + m[3] + "-pat.err"); got != "err\n" {
			t.Errorf("e-%s-pat.err: %q", m[3], got)
		}
	}
	slices.Sort(tasks)
	if !slices.Equal(tasks, []string{"1", "2"}) || jobs[0] == jobs[1] || !slices.Contains(jobs, id) {
		t.Errorf("tasks %v with job ids %v: want tasks 1 and 2, own ids, one of them the array's %s", tasks, jobs, id)
	}
}

// TestSbatchArrayThrottle runs --array=1-4%2 and checks that at most two
// tasks run at once while squeue folds the pending ones.
func TestSbatchArrayThrottle(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	id := c.Submit("", "--array=1-4%2", "-o", "thr-%a.out", "--wrap", "sleep 3; echo $SLURM_ARRAY_TASK_ID $SLURM_ARRAY_TASK_MAX")
	c.WaitRun(fmt.Sprintf("%s_[3-4%%2] PD JobArrayTaskLimit\n%s_1 R None\n%s_2 R None\n", id, id, id),
		10*time.Second, "squeue", "-h", "-o", "%i %t %r")
	deadline := time.Now().Add(20 * time.Second)
	for {
		running := lines(c.MustRun("", "squeue", "-h", "-r", "-t", "R", "-o", "%i"))
		if len(running) > 2 {
			t.Fatalf("%d tasks running at once under %%2: %v", len(running), running)
		}
		if len(lines(c.MustRun("", "squeue", "-h", "-r", "-o", "%i"))) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("array %s not done after 20s", id)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for i := 1; i <= 4; i++ {
		c.WaitOutput(fmt.Sprintf("thr-%d.out", i), fmt.Sprintf("%d 4\n", i), 5*time.Second)
	}
}

// TestSbatchExport checks what the job sees under --export NONE, a list,
// ALL with additions and the default.
func TestSbatchExport(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	env := []string{"FOO=foo", "BAR=bar"}
	wrap := "echo FOO=$FOO BAR=$BAR BAZ=$BAZ job=${SLURM_JOB_ID:+set}"
	tests := map[string]struct {
		args []string
		want string
	}{
		"default":   {nil, "FOO=foo BAR=bar BAZ= job=set\n"},
		"ALL":       {[]string{"--export=ALL"}, "FOO=foo BAR=bar BAZ= job=set\n"},
		"ALL,extra": {[]string{"--export=ALL,BAZ=baz"}, "FOO=foo BAR=bar BAZ=baz job=set\n"},
		"list":      {[]string{"--export=FOO,BAZ=baz"}, "FOO=foo BAR= BAZ=baz job=set\n"},
		"NONE":      {[]string{"--export=NONE"}, "FOO= BAR= BAZ= job=set\n"},
	}
	ids := map[string]string{}
	for name, tc := range tests {
		args := append([]string{"--parsable", "-o", "export-" + name + ".out"}, tc.args...)
		r := c.RunEnv(env, "", "sbatch", append(args, "--wrap", wrap)...)
		if r.Code != 0 {
			t.Fatalf("sbatch %v: %+v", tc.args, r)
		}
		ids[name] = strings.TrimSpace(r.Stdout)
	}
	for name, tc := range tests {
		c.WaitState(ids[name], "COMPLETED", 20*time.Second)
		if got := c.ReadFile("export-" + name + ".out"); got != tc.want {
			t.Errorf("--export %s: job saw %q, want %q", name, got, tc.want)
		}
	}
}

// TestSbatchWorkDir checks -D: the job runs there and relative output
// paths are taken from it.
func TestSbatchWorkDir(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	sub := filepath.Join(c.WorkDir, "sub")
	must(t, os.MkdirAll(sub, 0o755))
	id := c.Submit("", "-D", "sub", "-o", "here.out", "--wrap", "pwd; echo $SLURM_SUBMIT_DIR")
	c.WaitState(id, "COMPLETED", 20*time.Second)
	if got, want := c.ReadFile(filepath.Join(sub, "here.out")), sub+"\n"+sub+"\n"; got != want {
		t.Errorf("-D sub: %q, want %q", got, want)
	}
	if got := fieldMap(c.MustRun("", "scontrol", "show", "job", id))["WorkDir"]; got != sub {
		t.Errorf("WorkDir=%s, want %s", got, sub)
	}
	// Without -o the default slurm-%j.out lands in the -D folder too.
	id = c.Submit("", "-D", sub, "--wrap", "echo default")
	c.WaitState(id, "COMPLETED", 20*time.Second)
	if got := c.ReadFile(filepath.Join(sub, "slurm-"+id+".out")); got != "default\n" {
		t.Errorf("default output in -D: %q", got)
	}
}

// TestSbatchHoldReleaseAndBegin checks --hold until scontrol release, and
// --begin in the future (reason BeginTime).
func TestSbatchHoldReleaseAndBegin(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	held := c.Submit("", "--hold", "-o", "held.out", "--wrap", "echo released")
	if got := c.MustRun("", "squeue", "-h", "-j", held, "-o", "%i %t %r"); got != held+" PD JobHeldUser\n" {
		t.Errorf("held job in squeue: %q", got)
	}
	f := fieldMap(c.MustRun("", "scontrol", "show", "job", held))
	if f["JobState"] != "PENDING" || f["Reason"] != "JobHeldUser" || f["Priority"] != "0" {
		t.Errorf("held job: JobState=%s Reason=%s Priority=%s", f["JobState"], f["Reason"], f["Priority"])
	}
	time.Sleep(500 * time.Millisecond)
	if s := c.State(held); s != "PENDING" {
		t.Fatalf("held job %s", s)
	}
	c.MustRun("", "scontrol", "release", held)
	c.WaitState(held, "COMPLETED", 20*time.Second)
	if got := c.ReadFile("held.out"); got != "released\n" {
		t.Errorf("released job wrote %q", got)
	}

	later := c.Submit("", "--begin=now+1hour", "--wrap", "true")
	if got := c.MustRun("", "squeue", "-h", "-j", later, "-o", "%t %r"); got != "PD BeginTime\n" {
		t.Errorf("--begin in an hour: squeue %q", got)
	}
	f = fieldMap(c.MustRun("", "scontrol", "show", "job", later))
	submit, err1 := time.ParseInLocation("2006-01-02T15:04:05", f["SubmitTime"], time.Local)
	eligible, err2 := time.ParseInLocation("2006-01-02T15:04:05", f["EligibleTime"], time.Local)
	if err1 != nil || err2 != nil || eligible.Sub(submit) < 59*time.Minute || eligible.Sub(submit) > 61*time.Minute {
		t.Errorf("SubmitTime=%s EligibleTime=%s, want an hour apart", f["SubmitTime"], f["EligibleTime"])
	}
	// Its start is expected at its begin time, as slurmctld shows it.
	if f["StartTime"] != f["EligibleTime"] {
		t.Errorf("StartTime=%s, want the begin time %s", f["StartTime"], f["EligibleTime"])
	}
	if got := c.MustRun("", "squeue", "--start", "-h", "-j", later, "-o", "%S"); got != f["EligibleTime"]+"\n" {
		t.Errorf("squeue --start: %q, want %s", got, f["EligibleTime"])
	}
	c.MustRun("", "scancel", later)
	c.WaitState(later, "CANCELLED", 10*time.Second)
}

// TestSbatchPartitionsAndNodes checks -p with a partition's DefaultTime and
// -w / -x node choices.
func TestSbatchPartitionsAndNodes(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, Extra: "PartitionName=debug Nodes=n[1-2] MaxTime=30:00 DefaultTime=10:00 State=UP\n"})
	dbg := c.Submit("", "-p", "debug", "--wrap", "sleep 30")
	c.WaitState(dbg, "RUNNING", 20*time.Second)
	f := fieldMap(c.MustRun("", "scontrol", "show", "job", dbg))
	if f["Partition"] != "debug" || f["TimeLimit"] != "00:10:00" {
		t.Errorf("-p debug: Partition=%s TimeLimit=%s, want debug and the DefaultTime 00:10:00", f["Partition"], f["TimeLimit"])
	}
	if got := c.MustRun("", "squeue", "-h", "-j", dbg, "-o", "%P %l"); got != "debug 10:00\n" {
		t.Errorf("squeue -o '%%P %%l': %q", got)
	}
	c.MustRun("", "scancel", dbg)

	on2, out := c.RunJob("w", "-w", "n2", "--wrap", "echo $SLURMD_NODENAME $SLURM_JOB_NODELIST")
	if out != "n2 n2\n" {
		t.Errorf("-w n2: %q", out)
	}
	if f := fieldMap(c.MustRun("", "scontrol", "show", "job", on2)); f["ReqNodeList"] != "n2" || f["NodeList"] != "n2" {
		t.Errorf("-w n2: ReqNodeList=%s NodeList=%s", f["ReqNodeList"], f["NodeList"])
	}
	notOn1, out := c.RunJob("x", "-x", "n1", "--wrap", "echo $SLURMD_NODENAME")
	if out != "n2\n" {
		t.Errorf("-x n1: %q", out)
	}
	if f := fieldMap(c.MustRun("", "scontrol", "show", "job", notOn1)); f["ExcNodeList"] != "n1" {
		t.Errorf("-x n1: ExcNodeList=%s", f["ExcNodeList"])
	}
}

// TestSbatchResourceEnvironment checks the variables that describe a job's
// resources: memory, CPUs per task, tasks per node, and their placement on
// idle 8-CPU nodes.
func TestSbatchResourceEnvironment(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, CPUs: 8})
	show := "echo nodes=$SLURM_JOB_NODELIST ntasks=$SLURM_NTASKS tpn=$SLURM_TASKS_PER_NODE cpn=$SLURM_JOB_CPUS_PER_NODE con=$SLURM_CPUS_ON_NODE"
	// On idle nodes, -N2 -n4 puts what it can on the first node (cons_tres).
	_, out := c.RunJob("n2n4", "-N2", "-n4", "--wrap", show)
	if want := "nodes=n[1-2] ntasks=4 tpn=3,1 cpn=3,1 con=3\n"; out != want {
		t.Errorf("-N2 -n4: %q, want %q", out, want)
	}
	// -n alone takes as many nodes as its tasks need (8(x2),4 for -n 20
	// on Slurm 22.05's four 8-CPU nodes; here 8,4 on two).
	_, out = c.RunJob("n12", "-n12", "--wrap", show)
	if want := "nodes=n[1-2] ntasks=12 tpn=8,4 cpn=8,4 con=8\n"; out != want {
		t.Errorf("-n12: %q, want %q", out, want)
	}
	// Pending, it shows the nodes it will take, as slurmctld guesses them
	// (NODES 3 for -n 20 on 8-CPU nodes in Slurm 22.05).
	held := c.Submit("", "-H", "-n12", "--wrap", "true")
	if got := c.MustRun("", "squeue", "-h", "-j", held, "-o", "%D"); got != "2\n" {
		t.Errorf("-n12 pending: squeue NODES %q, want 2", got)
	}
	if f := fieldMap(c.MustRun("", "scontrol", "show", "job", held)); !strings.HasPrefix(f["NumNodes"], "2") {
		t.Errorf("-n12 pending: NumNodes=%s, want 2", f["NumNodes"])
	}
	c.MustRun("", "scancel", held)
	id, out := c.RunJob("excl", "--exclusive", "--wrap", show)
	exclEnv := envOf(strings.ReplaceAll(out, " ", "\n"))
	if exclEnv["nodes"] != "n1" || exclEnv["ntasks"] != "" || exclEnv["cpn"] != "8" || exclEnv["con"] != "8" {
		t.Errorf("--exclusive: %q, want the whole node n1 (8 CPUs) and no SLURM_NTASKS", out)
	}
	if f := fieldMap(c.MustRun("", "scontrol", "show", "job", id)); f["NumCPUs"] != "8" {
		t.Errorf("--exclusive: NumCPUs=%s", f["NumCPUs"])
	}
	t.Run("tasks per node without -n", func(t *testing.T) {
		// env_array_for_batch_job: without -n the batch step counts one
		// task per CPU (divided by --cpus-per-task).
		if exclEnv["tpn"] != "8" {
			t.Errorf("SLURM_TASKS_PER_NODE=%s, want CPUs per node / cpus-per-task (8)", exclEnv["tpn"])
		}
	})

	type job struct {
		args []string
		wrap string
		want string
	}
	jobs := map[string]job{
		"mem":         {[]string{"--mem=500"}, "echo node=$SLURM_MEM_PER_NODE cpu=$SLURM_MEM_PER_CPU", "node=500 cpu=\n"},
		"mem-per-cpu": {[]string{"--mem-per-cpu=300", "-c", "2"}, "echo node=$SLURM_MEM_PER_NODE cpu=$SLURM_MEM_PER_CPU cpt=$SLURM_CPUS_PER_TASK con=$SLURM_CPUS_ON_NODE", "node= cpu=300 cpt=2 con=2\n"},
		"cpus":        {[]string{"-c", "4"}, "echo cpt=$SLURM_CPUS_PER_TASK con=$SLURM_CPUS_ON_NODE ntasks=$SLURM_NTASKS", "cpt=4 con=4 ntasks=\n"},
		"per-node":    {[]string{"-N2", "--ntasks-per-node=3"}, show + " npn=$SLURM_NTASKS_PER_NODE", "nodes=n[1-2] ntasks=6 tpn=3(x2) cpn=3(x2) con=3 npn=3\n"},
	}
	ids := map[string]string{}
	for name, j := range jobs {
		ids[name] = c.Submit("", append(append([]string{"-o", "res-" + name + ".out"}, j.args...), "--wrap", j.wrap)...)
	}
	for name, j := range jobs {
		c.WaitState(ids[name], "COMPLETED", 20*time.Second)
		if got := c.ReadFile("res-" + name + ".out"); got != j.want {
			t.Errorf("%s %v: %q, want %q", name, j.args, got, j.want)
		}
	}
	f := fieldMap(c.MustRun("", "scontrol", "show", "job", ids["mem"]))
	if f["MinMemoryNode"] != "500M" || !strings.Contains(f["ReqTRES"], "mem=500M") {
		t.Errorf("--mem=500: MinMemoryNode=%s ReqTRES=%s", f["MinMemoryNode"], f["ReqTRES"])
	}
	f = fieldMap(c.MustRun("", "scontrol", "show", "job", ids["mem-per-cpu"]))
	if f["MinMemoryCPU"] != "300M" || f["CPUs/Task"] != "2" {
		t.Errorf("--mem-per-cpu=300 -c 2: MinMemoryCPU=%s CPUs/Task=%s", f["MinMemoryCPU"], f["CPUs/Task"])
	}
	if n, _ := strconv.Atoi(f["NumCPUs"]); n != 2 {
		t.Errorf("-c 2: NumCPUs=%s", f["NumCPUs"])
	}
}
