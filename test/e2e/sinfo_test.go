package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestSinfoViews checks sinfo's views of a two-node cluster with one busy
// node and then one drained node: the default partition summary, -N, -l,
// -s, -h, -p, -t, -o, -R and --json, against real Slurm's layouts.
func TestSinfoViews(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2})
	row := func(part, limit string, n int, state, nodes string) string {
		return fmt.Sprintf("%-9s %5s %10s %6d %6s %s", part, "up", limit, n, state, nodes)
	}
	out := c.MustRun("", "sinfo")
	want := "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
		row("batch*", "infinite", 2, "idle", "n[1-2]") + "\n" +
		row("short", "30:00", 1, "idle", "n1") + "\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("sinfo on an idle cluster (-want +got):\n%s", diff)
	}
	if got, ref := firstLine(out), firstLine(reference(t, "sinfo_default")); got != ref {
		t.Errorf("sinfo header %q, real Slurm's %q", got, ref)
	}

	// One job on n1: the default view splits batch by state.
	id := c.Submit("", "-w", "n1", "--wrap", "sleep 60")
	c.WaitState(id, "RUNNING", 20*time.Second)
	out = c.MustRun("", "sinfo")
	want = "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
		row("batch*", "infinite", 1, "mix", "n1") + "\n" +
		row("batch*", "infinite", 1, "idle", "n2") + "\n" +
		row("short", "30:00", 1, "mix", "n1") + "\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("sinfo with a job on n1 (-want +got):\n%s", diff)
	}

	c.MustRun("", "scontrol", "update", "NodeName=n2", "State=DRAIN", "Reason=bad disk")
	tests := map[string]struct {
		args []string
		want string
	}{
		"-h": {[]string{"-h"}, row("batch*", "infinite", 1, "drain", "n2") + "\n" +
			row("batch*", "infinite", 1, "mix", "n1") + "\n" + row("short", "30:00", 1, "mix", "n1") + "\n"},
		"-p": {[]string{"-p", "short"}, "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" + row("short", "30:00", 1, "mix", "n1") + "\n"},
		// A partition without a node in the asked states still shows,
		// with 0 nodes, as sinfo's _build_sinfo_data makes a record for
		// every partition first.
		"-t": {[]string{"-h", "-t", "drain"}, row("batch*", "infinite", 1, "drain", "n2") + "\n" + row("short", "30:00", 0, "n/a", "") + "\n"},
		// A drained node is idle underneath: -t idle matches its base
		// state, as _filter_out does.
		"-t idle":  {[]string{"-h", "-t", "idle", "-o", "%P %D %t"}, "batch* 1 drain\nshort 0 n/a\n"},
		"-t alloc": {[]string{"-h", "-t", "mix,alloc", "-o", "%P %D %t %N"}, "batch* 1 mix n1\nshort 1 mix n1\n"},
		"-N": {[]string{"-N"}, "NODELIST   NODES PARTITION STATE \n" +
			"n1             1    batch* mix   \nn1             1     short mix   \nn2             1    batch* drain \n"},
		"-o": {[]string{"-o", "%P %a %l %D %t %N"}, "PARTITION AVAIL TIMELIMIT NODES STATE NODELIST\n" +
			"batch* up infinite 1 drain n2\nbatch* up infinite 1 mix n1\nshort up 30:00 1 mix n1\n"},
		"-o node codes": {[]string{"-h", "-N", "-p", "batch", "-o", "%n|%c|%m|%C|%E|%T|%R|%z"},
			"n1|8|8000|1/7/0/8|none|mixed|batch|8:1:1\nn2|8|8000|0/0/8/8|bad disk|drained|batch|8:1:1\n"},
		"-s": {[]string{"-s"}, "PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n" +
			"batch*       up   infinite          1/0/1/2 n[1-2]\nshort        up      30:00          1/0/0/1 n1\n"},
	}
	for name, tc := range tests {
		r := c.Run("", "sinfo", tc.args...)
		if r.Code != 0 || r.Stderr != "" {
			t.Errorf("%s: sinfo %q: %+v", name, tc.args, r)
			continue
		}
		if diff := cmp.Diff(tc.want, r.Stdout); diff != "" {
			t.Errorf("%s: sinfo %q (-want +got):\n%s", name, tc.args, diff)
		}
	}
	for name, args := range map[string][]string{"sinfo_s": {"-s"}, "sinfo_o": {"-o", "%P %a %l %D %t %N"}} {
		if got, ref := firstLine(c.MustRun("", "sinfo", args...)), firstLine(reference(t, name)); got != ref {
			t.Errorf("sinfo %v header %q, real Slurm's %q", args, got, ref)
		}
	}

	// -R lists the drain with its reason, who set it and when.
	out = c.MustRun("", "sinfo", "-R")
	if got, ref := firstLine(out), firstLine(reference(t, "sinfo_R")); got != ref {
		t.Errorf("sinfo -R header %q, real Slurm's %q", got, ref)
	}
	if !regexp.MustCompile(`^bad disk +root +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d n2$`).MatchString(lines(out)[len(lines(out))-1]) || len(lines(out)) != 2 {
		t.Errorf("sinfo -R:\n%s", out)
	}
	// -N -l: the long node view, header as real Slurm prints it.
	out = c.MustRun("", "sinfo", "-N", "-l")
	if got, ref := lines(out)[1], lines(reference(t, "sinfo_N_l"))[1]; got != ref {
		t.Errorf("sinfo -N -l header:\n%q\nreal Slurm's\n%q", got, ref)
	}
	if !regexp.MustCompile(`^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}$`).MatchString(lines(out)[0]) {
		t.Errorf("sinfo -N -l: first line %q, want the date", lines(out)[0])
	}
	if got := lines(out)[4]; !strings.HasPrefix(got, "n2             1    batch*     drained 8       8:1:1   8000        0      1   (null) bad disk") {
		t.Errorf("sinfo -N -l, n2: %q", got)
	}

	// --json: real Slurm's layout (the same keys in the same order).
	r := c.Run("", "sinfo", "--json")
	got, err := jsonPaths([]byte(r.Stdout))
	if err != nil || r.Code != 0 {
		t.Fatalf("sinfo --json: %v %+v", err, r)
	}
	ref, err := jsonPaths([]byte(reference(t, "sinfo_json")))
	if err != nil {
		t.Fatal(err)
	}
	// The partition member is the controller's partition answer as
	// slurmrestd would give it; the rest is sinfo's own.
	isPart := func(p string) bool { return strings.HasPrefix(p, "sinfo[].partition.") }
	if diff := cmp.Diff(slices.DeleteFunc(slices.Clone(ref), isPart), slices.DeleteFunc(slices.Clone(got), isPart)); diff != "" {
		t.Errorf("sinfo --json layout differs from real Slurm's (-real +drover):\n%s", diff)
	}
	t.Run("json partition layout", func(t *testing.T) {
		diff := cmp.Diff(slices.DeleteFunc(slices.Clone(ref), func(p string) bool { return !isPart(p) }),
			slices.DeleteFunc(slices.Clone(got), func(p string) bool { return !isPart(p) }))
		if diff != "" {
			t.Errorf("sinfo --json partition members (-real +drover):\n%s", diff)
		}
	})
	var doc struct {
		Sinfo []struct {
			Node      struct{ State []string }
			Nodes     struct{ Nodes []string }
			Partition struct{ Name string }
			Reason    struct{ Description string }
		}
	}
	if err := json.Unmarshal([]byte(r.Stdout), &doc); err != nil {
		t.Fatal(err)
	}
	var recs []string
	for _, s := range doc.Sinfo {
		recs = append(recs, fmt.Sprintf("%s %v %v %q", s.Partition.Name, s.Node.State, s.Nodes.Nodes, s.Reason.Description))
	}
	slices.Sort(recs)
	wantRecs := []string{`batch [IDLE DRAIN] [n2] "bad disk"`, `batch [MIXED] [n1] ""`, `short [MIXED] [n1] ""`}
	if diff := cmp.Diff(wantRecs, recs); diff != "" {
		t.Errorf("sinfo --json records (-want +got):\n%s", diff)
	}

	for _, args := range [][]string{{"--version"}, {"-V"}} {
		if r := c.Run("", "sinfo", args...); r.Code != 0 || r.Stdout != "slurm 25.11.0\n" {
			t.Errorf("sinfo %v: %+v", args, r)
		}
	}
}
