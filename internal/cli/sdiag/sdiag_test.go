package sdiag

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clitest"
	"github.com/droverhq/drover/internal/cli/connect"
	"github.com/droverhq/drover/internal/droverapi"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from this sdiag's output")

// The captures were taken on a host whose local time is UTC; sdiag
// prints local time.
func TestMain(m *testing.M) {
	time.Local = time.UTC
	os.Exit(m.Run())
}

// fake answers GET /diag with diag (status, when set, as an HTTP error)
// and GET /ping with the reference cluster's name.
type fake struct {
	v0044.UnimplementedHandler
	diag   v0044.V0044OpenapiDiagResp
	status int
}

func (f *fake) SlurmV0044GetDiag(context.Context) (v0044.SlurmV0044GetDiagRes, error) {
	if f.status != 0 {
		return &v0044.V0044OpenapiDiagRespStatusCode{StatusCode: f.status, Response: f.diag}, nil
	}
	return &f.diag, nil
}

func (f *fake) SlurmV0044GetPing(context.Context) (v0044.SlurmV0044GetPingRes, error) {
	return &v0044.V0044OpenapiPingArrayResp{Meta: f.diag.Meta}, nil
}

func reference(t *testing.T) *fake {
	t.Helper()
	f := &fake{}
	clitest.LoadReference(t, "diag.json", &f.diag)
	return f
}

func run(t *testing.T, f *fake, args ...string) clitest.Run {
	t.Helper()
	h := clitest.New(t, f, time.Unix(1795964462, 0))
	return h.Run(Run, "sdiag", "", args...)
}

func setTime(n int64) v0044.OptV0044Uint64NoValStruct {
	return v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptInt64(n)})
}

// The capture (sdiag | head -40) was taken a minute after diag.json; its
// counters, set here, give its text line for line.
func TestReferenceHead(t *testing.T) {
	f := reference(t)
	st := &f.diag.Statistics
	st.ReqTime = setTime(1795964462)
	st.JobStatesTs = setTime(1795964442)
	st.JobsSubmitted = v0044.NewOptInt32(33)
	st.JobsPending = v0044.NewOptInt32(11)
	st.JobsRunning = v0044.NewOptInt32(2)
	st.ScheduleCycleLast = v0044.NewOptInt32(74)
	st.ScheduleCycleTotal = v0044.NewOptInt32(13)
	st.ScheduleCycleSum = v0044.NewOptInt64(5453 * 13)
	st.ScheduleCycleDepth = v0044.NewOptInt32(13)
	st.ScheduleExit.Value.EndJobQueue = v0044.NewOptInt32(13)
	got := run(t, f)
	if got.Code != 0 || got.Stderr != "" {
		t.Fatalf("sdiag: code %d, stderr %q", got.Code, got.Stderr)
	}
	lines := strings.SplitAfter(got.Stdout, "\n")
	if len(lines) < 40 {
		t.Fatalf("sdiag printed %d lines:\n%s", len(lines), got.Stdout)
	}
	want := clitest.ReferenceRun(t, "sdiag_head")
	if diff := cmp.Diff(want.Stdout, strings.Join(lines[:40], "")); diff != "" {
		t.Errorf("sdiag | head -40 (-want +got):\n%s", diff)
	}
}

// The whole text of diag.json's answer, and its RPC tables in each order.
func TestGolden(t *testing.T) {
	for name, args := range map[string][]string{
		"reference":       nil,
		"sort-by-id":      {"-i"},
		"sort-by-time":    {"--sort-by-time"},
		"sort-by-time2":   {"-T"},
		"last-sort-wins":  {"-T", "-a", "--sort-by-id"},
		"abbreviated":     {"--sort-by-i"},
		"ignored-operand": {"extra"},
	} {
		t.Run(name, func(t *testing.T) {
			got := run(t, reference(t), args...)
			if got.Code != 0 || got.Stderr != "" {
				t.Fatalf("sdiag %v: code %d, stderr %q", args, got.Code, got.Stderr)
			}
			golden(t, name, got.Stdout)
		})
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	// An abbreviation and an operand change nothing.
	switch name {
	case "abbreviated":
		name = "sort-by-id"
	case "ignored-operand":
		name = "reference"
	}
	path := filepath.Join("testdata", name+".golden")
	if *update && !strings.Contains(t.Name(), "abbreviated") && !strings.Contains(t.Name(), "ignored") {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// What an idle controller's answer prints: the means and cycles per
// minute left out, no RPCs; and the pending RPC tables when there are.
func TestSections(t *testing.T) {
	f := &fake{}
	f.diag.Statistics.ReqTime = setTime(1795964340)
	f.diag.Statistics.ReqTimeStart = setTime(1795964322)
	f.diag.Statistics.BfActive = v0044.NewOptBool(true)
	f.diag.Statistics.PendingRpcs = v0044.V0044StatsMsgRpcsQueue{{TypeID: 6011, MessageType: "REQUEST_TERMINATE_JOB", Count: 2}}
	long := strings.Repeat("n", 90)
	f.diag.Statistics.PendingRpcsByHostlist = v0044.V0044StatsMsgRpcsDump{{TypeID: 6011, MessageType: "REQUEST_TERMINATE_JOB", Count: v0044.V0044HostlistString{long}}}
	got := run(t, f)
	for _, want := range []string{
		"\tTotal cycles: 0\n\tLast queue length: 0\n",
		"\nBackfilling stats (WARNING: data obtained in the middle of backfilling execution.)\n",
		"\tLast cycle when: N/A\n\tLast cycle: 0\n\tMax cycle:  0\n\tLast depth cycle: 0\n",
		"\nRemote Procedure Call statistics by message type\n\tNo RPCs recorded yet.\n",
		"\nRemote Procedure Call statistics by user\n\nPending RPC statistics\n" +
			"\tREQUEST_TERMINATE_JOB                   ( 6011) count:2     \n" +
			"\nPending RPCs\n\t 1: REQUEST_TERMINATE_JOB                " + long[:80] + "\n",
	} {
		if !strings.Contains(got.Stdout, want) {
			t.Errorf("sdiag lacks %q:\n%s", want, got.Stdout)
		}
	}
	if strings.Contains(got.Stdout, "Mean") || strings.Contains(got.Stdout, "Cycles per minute") {
		t.Errorf("sdiag printed means of no cycles:\n%s", got.Stdout)
	}
	if got := run(t, f, "--no-trunc"); !strings.HasSuffix(got.Stdout, " "+long+"\n") {
		t.Errorf("sdiag --no-trunc cut the host list:\n%s", got.Stdout)
	}
}

const tryHelp = "Try \"sdiag --help\" for more information\n"

func TestOptions(t *testing.T) {
	for name, tt := range map[string]struct {
		args []string
		want clitest.Run
	}{
		"version":                {[]string{"-V"}, clitest.Run{Stdout: "slurm 25.11.0\n"}},
		"long version":           {[]string{"--vers"}, clitest.Run{Stdout: "slurm 25.11.0\n"}},
		"usage":                  {[]string{"--usage"}, clitest.Run{Stdout: "Usage: sdiag [-M cluster] [-aritT]\n"}},
		"help":                   {[]string{"-h"}, clitest.Run{Stdout: helpText}},
		"first wins":             {[]string{"-ahV"}, clitest.Run{Stdout: helpText}},
		"M takes h":              {[]string{"-Mh", "-V"}, clitest.Run{Stdout: "slurm 25.11.0\n"}},
		"unknown":                {[]string{"-x"}, clitest.Run{Code: 1, Stderr: "sdiag: invalid option -- 'x'\n" + tryHelp}},
		"unknown long":           {[]string{"--bogus"}, clitest.Run{Code: 1, Stderr: "sdiag: unrecognized option '--bogus'\n" + tryHelp}},
		"ambiguous":              {[]string{"--sort"}, clitest.Run{Code: 1, Stderr: "sdiag: option '--sort' is ambiguous; possibilities: '--sort-by-id' '--sort-by-time' '--sort-by-time2'\n" + tryHelp}},
		"abbreviation ambiguous": {[]string{"--sort-by-t"}, clitest.Run{Code: 1, Stderr: "sdiag: option '--sort-by-t' is ambiguous; possibilities: '--sort-by-time' '--sort-by-time2'\n" + tryHelp}},
		"M argument":             {[]string{"-M"}, clitest.Run{Code: 1, Stderr: "sdiag: option requires an argument -- 'M'\n" + tryHelp}},
		"all argument":           {[]string{"--all=1"}, clitest.Run{Code: 1, Stderr: "sdiag: option '--all' doesn't allow an argument\n" + tryHelp}},
		"two clusters":           {[]string{"-M", "a,b"}, clitest.Run{Code: 1, Stderr: "sdiag: fatal: Only one cluster can be used at a time with sdiag\n"}},
		"other cluster": {[]string{"--cluster=other"}, clitest.Run{Code: 1, Stderr: "No cluster 'other' known by database.\n" +
			"'other' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list clusters' to see available clusters.\n" +
			"sdiag: fatal: Could not get cluster information\n"}},
		"autocomplete":       {[]string{"--autocomplete=so"}, clitest.Run{Stdout: "--sort-by-id\n--sort-by-time\n--sort-by-time2\n--json=\n--json \n\n"}},
		"autocomplete short": {[]string{"--autocomplete", "-M"}, clitest.Run{Stdout: "-M\n-M\n\n"}},
		"autocomplete json":  {[]string{"--autocomplete=json"}, clitest.Run{Stdout: "--json=\n--json \n\n"}},
		"bad parser":         {[]string{"--json=v0.0.40"}, clitest.Run{Code: 1, Stderr: "sdiag: error: JSON output is only available with data parser v0.0.44, not v0.0.40\n"}},
		"bad yaml parser":    {[]string{"--yaml=v0.0.42"}, clitest.Run{Code: 1, Stderr: "sdiag: error: YAML output is only available with data parser v0.0.44, not v0.0.42\n"}},
	} {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, run(t, reference(t), tt.args...)); diff != "" {
				t.Errorf("sdiag %v (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

// TestReset: -r posts the reset to the controller and prints what
// sdiag prints on success; a refusal prints the controller's Slurm
// message as slurm_perror does, and a failure to reach it the connect
// failure, both with exit(SLURM_ERROR).
func TestReset(t *testing.T) {
	for name, tt := range map[string]struct {
		err  error
		want clitest.Run
	}{
		"done": {want: clitest.Run{Stdout: "Reset scheduling statistics\n"}},
		"refused": {err: &connect.RequestError{Code: 2002, Message: "Access/permission denied"},
			want: clitest.Run{Code: 255, Stderr: "slurm_reset_statistics: Access/permission denied\n"}},
		"unreachable": {err: errors.New("dial unix /run/drover.sock: connect: no such file or directory"),
			want: clitest.Run{Code: 255, Stderr: "slurm_reset_statistics: Unable to contact slurm controller (connect failure): dial unix /run/drover.sock: connect: no such file or directory\n"}},
	} {
		t.Run(name, func(t *testing.T) {
			h := clitest.New(t, reference(t), time.Unix(1795964462, 0))
			var calls []string
			h.Env.Call = func(_ context.Context, method, path string, in, out any) error {
				calls = append(calls, method+" "+path)
				return tt.err
			}
			for _, args := range [][]string{{"-r"}, {"--reset"}, {"-a", "-r"}} {
				calls = nil
				if diff := cmp.Diff(tt.want, h.Run(Run, "sdiag", "", args...)); diff != "" {
					t.Errorf("sdiag %v (-want +got):\n%s", args, diff)
				}
				if diff := cmp.Diff([]string{"POST " + droverapi.DiagResetPath}, calls); diff != "" {
					t.Errorf("sdiag %v requests (-want +got):\n%s", args, diff)
				}
			}
		})
	}
}

// -r then -a asks for the statistics, and -M naming the controller's
// cluster reads them.
func TestModes(t *testing.T) {
	for _, args := range [][]string{{"-r", "-a"}, {"-M", "rccluster"}, {"--clusters=all"}} {
		got := run(t, reference(t), args...)
		if got.Code != 0 || !strings.Contains(got.Stdout, "Jobs submitted: 19\n") {
			t.Errorf("sdiag %v: %+v", args, got)
		}
	}
}

func TestControllerErrors(t *testing.T) {
	f := reference(t)
	f.status = 500
	f.diag.Errors = v0044.V0044OpenapiErrors{{Error: v0044.NewOptString("Access/permission denied")}}
	want := clitest.Run{Code: 255, Stderr: "slurm_get_statistics: Access/permission denied\n"}
	if diff := cmp.Diff(want, run(t, f)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// --json prints the controller's answer as Slurm's serializer lays it
// out, with this command's meta block; --yaml the same as YAML.
func TestJSON(t *testing.T) {
	got := run(t, reference(t), "--json")
	if got.Code != 0 || got.Stderr != "" {
		t.Fatalf("sdiag --json: %+v", got)
	}
	ref := clitest.ReadReference(t, "rest/v0.0.44/diag.json")
	// The statistics are the answer's, byte for byte.
	stats := func(s string) string {
		a, b := strings.Index(s, "\"statistics\""), strings.Index(s, "\"meta\"")
		if a < 0 || b < a {
			t.Fatalf("no statistics in %s", s)
		}
		return s[a:b]
	}
	if diff := cmp.Diff(stats(ref), stats(got.Stdout)); diff != "" {
		t.Errorf("statistics (-want +got):\n%s", diff)
	}
	var doc struct {
		Meta struct {
			Command []string
			Slurm   struct{ Release, Cluster string }
		}
		Errors, Warnings []any
	}
	if err := json.Unmarshal([]byte(got.Stdout), &doc); err != nil {
		t.Fatalf("sdiag --json printed no JSON: %v\n%s", err, got.Stdout)
	}
	if doc.Meta.Slurm.Release != "25.11.0" || doc.Meta.Slurm.Cluster != "rccluster" || !cmp.Equal(doc.Meta.Command, []string{"sdiag"}) {
		t.Errorf("meta %+v", doc.Meta)
	}
	y := run(t, reference(t), "--yaml")
	if y.Code != 0 || !strings.Contains(y.Stdout, "\n  jobs_submitted: 19\n") {
		t.Errorf("sdiag --yaml: %+v", y)
	}
}

// When slurm.conf lists several controllers, Slurm's sections are
// followed by Drover's replication section, from the controllers list;
// with one (or no slurm.conf) the list is not asked for, and from a
// controller without it nothing is added.
func TestReplication(t *testing.T) {
	plain := run(t, reference(t))
	replicated := &droverapi.Controllers{Replicated: true, Controllers: []droverapi.Controller{
		{Name: "ctl0", Mode: "primary", Responding: true, Leader: true, LatencyMicros: 412,
			Replica: &droverapi.Replica{State: "Leader", Leader: "ctl0", Term: 2, LastIndex: 57, CommitIndex: 57, AppliedIndex: 57, LastContactSeconds: -1, Voters: 3}},
		{Name: "ctl1", Mode: "backup1", Responding: true, Self: true, LatencyMicros: 3,
			Replica: &droverapi.Replica{State: "Follower", Leader: "ctl0", Term: 2, LastIndex: 57, CommitIndex: 57, AppliedIndex: 56, LastContactSeconds: 0.021, Voters: 3}},
		{Name: "ctl2", Mode: "backup2", Error: "dial tcp 10.0.0.3:6817: connect: connection refused", LatencyMicros: 800},
	}}
	const section = "\nReplication:\n" +
		"\tThis controller: ctl1 (backup1)\n" +
		"\tRole:            Follower\n" +
		"\tLeader:          ctl0\n" +
		"\tTerm:            2\n" +
		"\tLast index:      57\n" +
		"\tCommit index:    57\n" +
		"\tApplied index:   56\n" +
		"\tLast contact:    0.021 seconds ago\n" +
		"\tVoters:          3\n" +
		"\tControllers:\n" +
		"\t\tctl0 (primary)  UP    Leader    term:2 commit:57 applied:57 latency:412us\n" +
		"\t\tctl1 (backup1)  UP    Follower  term:2 commit:57 applied:56 latency:3us\n" +
		"\t\tctl2 (backup2)  DOWN  (dial tcp 10.0.0.3:6817: connect: connection refused)\n"
	dir := t.TempDir()
	three, one := filepath.Join(dir, "three.conf"), filepath.Join(dir, "one.conf")
	for path, text := range map[string]string{
		three: "ClusterName=rc\nSlurmctldHost=ctl0\nSlurmctldHost=ctl1\nSlurmctldHost=ctl2\n",
		one:   "ClusterName=rc\nSlurmctldHost=ctl0\n",
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, tc := range map[string]struct {
		conf string
		list *droverapi.Controllers
		err  error
		want string
		// asks is whether the controllers list is asked for.
		asks bool
	}{
		"replicated": {conf: three, list: replicated, want: plain.Stdout + section, asks: true},
		"single":     {conf: one, want: plain.Stdout},
		"no conf":    {conf: filepath.Join(dir, "none.conf"), want: plain.Stdout},
		"no list":    {conf: three, err: &connect.HTTPError{Status: 404, Body: "Unable to find requested URL endpoint."}, want: plain.Stdout, asks: true},
	} {
		t.Run(name, func(t *testing.T) {
			h := clitest.New(t, reference(t), time.Unix(1795964462, 0))
			h.Vars["SLURM_CONF"] = tc.conf
			asked := false
			defer func() {
				if asked != tc.asks {
					t.Errorf("controllers asked: %v, want %v", asked, tc.asks)
				}
			}()
			h.Env.Call = func(_ context.Context, method, path string, _, out any) error {
				asked = true
				if method != "GET" || path != droverapi.ControllersPath {
					t.Errorf("unexpected request %s %s", method, path)
				}
				if tc.err != nil {
					return tc.err
				}
				data, _ := json.Marshal(tc.list)
				return json.Unmarshal(data, out)
			}
			got := h.Run(Run, "sdiag", "")
			if diff := cmp.Diff(clitest.Run{Stdout: tc.want}, got); diff != "" {
				t.Errorf("sdiag (-want +got):\n%s", diff)
			}
		})
	}
}
