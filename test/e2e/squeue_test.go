package e2e

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/jx"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// queueJobs is a job mix for the squeue tests: held jobs in two partitions,
// a running one, a held array and a finished one.
type queueJobs struct {
	held, heldDebug, running, array, done string
}

func submitQueueJobs(t *testing.T, c *Cluster) queueJobs {
	t.Helper()
	var q queueJobs
	q.done = c.Submit("", "-J", "done", "--wrap", "true")
	c.WaitState(q.done, "COMPLETED", 20*time.Second)
	q.held = c.Submit("", "-H", "-J", "holdone", "--wrap", "true")
	q.heldDebug = c.Submit("", "-H", "-p", "debug", "-J", "holdtwo", "--wrap", "true")
	q.running = c.Submit("", "-J", "a-long-runner", "--wrap", "sleep 60")
	q.array = c.Submit("", "-H", "--array=2-4%25", "-J", "arr", "--wrap", "true")
	c.WaitState(q.running, "RUNNING", 20*time.Second)
	return q
}

func sortedLines(out string) []string {
	l := lines(out)
	slices.Sort(l)
	return l
}

// TestSqueueFormatsAndFilters checks squeue's default view against real
// Slurm's layout, -o/-O/-l formats, the filters and sorting.
func TestSqueueFormatsAndFilters(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2, Extra: "PartitionName=debug Nodes=n[1-2] MaxTime=30:00 DefaultTime=10:00 State=UP\n"})
	q := submitQueueJobs(t, c)

	// The default view: Slurm's header, "%.18i %.9P %.8j %.8u %.2t %.10M
	// %.6D %R" columns, pending jobs (by partition, state, priority) first.
	out := c.MustRun("", "squeue")
	if want := firstLine(reference(t, "squeue_default")); firstLine(out) != want {
		t.Errorf("squeue header:\n%q\nwant\n%q", firstLine(out), want)
	}
	row := func(id, part, name, st, tm, reason string) string {
		return fmt.Sprintf("%18s %9s %8s %8s %2s %10s %6s %s", id, part, name, "root", st, tm, "1", reason)
	}
	got := lines(out)[1:]
	want := []string{
		row(q.array+"_[2-4%25]", "batch", "arr", "PD", "0:00", "(JobHeldUser)"),
		row(q.held, "batch", "holdone", "PD", "0:00", "(JobHeldUser)"),
		row(q.heldDebug, "debug", "holdtwo", "PD", "0:00", "(JobHeldUser)"),
	}
	runRE := regexp.MustCompile(`^ +` + q.running + ` +batch a-long-r +root +R +\d+:\d\d +1 n[12]$`)
	// Partition batch (pending, then running), then debug; the two held
	// batch jobs tie on priority.
	if len(got) != 4 || !slices.Equal(sortedLines(strings.Join(got[:2], "\n")), sortedLines(strings.Join(want[:2], "\n"))) ||
		!runRE.MatchString(got[2]) || got[3] != want[2] {
		t.Errorf("squeue rows:\n%s\nwant\n%s\n%s\n<running %s>\n%s", strings.Join(got, "\n"), want[0], want[1], q.running, want[2])
	}
	if got, want := lines(c.MustRun("", "squeue", "-l"))[1], lines(reference(t, "squeue_l"))[1]; got != want {
		t.Errorf("squeue -l header:\n%q\nwant\n%q", got, want)
	}

	tests := map[string]struct {
		args []string
		// want is the exact output; sorted compares the lines as a set.
		want   string
		sorted bool
	}{
		"-h -o":        {args: []string{"-h", "-o", "%i %t", "-j", q.running}, want: q.running + " R\n"},
		"-j list":      {args: []string{"-h", "-o", "%i", "-j", q.held + "," + q.heldDebug}, want: q.held + "\n" + q.heldDebug + "\n", sorted: true},
		"-j array":     {args: []string{"-h", "-o", "%i %j", "-j", q.array}, want: q.array + "_[2-4%25] arr\n"},
		"-j task":      {args: []string{"-h", "-o", "%i %j", "-j", q.array + "_3"}, want: q.array + "_3 arr\n"},
		"-r":           {args: []string{"-h", "-r", "-o", "%i %K %F", "-j", q.array}, want: fmt.Sprintf("%[1]s_2 2 %[1]s\n%[1]s_3 3 %[1]s\n%[1]s_4 4 %[1]s\n", q.array)},
		"-u":           {args: []string{"-h", "-o", "%i", "-u", "root", "-t", "PD"}, want: fmt.Sprintf("%s_[2-4%%25]\n%s\n%s\n", q.array, q.held, q.heldDebug), sorted: true},
		"-u other":     {args: []string{"-h", "-o", "%i", "-u", "nobody"}, want: ""},
		"--me":         {args: []string{"-h", "-o", "%i", "--me", "-t", "R"}, want: q.running + "\n"},
		"-p":           {args: []string{"-h", "-o", "%i %P", "-p", "debug"}, want: q.heldDebug + " debug\n"},
		"-t R":         {args: []string{"-h", "-o", "%i", "-t", "R"}, want: q.running + "\n"},
		"-t running":   {args: []string{"-h", "-o", "%i", "-t", "running"}, want: q.running + "\n"},
		"-t CD":        {args: []string{"-h", "-o", "%i %t", "-t", "CD"}, want: q.done + " CD\n"},
		"-t PD,R":      {args: []string{"-h", "-o", "%i", "-t", "PD,R"}, want: fmt.Sprintf("%s_[2-4%%25]\n%s\n%s\n%s\n", q.array, q.held, q.heldDebug, q.running), sorted: true},
		"-t all":       {args: []string{"-h", "-o", "%i", "-t", "all"}, want: fmt.Sprintf("%s_[2-4%%25]\n%s\n%s\n%s\n%s\n", q.array, q.held, q.heldDebug, q.running, q.done), sorted: true},
		"default -t":   {args: []string{"-h", "-o", "%i", "-j", q.done}, want: ""},
		"--sort=i":     {args: []string{"-h", "-o", "%i", "--sort=i", "-t", "PD,R", "-j", strings.Join([]string{q.running, q.heldDebug, q.held}, ",")}, want: fmt.Sprintf("%s\n%s\n%s\n", q.held, q.heldDebug, q.running)},
		"--sort=-j":    {args: []string{"-h", "-o", "%j", "--sort=-j", "-t", "PD,R", "-j", strings.Join([]string{q.running, q.heldDebug, q.held}, ",")}, want: "holdtwo\nholdone\na-long-runner\n"},
		"-S reverse i": {args: []string{"-h", "-o", "%i", "-S", "-i", "-t", "all", "-j", strings.Join([]string{q.done, q.held}, ",")}, want: fmt.Sprintf("%s\n%s\n", q.held, q.done)},
		"-o widths":    {args: []string{"-h", "-o", "%.10i|%8j|%5D|%.3t", "-j", q.held}, want: fmt.Sprintf("%10s|%-8s|%-5s|%3s\n", q.held, "holdone", "1", "PD")},
		"-O":           {args: []string{"-O", "JobID,Name,State,Reason", "-j", q.held}, want: fmt.Sprintf("%-20s%-20s%-20s%-20s\n%-20s%-20s%-20s%-20s\n", "JOBID", "NAME", "STATE", "REASON", q.held, "holdone", "PENDING", "JobHeldUser")},
		"-O widths":    {args: []string{"-h", "-O", "JobID:8,Name:5,Partition:7", "-j", q.heldDebug}, want: fmt.Sprintf("%-8s%-5s%-7s\n", q.heldDebug, "holdt", "debug")},
	}
	for name, tc := range tests {
		r := c.Run("", "squeue", tc.args...)
		got, want := r.Stdout, tc.want
		if tc.sorted {
			got, want = strings.Join(sortedLines(got), "\n"), strings.Join(sortedLines(want), "\n")
		}
		if r.Code != 0 || got != want || r.Stderr != "" {
			t.Errorf("%s: squeue %q: exit %d stdout %q stderr %q, want %q", name, tc.args, r.Code, r.Stdout, r.Stderr, tc.want)
		}
	}
}

// TestSqueueJSONTimeFormatsAndErrors checks --json (decoded with the
// generated v0.0.44 decoder), SLURM_TIME_FORMAT, --version and the
// unknown-job error.
func TestSqueueJSONTimeFormatsAndErrors(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 1})
	held := c.Submit("", "-H", "-J", "jsonheld", "--wrap", "true")
	running := c.Submit("", "-J", "jsonrun", "--comment=c1", "--wrap", "sleep 60")
	c.WaitState(running, "RUNNING", 20*time.Second)

	r := c.Run("", "squeue", "--json")
	if r.Code != 0 || !strings.HasPrefix(r.Stdout, "{\n  \"") {
		t.Fatalf("squeue --json: exit %d, stdout %.200q, stderr %q", r.Code, r.Stdout, r.Stderr)
	}
	var resp v0044.V0044OpenapiJobInfoResp
	if err := resp.Decode(jx.DecodeStr(r.Stdout)); err != nil {
		t.Fatalf("decode squeue --json: %v", err)
	}
	states := map[string][]v0044.V0044JobInfoJobStateItem{}
	for _, j := range resp.Jobs {
		states[strconv.Itoa(int(j.JobID.Or(0)))+" "+j.Name.Or("")] = j.JobState
	}
	wantStates := map[string][]v0044.V0044JobInfoJobStateItem{
		held + " jsonheld":   {"PENDING"},
		running + " jsonrun": {"RUNNING"},
	}
	for k, want := range wantStates {
		if got := states[k]; !slices.Equal(got, want) {
			t.Errorf("--json job %s: job_state %v, want %v", k, got, want)
		}
	}
	if m, ok := resp.Meta.Get(); !ok || m.Slurm.Value.Release.Value != "25.11.0" || len(m.Command) == 0 || m.Command[0] != "squeue" {
		t.Errorf("--json meta: %+v", resp.Meta)
	}
	if resp.Errors == nil || resp.Warnings == nil {
		t.Errorf("--json: errors %v warnings %v, want both present (empty)", resp.Errors, resp.Warnings)
	}
	got, err := jsonPaths([]byte(c.MustRun("", "squeue", "--json", "-t", "all")))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := jsonPaths([]byte(reference(t, "squeue_json")))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("json members", func(t *testing.T) {
		var missing []string
		for _, p := range ref {
			if !slices.Contains(got, p) && !strings.Contains(p, "job_resources.nodes.allocation[].sockets") {
				missing = append(missing, p)
			}
		}
		if len(missing) > 0 {
			t.Errorf("the job answer leaves out %d members slurmrestd always sends: %s", len(missing), strings.Join(missing, " "))
		}
	})
	t.Run("json member order", func(t *testing.T) {
		// Each object's members, as far as both have them, in real
		// Slurm's order.
		refObjs, err := jsonObjects([]byte(reference(t, "squeue_json")))
		must(t, err)
		gotObjs, err := jsonObjects([]byte(c.MustRun("", "squeue", "--json", "-t", "all")))
		must(t, err)
		for parent, instances := range gotObjs {
			var want []string
			for _, r := range refObjs[parent] {
				if len(r) > len(want) {
					want = r
				}
			}
			for _, have := range instances {
				w := slices.DeleteFunc(slices.Clone(want), func(k string) bool { return !slices.Contains(have, k) })
				h := slices.DeleteFunc(slices.Clone(have), func(k string) bool { return !slices.Contains(want, k) })
				if !slices.Equal(w, h) {
					t.Errorf("squeue --json: members of %q in the order %v, real Slurm's %v", parent, h, w)
				}
			}
		}
	})
	// Filters apply to --json too.
	r = c.Run("", "squeue", "--json", "-j", held)
	resp = v0044.V0044OpenapiJobInfoResp{}
	if err := resp.Decode(jx.DecodeStr(r.Stdout)); err != nil || len(resp.Jobs) != 1 || resp.Jobs[0].JobID.Or(0) != mustAtoi(t, held) {
		t.Errorf("squeue --json -j %s: %v, %d jobs", held, err, len(resp.Jobs))
	}

	// SLURM_TIME_FORMAT for %V (submit time) and %S (start time).
	now := time.Now()
	timeOf := func(format string) string {
		t.Helper()
		r := c.RunEnv([]string{"SLURM_TIME_FORMAT=" + format}, "", "squeue", "-h", "-j", running, "-o", "%V")
		if r.Code != 0 {
			t.Fatalf("squeue with SLURM_TIME_FORMAT=%s: %+v", format, r)
		}
		return strings.TrimSuffix(r.Stdout, "\n")
	}
	std := timeOf("standard")
	submit, err := time.ParseInLocation("2006-01-02T15:04:05", std, time.Local)
	if err != nil || now.Sub(submit) > time.Minute || submit.Sub(now) > time.Second {
		t.Errorf("SLURM_TIME_FORMAT=standard: %q (%v), want about %v", std, err, now.Format(time.DateTime))
	}
	if got := timeOf(""); got != std {
		t.Errorf("default time format %q, want standard %q", got, std)
	}
	if got := timeOf("%s"); got != strconv.FormatInt(submit.Unix(), 10) {
		t.Errorf("SLURM_TIME_FORMAT=%%s: %q, want %d", got, submit.Unix())
	}
	if got := timeOf("relative"); got != submit.Format("15:04:05") && !strings.HasPrefix(got, "Ystday") {
		t.Errorf("SLURM_TIME_FORMAT=relative: %q, want today's %s", got, submit.Format("15:04:05"))
	}
	if got := timeOf("%H:%M"); got != submit.Format("15:04") {
		t.Errorf("SLURM_TIME_FORMAT=%%H:%%M: %q", got)
	}

	for _, args := range [][]string{{"--version"}, {"-V"}} {
		if r := c.Run("", "squeue", args...); r.Code != 0 || r.Stdout != "slurm 25.11.0\n" {
			t.Errorf("squeue %v: %+v", args, r)
		}
	}
	for _, id := range []string{"999999", "999999_1"} {
		r := c.Run("", "squeue", "-j", id)
		if r.Code != 1 || r.Stdout != "" || r.Stderr != "slurm_load_jobs error: Invalid job id specified\n" {
			t.Errorf("squeue -j %s: %+v", id, r)
		}
	}
	// An unknown -O field: Slurm's error, blank lines, exit 0.
	r = c.Run("", "squeue", "-O", "NoSuchField")
	wantErr, _ := readRef("err_squeue_bad_O_field.err")
	if r.Code != 0 || (wantErr != "" && r.Stderr != wantErr) {
		t.Errorf("squeue -O NoSuchField: %+v, want stderr %q", r, wantErr)
	}
}

func mustAtoi(t *testing.T, s string) int32 {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("not a job id: %q", s)
	}
	return int32(n)
}
