package e2e

import (
	"encoding/json"
	"fmt"
	"github.com/go-faster/yaml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sacctReference is a capture of real Slurm's sacct with the job ids
// and the partition of this test's jobs in place of the captured ones.
func sacctReference(t *testing.T, name string, ids map[string]string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "reference", "cli", name+".out"))
	if err != nil {
		t.Skipf("reference capture: %v", err)
	}
	out := string(data)
	for old, id := range ids {
		re := regexp.MustCompile(`(?m)^` + old + `([ .|_])(\S*)( *)`)
		out = re.ReplaceAllStringFunc(out, func(m string) string {
			// In fixed columns the id's column keeps its width.
			sub := re.FindStringSubmatch(m)
			if sub[1] == "|" {
				return id + m[len(old):]
			}
			head := id + sub[1] + sub[2]
			if sub[3] == "" {
				return head
			}
			return head + strings.Repeat(" ", max(1, len(m)-len(head)))
		})
	}
	// The captured cluster's partition is "debug", this one's "batch".
	out = strings.ReplaceAll(out, "      debug", "      batch")
	return strings.ReplaceAll(out, "|debug|", "|batch|")
}

// TestSacct: jobs that completed, failed, were cancelled and still run,
// as sacct shows them, compared with real Slurm's sacct for the same
// jobs; its options and errors.
func TestSacct(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 4})
	completed := c.Submit("", "-J", "completed_job", "--wrap", "true")
	failed := c.Submit("", "-J", "failed_job", "--wrap", "exit 3")
	cancelled := c.Submit("", "-J", "cancelled_job", "--wrap", "sleep 300")
	running := c.Submit("", "-J", "running_job", "--wrap", "sleep 300")
	c.WaitState(completed, "COMPLETED", 20*time.Second)
	c.WaitState(failed, "FAILED", 20*time.Second)
	c.WaitState(cancelled, "RUNNING", 20*time.Second)
	c.WaitState(running, "RUNNING", 20*time.Second)
	c.MustRun("", "scancel", cancelled)
	c.WaitState(cancelled, "CANCELLED", 20*time.Second)
	ids := strings.Join([]string{completed, failed, cancelled, running}, ",")
	// Records reach the store within the accounting agent's period.
	want := fmt.Sprintf("%s|COMPLETED\n%s|FAILED\n%s|CANCELLED by 0\n%s|RUNNING\n", completed, failed, cancelled, running)
	var got string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = c.MustRun("", "sacct", "-X", "-n", "-P", "-o", "JobID,State", "-j", ids); got == want {
			break
		}
	}
	if got != want {
		t.Fatalf("sacct -X -n -P:\n%s\nwant:\n%s", got, want)
	}
	subst := map[string]string{"125": completed, "126": failed, "127": cancelled, "128": running}
	ref := sacctReference(t, "sacct_default", subst)
	// The capture has two more jobs (129, a GPU job, and 130-131): this
	// test's four come first.
	wantLines := strings.SplitAfter(ref, "\n")[:10]
	if got := c.MustRun("", "sacct", "-j", ids); got != strings.Join(wantLines, "") {
		t.Errorf("sacct -j:\n%s\nwant (real Slurm's):\n%s", got, strings.Join(wantLines, ""))
	}
	refP := strings.SplitAfter(sacctReference(t, "sacct_P", subst), "\n")[:9]
	if got := c.MustRun("", "sacct", "-P", "-j", ids); got != strings.Join(refP, "") {
		t.Errorf("sacct -P:\n%s\nwant (real Slurm's):\n%s", got, strings.Join(refP, ""))
	}
	refp := strings.SplitAfter(sacctReference(t, "sacct_p", subst), "\n")[:9]
	if got := c.MustRun("", "sacct", "-p", "-j", ids); got != strings.Join(refp, "") {
		t.Errorf("sacct -p:\n%s\nwant (real Slurm's):\n%s", got, strings.Join(refp, ""))
	}
	refLong := sacctReference(t, "sacct_cancelled_state_long", subst)
	if got := c.MustRun("", "sacct", "-j", cancelled, "--format=JobID,State%30,ExitCode,DerivedExitCode"); got != refLong {
		t.Errorf("sacct --format with a width:\n%s\nwant (real Slurm's):\n%s", got, refLong)
	}
	// Elapsed differs from the capture's: compared apart.
	elapsed := regexp.MustCompile(`\|\d\d:\d\d:\d\d\|`)
	refFmt := strings.SplitAfter(sacctReference(t, "sacct_format_P", subst), "\n")[:9]
	if got := c.MustRun("", "sacct", "--format=JobID,JobName,State,ExitCode,Elapsed,AllocTRES", "-P", "-j", ids); elapsed.ReplaceAllString(got, "|E|") != elapsed.ReplaceAllString(strings.Join(refFmt, ""), "|E|") {
		t.Errorf("sacct --format -P:\n%s\nwant (real Slurm's):\n%s", got, strings.Join(refFmt, ""))
	}
	// --json: slurmdbd's answer for the job, in the capture's members
	// and order, with this command's meta block.
	var doc, refDoc map[string]any
	must(t, json.Unmarshal([]byte(c.MustRun("", "sacct", "--json", "-j", completed)), &doc))
	refData, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "reference", "cli", "sacct_json_completed.out"))
	must(t, err)
	must(t, json.Unmarshal(refData, &refDoc))
	jobs, _ := doc["jobs"].([]any)
	refJobs, _ := refDoc["jobs"].([]any)
	if len(jobs) != 1 || len(refJobs) != 1 {
		t.Fatalf("sacct --json: %d jobs", len(jobs))
	}
	ours, theirs := jobs[0].(map[string]any), refJobs[0].(map[string]any)
	for k := range theirs {
		if _, ok := ours[k]; !ok {
			t.Errorf("sacct --json: no member %q", k)
		}
	}
	if fmt.Sprint(ours["job_id"]) != completed || fmt.Sprint(ours["state"]) != fmt.Sprint(theirs["state"]) || fmt.Sprint(ours["exit_code"]) != fmt.Sprint(theirs["exit_code"]) {
		t.Errorf("sacct --json: job_id %v state %v exit_code %v", ours["job_id"], ours["state"], ours["exit_code"])
	}
	if cmd := fmt.Sprint(doc["meta"].(map[string]any)["command"]); cmd != "[sacct --json -j]" {
		t.Errorf("sacct --json meta.command %s", cmd)
	}
	// --yaml: the same document in YAML.
	var ydoc map[string]any
	yamlOut := c.MustRun("", "sacct", "--yaml", "-j", completed)
	must(t, yaml.Unmarshal([]byte(yamlOut), &ydoc))
	if yjobs, _ := ydoc["jobs"].([]any); !strings.HasPrefix(yamlOut, "---\n") || len(yjobs) != 1 ||
		fmt.Sprint(yjobs[0].(map[string]any)["job_id"]) != completed || fmt.Sprint(yjobs[0].(map[string]any)["state"]) != fmt.Sprint(ours["state"]) {
		t.Errorf("sacct --yaml:\n%s", yamlOut)
	}
	// A job that does not exist: the header alone, as Slurm's.
	if got, want := c.MustRun("", "sacct", "-j", "999999"), sacctReference(t, "err_sacct_unknown_job", nil); got != want {
		t.Errorf("sacct -j 999999:\n%s\nwant:\n%s", got, want)
	}
	// Selections.
	for args, want := range map[string]string{
		"-s F":                    failed + "\n",
		"-s CD,CA":                completed + "\n" + cancelled + "\n",
		"--name running_job":      running + "\n",
		"-j " + failed + ".batch": failed + ".batch\n",
		"-u nobody -j " + failed:  "",
	} {
		a := append([]string{"-n", "-P", "-o", "JobID"}, strings.Fields(args)...)
		if !strings.Contains(args, "-j") {
			a = append(a, "-X", "-S", "now-1hour")
		}
		if got := c.MustRun("", "sacct", a...); got != want {
			t.Errorf("sacct %s: %q, want %q", args, got, want)
		}
	}
	// Errors, in Slurm's words.
	if r := c.Run("", "sacct", "-o", "JobID,Bogus"); r.Code != 1 || r.Stderr != "Invalid field requested: \"Bogus\"\n" {
		t.Errorf("a bad field: %+v", r)
	}
	if r := c.Run("", "sacct", "--bogus"); r.Code != 1 || !strings.Contains(r.Stderr, "unrecognized option '--bogus'") {
		t.Errorf("a bad option: %+v", r)
	}
	if r := c.Run("", "sacct", "-S", "not-a-time"); r.Code != 1 || !strings.Contains(r.Stderr, "Invalid time") {
		t.Errorf("a bad time: %+v", r)
	}
}

// TestSacctSteps: srun's steps are recorded with how they ended, and an
// srun with an allocation of its own leaves a job and a step.
func TestSacctSteps(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 2})
	batch := c.Submit("", "--wrap", "srun true; srun sh -c 'exit 4'; srun sh -c 'kill -9 $$'; true")
	c.WaitState(batch, "COMPLETED", 30*time.Second)
	// A script that spends CPU: its batch step's usage, from its node.
	// A script and a step that spend CPU: their usage, from their node.
	loop := "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done"
	busy := c.Submit("", "--wrap", loop+"; srun sh -c '"+loop+"'")
	c.WaitState(busy, "COMPLETED", 60*time.Second)
	usage := regexp.MustCompile(`^(\d\d):(\d\d\.\d{3})\|\d+(\.\d\d)?[KMG]\|n1\n$`)
	for _, step := range []string{".batch", ".0"} {
		var u string
		for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if u = c.MustRun("", "sacct", "-n", "-P", "-o", "TotalCPU,MaxRSS,MaxRSSNode", "-j", busy+step); usage.MatchString(u) {
				break
			}
		}
		if m := usage.FindStringSubmatch(u); m == nil || (m[1] == "00" && m[2] == "00.000") {
			t.Errorf("step %s's usage: %q", step, u)
		}
	}
	// seff's report of the busy job, as Slurm's contrib script lays it
	// out.
	seff := regexp.MustCompile(`^Job ID: ` + busy + `\nCluster: \S+\nUser/Group: root/root\nState: COMPLETED \(exit code 0\)\nCores: 1\n` +
		`CPU Utilized: \d\d:\d\d:\d\d\nCPU Efficiency: \d+\.\d\d% of \d\d:\d\d:\d\d core-walltime\nJob Wall-clock time: \d\d:\d\d:\d\d\n` +
		`Memory Utilized: \d+\.\d\d [KMG]B \(estimated maximum\)\nMemory Efficiency: \d+\.\d\d% of 100\.00 MB \(100\.00 MB/core\)\n$`)
	if out := c.MustRun("", "seff", busy); !seff.MatchString(out) {
		t.Errorf("seff:\n%s", out)
	}
	if r := c.Run("", "seff", "999999"); r.Code != 1 || r.Stderr != "Job not found.\n" {
		t.Errorf("seff of an unknown job: %+v", r)
	}
	r := c.Run("", "srun", "-J", "own", "true")
	if r.Code != 0 {
		t.Fatalf("srun: %+v", r)
	}
	want := batch + "|COMPLETED|0:0\n" + batch + ".batch|COMPLETED|0:0\n" + batch + ".0|COMPLETED|0:0\n" +
		batch + ".1|FAILED|4:0\n" + batch + ".2|FAILED|0:9\n"
	var got string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = c.MustRun("", "sacct", "-n", "-P", "-o", "JobID,State,ExitCode", "-j", batch); got == want {
			break
		}
	}
	if got != want {
		t.Errorf("a batch job's steps:\n%s\nwant:\n%s", got, want)
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = c.MustRun("", "sacct", "-n", "-P", "-o", "JobName,State,ExitCode", "--name", "own", "-S", "now-1hour"); got == "own|COMPLETED|0:0\nown|COMPLETED|0:0\n" {
			break
		}
	}
	if got != "own|COMPLETED|0:0\nown|COMPLETED|0:0\n" {
		t.Errorf("srun's own allocation:\n%s", got)
	}
}

// TestSacctArray: an array with two tasks running and the rest pending,
// as real Slurm's sacct shows it.
func TestSacctArray(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, CPUs: 4})
	id := c.Submit("", "-J", "array_job", "--array=0-9%2", "--wrap", "sleep 300")
	want := sacctReference(t, "sacct_array_partly_running", map[string]string{"131": id})
	var got string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if got = c.MustRun("", "sacct", "-j", id); got == want {
			break
		}
	}
	if got != want {
		t.Errorf("sacct -j ARRAY:\n%s\nwant (real Slurm's):\n%s", got, want)
	}
	c.MustRun("", "scancel", id)
}

// TestSacctDisabled: under accounting_storage/none sacct says so and
// fails, as Slurm's does.
func TestSacctDisabled(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1, Extra: "AccountingStorageType=accounting_storage/none\n"})
	if r := c.Run("", "sacct"); r.Code != 1 || r.Stderr != "Slurm accounting storage is disabled\n" {
		t.Errorf("sacct: %+v", r)
	}
}
