package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestScontrolShow checks the layouts of scontrol show job, node,
// partition and config against real Slurm's (the same keys in the same
// order) and their values, plus the hostlist tools and ping.
func TestScontrolShow(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2})
	done := c.Submit("", "--mem=100", "-J", "completed_job", "-o", "%j.out", "--wrap", "echo done")
	c.WaitState(done, "COMPLETED", 20*time.Second)
	running := c.Submit("", "--mem=100", "-t", "60", "-J", "running_job", "-o", "%j.out", "--wrap", "sleep 60")
	held := c.Submit("", "--mem=100", "-H", "-J", "held_job", "-o", "%j.out", "--wrap", "sleep 60")
	c.WaitState(running, "RUNNING", 20*time.Second)

	layouts := map[string]struct {
		args []string
		ref  string
		// skip lists keys left out of the comparison, with the reason.
		skip []string
	}{
		"running job":   {[]string{"show", "job", running}, "scontrol_show_job_running", nil},
		"held job":      {[]string{"show", "job", held}, "scontrol_show_job_pending_held", nil},
		"completed job": {[]string{"show", "job", done}, "scontrol_show_job_completed", nil},
		"one-liner":     {[]string{"-o", "show", "job", running}, "scontrol_show_job_oneliner", nil},
		// Port is printed for nodes whose port differs from SlurmdPort,
		// as every node of the test cluster's does.
		"node": {[]string{"show", "node", "n1"}, "scontrol_show_node", []string{"Port"}},
		// The test cluster sets DefMemPerCPU, the captured one did not.
		"partition": {[]string{"show", "partition", "batch"}, "scontrol_show_partition", []string{"DefMemPerCPU", "DefMemPerNode"}},
	}
	for name, l := range layouts {
		out := c.MustRun("", "scontrol", l.args...)
		ref := reference(t, l.ref)
		if diff := cmp.Diff(fieldKeys(ref, l.skip...), fieldKeys(out, l.skip...)); diff != "" {
			t.Errorf("%s: scontrol %v keys differ from real Slurm's (-real +drover):\n%s\n%s", name, l.args, diff, out)
		}
		if name == "one-liner" && strings.Count(out, "\n") != 1 {
			t.Errorf("scontrol -o show job: %d lines", strings.Count(out, "\n"))
		}
	}

	j := fieldMap(c.MustRun("", "scontrol", "show", "job", running))
	want := map[string]string{
		"JobId": running, "JobName": "running_job", "UserId": "root(0)", "GroupId": "root(0)",
		"JobState": "RUNNING", "Reason": "None", "Restarts": "0", "BatchFlag": "1", "ExitCode": "0:0",
		"TimeLimit": "01:00:00", "Partition": "batch", "NodeList": "n1", "BatchHost": "n1",
		"NumNodes": "1", "NumCPUs": "1", "NumTasks": "1", "CPUs/Task": "1", "MinMemoryNode": "100M",
		"ReqTRES": "cpu=1,mem=100M,node=1,billing=1", "AllocTRES": "cpu=1,mem=100M,node=1,billing=1",
		"WorkDir": c.WorkDir, "StdIn": "/dev/null", "StdOut": c.WorkDir + "/" + running + ".out",
	}
	for k, v := range want {
		if j[k] != v {
			t.Errorf("scontrol show job %s: %s=%q, want %q", running, k, j[k], v)
		}
	}
	start, err1 := time.ParseInLocation("2006-01-02T15:04:05", j["StartTime"], time.Local)
	end, err2 := time.ParseInLocation("2006-01-02T15:04:05", j["EndTime"], time.Local)
	if err1 != nil || err2 != nil || end.Sub(start) != time.Hour {
		t.Errorf("StartTime=%s EndTime=%s, want an hour apart (-t 60)", j["StartTime"], j["EndTime"])
	}
	if h := fieldMap(c.MustRun("", "scontrol", "show", "job", held)); h["JobState"] != "PENDING" || h["Reason"] != "JobHeldUser" ||
		h["Priority"] != "0" || h["NodeList"] != "" || h["StartTime"] != "Unknown" || h["AllocTRES"] != "(null)" {
		t.Errorf("held job: JobState=%s Reason=%s Priority=%s NodeList=%q StartTime=%s AllocTRES=%s",
			h["JobState"], h["Reason"], h["Priority"], h["NodeList"], h["StartTime"], h["AllocTRES"])
	}
	if d := fieldMap(c.MustRun("", "scontrol", "show", "job", done)); d["JobState"] != "COMPLETED" || d["ExitCode"] != "0:0" {
		t.Errorf("completed job: JobState=%s ExitCode=%s", d["JobState"], d["ExitCode"])
	}
	t.Run("job values as real Slurm shows them", func(t *testing.T) {
		// Values of the captured held job (130) and of any job without
		// -e or a CPU specialisation, which the job answer carries.
		h := fieldMap(c.MustRun("", "scontrol", "show", "job", held))
		r := fieldMap(c.MustRun("", "scontrol", "show", "job", running))
		script := filepath.Join(c.WorkDir, "cmd.sh")
		must(t, os.WriteFile(script, []byte("#!/bin/sh\ntrue\n"), 0o644))
		s := fieldMap(c.MustRun("", "scontrol", "show", "job", c.Submit("", "-H", "cmd.sh")))
		var bad []string
		for _, f := range []struct{ what, got, want string }{
			{"held EligibleTime", h["EligibleTime"], "Unknown"},
			{"held AccrueTime", h["AccrueTime"], "Unknown"},
			{"held NumNodes", h["NumNodes"], "1-1"},
			{"NtasksPerN:B:S:C", r["NtasksPerN:B:S:C"], "0:0:*:*"},
			{"CoreSpec", r["CoreSpec"], "*"},
			{"StdErr without -e", r["StdErr"], ""},
			{"Command of a script file", s["Command"], script},
		} {
			if f.got != f.want {
				bad = append(bad, fmt.Sprintf("%s=%q (want %q)", f.what, f.got, f.want))
			}
		}
		if len(bad) > 0 {
			t.Errorf("scontrol show job differs from real Slurm: %s", strings.Join(bad, "; "))
		}
	})

	n := fieldMap(c.MustRun("", "scontrol", "show", "node", "n1"))
	for k, v := range map[string]string{"NodeName": "n1", "CPUAlloc": "1", "CPUTot": "8", "CPUEfctv": "8", "RealMemory": "8000",
		"AllocMem": "100", "State": "MIXED", "Partitions": "batch,short", "NodeAddr": "127.0.0.1",
		"CfgTRES": "cpu=8,mem=8000M,billing=8", "AllocTRES": "cpu=1,mem=100M"} {
		if n[k] != v {
			t.Errorf("scontrol show node n1: %s=%q, want %q", k, n[k], v)
		}
	}
	t.Run("node architecture", func(t *testing.T) {
		// Arch= is uname's machine (x86_64, aarch64), as slurmd reports it.
		var u syscall.Utsname
		must(t, syscall.Uname(&u))
		var b strings.Builder
		for _, ch := range u.Machine {
			if ch == 0 {
				break
			}
			b.WriteByte(byte(ch))
		}
		if n["Arch"] != b.String() {
			t.Errorf("Arch=%s, want %s", n["Arch"], b.String())
		}
	})
	if out := c.MustRun("", "scontrol", "show", "node"); strings.Count(out, "NodeName=") != 2 {
		t.Errorf("scontrol show node: %d nodes", strings.Count(out, "NodeName="))
	}
	p := fieldMap(c.MustRun("", "scontrol", "show", "partition", "batch"))
	for k, v := range map[string]string{"PartitionName": "batch", "Default": "YES", "Nodes": "n[1-2]", "MaxTime": "UNLIMITED",
		"DefaultTime": "NONE", "State": "UP", "TotalCPUs": "16", "TotalNodes": "2"} {
		if p[k] != v {
			t.Errorf("scontrol show partition batch: %s=%q, want %q", k, p[k], v)
		}
	}
	p = fieldMap(c.MustRun("", "scontrol", "show", "partition", "short"))
	if p["Default"] != "NO" || p["MaxTime"] != "00:30:00" || p["DefaultTime"] != "00:05:00" || p["Nodes"] != "n1" {
		t.Errorf("scontrol show partition short: Default=%s MaxTime=%s DefaultTime=%s Nodes=%s", p["Default"], p["MaxTime"], p["DefaultTime"], p["Nodes"])
	}
	t.Run("partition TRES and memory default", func(t *testing.T) {
		// The partition answer's tres.configured is what scontrol prints
		// as TRES=; DefMemPerCPU comes from slurm.conf's DefMemPerCPU=100.
		if p := fieldMap(c.MustRun("", "scontrol", "show", "partition", "batch")); p["TRES"] != "cpu=16,mem=16000M,node=2,billing=16" {
			t.Errorf("partition: TRES=%s DefMemPerCPU=%s", p["TRES"], p["DefMemPerCPU"])
		}
	})

	cfg := c.MustRun("", "scontrol", "show", "config")
	if !regexp.MustCompile(`^Configuration data as of \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\n`).MatchString(cfg) {
		t.Errorf("scontrol show config starts %q", firstLine(cfg))
	}
	conf := map[string]string{}
	for _, line := range lines(cfg)[1:] {
		if k, v, ok := strings.Cut(line, "="); ok {
			conf[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	for k, v := range map[string]string{"ClusterName": c.Name, "SlurmctldPort": strconv.Itoa(c.CtlPort),
		"StateSaveLocation": c.Dir + "/state", "KillWait": "2 sec", "MinJobAge": "300 sec", "DefMemPerCPU": "100",
		"SlurmdTimeout": "10 sec", "SLURM_CONF": c.Conf, "SLURM_VERSION": "25.11.0"} {
		if conf[k] != v {
			t.Errorf("scontrol show config: %s = %q, want %q", k, conf[k], v)
		}
	}
	// The reference's first 80 lines: the same keys in the same order.
	var refKeys, gotKeys []string
	// (DefMemPerCPU is set here, so it replaces DefMemPerNode.)
	for _, line := range lines(reference(t, "scontrol_show_config"))[1:] {
		k, _, _ := strings.Cut(line, "=")
		refKeys = append(refKeys, strings.Replace(strings.TrimSpace(k), "DefMemPerNode", "DefMemPerCPU", 1))
	}
	for _, line := range lines(cfg)[1 : len(refKeys)+1] {
		k, _, _ := strings.Cut(line, "=")
		gotKeys = append(gotKeys, strings.TrimSpace(k))
	}
	if diff := cmp.Diff(refKeys, gotKeys); diff != "" {
		t.Errorf("scontrol show config keys (-real +drover):\n%s", diff)
	}

	tools := map[string][]string{
		"scontrol_show_hostnames":      {"show", "hostnames", "n[1-3,7]"},
		"scontrol_show_hostlist":       {"show", "hostlist", "a1,a2,a3"},
		"scontrol_show_hostlistsorted": {"show", "hostlistsorted", "n3,n1,n2,n10"},
	}
	for ref, args := range tools {
		if got, want := c.MustRun("", "scontrol", args...), reference(t, ref); got != want {
			t.Errorf("scontrol %v: %q, real Slurm's %q", args, got, want)
		}
	}
	if got := c.MustRun("", "scontrol", "ping"); got != "Slurmctld(primary) at localhost is UP\n" {
		t.Errorf("scontrol ping: %q", got)
	}
	for _, args := range [][]string{{"--version"}, {"-V"}, {"version"}} {
		if r := c.Run("", "scontrol", args...); r.Code != 0 || r.Stdout != "slurm 25.11.0\n" {
			t.Errorf("scontrol %v: %+v", args, r)
		}
	}
}

// TestScontrolJobUpdates holds, releases and updates a job's time limit,
// partition and name; unknown jobs get Slurm's errors.
func TestScontrolJobUpdates(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	id := c.Submit("", "-t", "10", "-J", "before", "-o", "upd.out", "--wrap", "echo $SLURM_JOB_NAME $SLURM_JOB_PARTITION")
	// The job may start at once: hold it first (a pending job), or
	// resubmit held when it already ran.
	if r := c.Run("", "scontrol", "hold", id); r.Code != 0 {
		c.WaitState(id, "COMPLETED", 20*time.Second)
		id = c.Submit("", "-H", "-t", "10", "-J", "before", "-o", "upd.out", "--wrap", "echo $SLURM_JOB_NAME $SLURM_JOB_PARTITION")
	}
	if got := c.MustRun("", "squeue", "-h", "-j", id, "-o", "%t %r %p"); got != "PD JobHeldAdmin 0.00000000000000\n" && got != "PD JobHeldUser 0.00000000000000\n" {
		t.Errorf("held: %q", got)
	}
	c.MustRun("", "scontrol", "update", "JobId="+id, "TimeLimit=20", "Partition=short", "Name=after")
	f := fieldMap(c.MustRun("", "scontrol", "show", "job", id))
	if f["TimeLimit"] != "00:20:00" || f["Partition"] != "short" || f["JobName"] != "after" {
		t.Errorf("after update: TimeLimit=%s Partition=%s JobName=%s", f["TimeLimit"], f["Partition"], f["JobName"])
	}
	if got := c.MustRun("", "squeue", "-h", "-j", id, "-o", "%j %P %l"); got != "after short 20:00\n" {
		t.Errorf("squeue after update: %q", got)
	}
	// Lower-case keys work as in Slurm.
	c.MustRun("", "scontrol", "update", "jobid="+id, "timelimit=15")
	if got := fieldMap(c.MustRun("", "scontrol", "show", "job", id))["TimeLimit"]; got != "00:15:00" {
		t.Errorf("after timelimit=15: TimeLimit=%s", got)
	}
	r := c.Run("", "scontrol", "update", "JobId="+id, "Partition=nosuch")
	if r.Code != 1 || r.Stderr != "Invalid partition name specified for job "+id+"\n" {
		t.Errorf("update to an unknown partition: %+v", r)
	}
	c.MustRun("", "scontrol", "release", id)
	c.WaitState(id, "COMPLETED", 20*time.Second)
	if got := c.ReadFile("upd.out"); got != "after short\n" {
		t.Errorf("updated job saw %q", got)
	}

	t.Run("release one array task", func(t *testing.T) {
		// slurmctld splits the task off the array and releases only it.
		arr := c.Submit("", "-H", "--array=1-3", "-o", "/dev/null", "--wrap", "true")
		c.MustRun("", "scontrol", "release", arr+"_2")
		time.Sleep(time.Second)
		got := c.MustRun("", "squeue", "-h", "-r", "-t", "PD", "-o", "%i", "-j", arr)
		c.MustRun("", "scancel", arr)
		if want := arr + "_1\n" + arr + "_3\n"; got != want {
			t.Errorf("after releasing %s_2: tasks still held %q, want %q", arr, got, want)
		}
	})

	errs := map[string]struct {
		args   []string
		stderr string
	}{
		"show":    {[]string{"show", "job", "999999"}, "slurm_load_jobs error: Invalid job id specified\n"},
		"update":  {[]string{"update", "jobid=999999", "TimeLimit=10"}, "Invalid job id specified for job 999999\n"},
		"hold":    {[]string{"hold", "999999"}, "Invalid job id specified for job 999999\n"},
		"release": {[]string{"release", "999999"}, "Invalid job id specified for job 999999\n"},
		"requeue": {[]string{"requeue", "999999"}, "Invalid job id specified for job 999999\n"},
	}
	for name, e := range errs {
		if r := c.Run("", "scontrol", e.args...); r.Code != 1 || r.Stdout != "" || r.Stderr != e.stderr {
			t.Errorf("%s: scontrol %v: %+v, want exit 1 and %q", name, e.args, r, e.stderr)
		}
	}
	if ref, err := readRef("err_scontrol_update_unknown_job.err"); err == nil && ref != errs["update"].stderr {
		t.Errorf("real Slurm's update error is %q", ref)
	}
}

// TestScontrolNodeUpdates drains, resumes and downs a node and checks what
// scontrol, sinfo and the scheduler make of it.
func TestScontrolNodeUpdates(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2})
	c.MustRun("", "scontrol", "update", "NodeName=n1", "State=DRAIN", "Reason=disk check")
	n := fieldMap(c.MustRun("", "scontrol", "show", "node", "n1"))
	if n["State"] != "IDLE+DRAIN" || !regexp.MustCompile(`^disk check \[root@\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\]$`).MatchString(n["Reason"]) {
		t.Errorf("drained n1: State=%s Reason=%q", n["State"], n["Reason"])
	}
	if got := c.MustRun("", "sinfo", "-h", "-N", "-p", "batch", "-o", "%N %t %E"); got != "n1 drain disk check\nn2 idle none\n" {
		t.Errorf("sinfo after drain: %q", got)
	}
	_, out := c.RunJob("avoids-drained", "--wrap", "echo $SLURMD_NODENAME")
	if out != "n2\n" {
		t.Errorf("job ran on %q, want n2 (n1 is drained)", out)
	}
	c.MustRun("", "scontrol", "update", "NodeName=n1", "State=RESUME")
	if n := fieldMap(c.MustRun("", "scontrol", "show", "node", "n1")); n["State"] != "IDLE" || n["Reason"] != "" {
		t.Errorf("resumed n1: State=%s Reason=%q", n["State"], n["Reason"])
	}

	r := c.Run("", "scontrol", "update", "NodeName=n2", "State=DOWN")
	if r.Code != 1 || r.Stderr != "You must specify a reason when DOWNING or DRAINING a node. Request denied\n" {
		t.Errorf("DOWN without a reason: %+v", r)
	}
	c.MustRun("", "scontrol", "update", "NodeName=n2", "State=DOWN", "Reason=broken fan")
	if got := c.MustRun("", "sinfo", "-h", "-N", "-p", "batch", "-o", "%N %t %E"); got != "n1 idle none\nn2 down broken fan\n" {
		t.Errorf("sinfo after DOWN: %q", got)
	}
	if got := c.MustRun("", "sinfo", "-h", "-R", "-o", "%E|%N"); got != "broken fan|n2\n" {
		t.Errorf("sinfo -R after DOWN: %q", got)
	}
	c.MustRun("", "scontrol", "update", "NodeName=n2", "State=RESUME")
	c.WaitRun("n1 idle\nn2 idle\n", 15*time.Second, "sinfo", "-h", "-N", "-p", "batch", "-o", "%N %t")

	r = c.Run("", "scontrol", "update", "NodeName=n9", "State=RESUME")
	if r.Code != 1 || r.Stderr != "slurm_update error: Invalid node name specified\n" {
		t.Errorf("update of an unknown node: %+v", r)
	}
}

// TestScontrolRequeue requeues a running job: it goes back to pending, runs
// again with SLURM_RESTART_COUNT=1 (unset on the first run, as 25.11 has
// it), and scontrol shows Restarts=1.
func TestScontrolRequeue(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	id := c.Submit("", "-o", "rq.out", "--open-mode=append", "--wrap", "echo start ${SLURM_RESTART_COUNT-unset}; sleep 60")
	c.WaitOutput("rq.out", "start unset\n", 20*time.Second)
	c.MustRun("", "scontrol", "requeue", id)
	c.WaitOutput("rq.out", "start unset\nstart 1\n", 20*time.Second)
	f := fieldMap(c.MustRun("", "scontrol", "show", "job", id))
	if f["JobState"] != "RUNNING" || f["Restarts"] != "1" {
		t.Errorf("requeued job: JobState=%s Restarts=%s, want RUNNING and 1", f["JobState"], f["Restarts"])
	}
	// requeuehold puts it back and keeps it held.
	c.MustRun("", "scontrol", "requeuehold", id)
	c.WaitRun("PD\n", 15*time.Second, "squeue", "-h", "-j", id, "-o", "%t")
	time.Sleep(time.Second)
	if got := c.MustRun("", "squeue", "-h", "-j", id, "-o", "%t %r"); got != "PD JobHeldUser\n" && got != "PD JobHeldAdmin\n" {
		t.Errorf("after requeuehold: %q", got)
	}
	if got := fieldMap(c.MustRun("", "scontrol", "show", "job", id))["Restarts"]; got != "2" {
		t.Errorf("after requeuehold: Restarts=%s, want 2", got)
	}
	c.MustRun("", "scancel", id)
	c.WaitState(id, "CANCELLED", 10*time.Second)
}
