package sinfo

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/clitest"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// captureTime is when the CLI captures of cluster A were taken (sinfo -l
// prints it: "Sun Nov 29 15:01:01 2026").
var captureTime = time.Date(2026, 11, 29, 15, 1, 1, 0, time.UTC)

// fakeController answers from fixed partitions and nodes: the reference
// captures of real slurmrestd by default.
type fakeController struct {
	v0044.UnimplementedHandler
	t     testing.TB
	parts *v0044.V0044OpenapiPartitionResp
	nodes *v0044.V0044OpenapiNodesResp
	// nodesAnswer, when set, answers GET /nodes/ instead of nodes.
	nodesAnswer v0044.SlurmV0044GetNodesRes
	// nodeFlags records the flags of each GET /nodes/.
	nodeFlags []string
}

func newFake(t testing.TB) *fakeController {
	f := &fakeController{t: t, parts: &v0044.V0044OpenapiPartitionResp{}, nodes: &v0044.V0044OpenapiNodesResp{}}
	clitest.LoadReference(t, "partitions.json", f.parts)
	clitest.LoadReference(t, "nodes.json", f.nodes)
	return f
}

func (f *fakeController) SlurmV0044GetPartitions(context.Context, v0044.SlurmV0044GetPartitionsParams) (v0044.SlurmV0044GetPartitionsRes, error) {
	return f.parts, nil
}

func (f *fakeController) SlurmV0044GetNodes(_ context.Context, p v0044.SlurmV0044GetNodesParams) (v0044.SlurmV0044GetNodesRes, error) {
	f.nodeFlags = append(f.nodeFlags, string(p.Flags.Value))
	if f.nodesAnswer != nil {
		return f.nodesAnswer, nil
	}
	return f.nodes, nil
}

func (f *fakeController) SlurmV0044GetReservations(context.Context, v0044.SlurmV0044GetReservationsParams) (v0044.SlurmV0044GetReservationsRes, error) {
	var resp v0044.V0044OpenapiReservationResp
	clitest.LoadReference(f.t, "reservations.json", &resp)
	return &resp, nil
}

// harness starts a server for f with slurm.conf path conf as SLURM_CONF
// (cluster A's when empty).
func harness(t *testing.T, f *fakeController, conf string) *clitest.Harness {
	t.Helper()
	h := clitest.New(t, f, captureTime)
	if conf == "" {
		conf = filepath.Join(clitest.ReferenceDir(t), "conf", "slurm.conf.26.11")
	}
	h.Vars["SLURM_CONF"] = conf
	return h
}

func TestGolden(t *testing.T) {
	tests := []struct {
		name    string
		capture string
		args    []string
		fix     func(string) string
	}{
		{name: "default", capture: "sinfo_default"},
		{name: "node long", capture: "sinfo_N_l", args: []string{"-N", "-l"}},
		{name: "reasons", capture: "sinfo_R", args: []string{"-R"}},
		{name: "format", capture: "sinfo_o", args: []string{"-o", "%P %a %l %D %t %N"}},
		{name: "summarize", capture: "sinfo_s", args: []string{"-s"}},
		{name: "json", capture: "sinfo_json", args: []string{"--json"}},
		{
			// The captures come from the 25.11.7 tools; Drover reports
			// the release it follows.
			name: "version", capture: "version_sinfo", args: []string{"--version"},
			fix: func(s string) string { return strings.ReplaceAll(s, "25.11.7", clienv.SlurmVersion) },
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := harness(t, newFake(t), "")
			got := h.Run(Run, "sinfo", "", tc.args...)
			want := clitest.ReferenceRun(t, tc.capture)
			if tc.fix != nil {
				want.Stdout = tc.fix(want.Stdout)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("sinfo %s mismatch (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
		})
	}
}

// cluster builds a node list in the shape slurmrestd answers.
type nodeSpec struct {
	name   string
	states []v0044.V0044NodeStateItem
	alloc  int32
	cpus   int32
	mem    int64
	parts  []string
	reason string
	gres   string
}

func (s nodeSpec) node() v0044.V0044Node {
	cpus := s.cpus
	if cpus == 0 {
		cpus = 8
	}
	mem := s.mem
	if mem == 0 {
		mem = 16000
	}
	n := v0044.V0044Node{
		Name:          v0044.NewOptString(s.name),
		State:         s.states,
		Cpus:          v0044.NewOptInt32(cpus),
		AllocCpus:     v0044.NewOptInt32(s.alloc),
		Sockets:       v0044.NewOptInt32(1),
		Cores:         v0044.NewOptInt32(cpus),
		Threads:       v0044.NewOptInt32(1),
		RealMemory:    v0044.NewOptInt64(mem),
		TemporaryDisk: v0044.NewOptInt32(0),
		Weight:        v0044.NewOptInt32(1),
		Port:          v0044.NewOptInt32(6818),
		CPULoad:       v0044.NewOptInt32(0),
		Partitions:    s.parts,
		Reason:        v0044.NewOptString(s.reason),
		Gres:          v0044.NewOptString(s.gres),
		FreeMem: v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{
			Set: v0044.NewOptBool(true), Number: v0044.NewOptInt64(1000),
		}),
	}
	if s.reason != "" {
		n.ReasonSetByUser = v0044.NewOptString("root")
		n.ReasonChangedAt = v0044.NewOptV0044Uint64NoValStruct(v0044.V0044Uint64NoValStruct{
			Set: v0044.NewOptBool(true), Number: v0044.NewOptInt64(captureTime.Add(-time.Hour).Unix()),
		})
	}
	return n
}

func partitionSpec(name, nodes string, maxMinutes int32) v0044.V0044PartitionInfo {
	limit := v0044.V0044Uint32NoValStruct{Infinite: v0044.NewOptBool(true)}
	if maxMinutes > 0 {
		limit = v0044.V0044Uint32NoValStruct{Set: v0044.NewOptBool(true), Number: v0044.NewOptInt32(maxMinutes)}
	}
	return v0044.V0044PartitionInfo{
		Name:      v0044.NewOptString(name),
		Nodes:     v0044.NewOptV0044PartitionInfoNodes(v0044.V0044PartitionInfoNodes{Configured: v0044.NewOptString(nodes)}),
		Partition: v0044.NewOptV0044PartitionInfoPartition(v0044.V0044PartitionInfoPartition{State: []v0044.V0044PartitionInfoPartitionStateItem{"UP"}}),
		Maximums: v0044.NewOptV0044PartitionInfoMaximums(v0044.V0044PartitionInfoMaximums{
			Time:  v0044.NewOptV0044Uint32NoValStruct(limit),
			Nodes: v0044.NewOptV0044Uint32NoValStruct(v0044.V0044Uint32NoValStruct{Infinite: v0044.NewOptBool(true)}),
		}),
	}
}

// clusterB is a cluster like the reference's cluster B: partitions gpu
// (default, n[1-4]) and debug (n[1-2], 30 minutes), in mixed states.
func clusterB(t *testing.T) (*fakeController, string) {
	f := &fakeController{t: t, parts: &v0044.V0044OpenapiPartitionResp{}, nodes: &v0044.V0044OpenapiNodesResp{}}
	f.parts.Partitions = v0044.V0044PartitionInfoMsg{
		partitionSpec("gpu", "n[1-4]", 0),
		partitionSpec("debug", "n[1-2]", 30),
	}
	both := []string{"gpu", "debug"}
	f.nodes.Nodes = v0044.V0044Nodes{
		nodeSpec{name: "n1", states: []v0044.V0044NodeStateItem{"IDLE"}, parts: both, gres: "gpu:4"}.node(),
		nodeSpec{name: "n2", states: []v0044.V0044NodeStateItem{"MIXED"}, alloc: 4, parts: both, gres: "gpu:4"}.node(),
		nodeSpec{name: "n3", states: []v0044.V0044NodeStateItem{"IDLE", "DRAIN"}, parts: []string{"gpu"}, reason: "bad disk", gres: "gpu:4"}.node(),
		nodeSpec{name: "n4", states: []v0044.V0044NodeStateItem{"DOWN", "NOT_RESPONDING"}, parts: []string{"gpu"}, reason: "Not responding", gres: "gpu:4"}.node(),
	}
	conf := filepath.Join(t.TempDir(), "slurm.conf")
	data := "ClusterName=b\nSlurmctldHost=ctl0\nNodeName=n[1-4] CPUs=8\n" +
		"PartitionName=gpu Nodes=n[1-4] Default=YES\nPartitionName=debug Nodes=n[1-2] MaxTime=30\n"
	if err := os.WriteFile(conf, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return f, conf
}

func TestViews(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want clitest.Run
	}{
		{"default", nil, clitest.Run{Stdout: "" +
			"PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST\n" +
			"gpu*         up   infinite      1  down* n4\n" +
			"gpu*         up   infinite      1  drain n3\n" +
			"gpu*         up   infinite      1    mix n2\n" +
			"gpu*         up   infinite      1   idle n1\n" +
			"debug        up      30:00      1    mix n2\n" +
			"debug        up      30:00      1   idle n1\n"}},
		{"summarize", []string{"-s"}, clitest.Run{Stdout: "" +
			"PARTITION AVAIL  TIMELIMIT   NODES(A/I/O/T) NODELIST\n" +
			"gpu*         up   infinite          1/1/2/4 n[1-4]\n" +
			"debug        up      30:00          1/1/0/2 n[1-2]\n"}},
		{"node oriented", []string{"-N"}, clitest.Run{Stdout: "" +
			"NODELIST   NODES PARTITION STATE \n" +
			"n1             1      gpu* idle  \n" +
			"n1             1     debug idle  \n" +
			"n2             1      gpu* mix   \n" +
			"n2             1     debug mix   \n" +
			"n3             1      gpu* drain \n" +
			"n4             1      gpu* down* \n"}},
		{"partition filter", []string{"-p", "debug", "-h"}, clitest.Run{Stdout: "" +
			"debug        up      30:00      1    mix n2\n" +
			"debug        up      30:00      1   idle n1\n"}},
		{"state filter", []string{"-t", "idle", "-o", "%P %D %t %N"}, clitest.Run{Stdout: "" +
			"PARTITION NODES STATE NODELIST\n" +
			"gpu* 1 drain n3\n" +
			"gpu* 1 idle n1\n" +
			"debug 1 idle n1\n"}},
		// With ',' any state may match, so "~idle,~mix" keeps every node;
		// '+' asks for all of them (a drained node is idle too).
		{"negated states", []string{"-t", "~idle+~mix", "-N", "-h"}, clitest.Run{Stdout: "" +
			"n4             1      gpu* down* \n"}},
		{"negated states any", []string{"-t", "~idle,~mix", "-h", "-o", "%D"}, clitest.Run{Stdout: "4\n"}},
		{"drained and draining", []string{"--states=drained", "-h", "-o", "%N"}, clitest.Run{Stdout: "n3\n"}},
		{"dead", []string{"-d", "-h", "-o", "%N %T"}, clitest.Run{Stdout: "n4 down*\n"}},
		{"responding", []string{"-r", "-p", "gpu", "-h", "-o", "%D %t"}, clitest.Run{Stdout: "1 drain\n1 mix\n1 idle\n"}},
		{"nodes", []string{"-n", "n[2-3]", "-N", "-h", "-o", "%N %P"}, clitest.Run{Stdout: "n2 gpu*\nn2 debug\nn3 gpu*\n"}},
		{"reasons", []string{"-R"}, clitest.Run{Stdout: "" +
			"REASON               USER      TIMESTAMP           NODELIST\n" +
			"Not responding       root      2026-11-29T14:01:01 n4\n" +
			"bad disk             root      2026-11-29T14:01:01 n3\n"}},
		{"long format fields", []string{"-O", "NodeList:10,CPUsState:.15,Memory:8,Gres:10,StateComplete", "-N", "-p", "gpu"}, clitest.Run{Stdout: "" +
			"NODELIST    CPUS(A/I/O/T)MEMORY  GRES      STATECOMPLETE       \n" +
			"n1                0/8/0/816000   gpu:4     idle                \n" +
			"n2                4/4/0/816000   gpu:4     mixed               \n" +
			"n3                0/0/8/816000   gpu:4     idle+drain          \n" +
			"n4                0/0/8/816000   gpu:4     down+not_responding \n"}},
		{"exact and cpus", []string{"-e", "-o", "%R %c %D", "-p", "debug"}, clitest.Run{Stdout: "" +
			"PARTITION CPUS NODES\n" +
			"debug 8 2\n"}},
		{"sort by node list reversed", []string{"-N", "-h", "-S", "-N", "-p", "gpu", "-o", "%N"}, clitest.Run{Stdout: "n4\nn3\nn2\nn1\n"}},
		{"widths", []string{"-o", "%.3P|%4t|%2D|%10l"}, clitest.Run{Stdout: "" +
			"PAR|STAT|NO|TIMELIMIT \n" +
			"gp*|down|1 |infinite  \n" +
			"gp*|drai|1 |infinite  \n" +
			"gp*|mix |1 |infinite  \n" +
			"gp*|idle|1 |infinite  \n" +
			"deb|mix |1 |30:00     \n" +
			"deb|idle|1 |30:00     \n"}},
		{"prefix and invalid", []string{"-o", ">%Q<%P", "-h", "-p", "debug"}, clitest.Run{
			Stdout: ">%Q<debug\n",
			Stderr: "Invalid node format specification: Q\n",
		}},
		{"bad state", []string{"-t", "bogus"}, clitest.Run{Code: 1, Stderr: "" +
			"sinfo: error: Bad state string: \"bogus\"\n" +
			"sinfo: error: valid states: " + validStates + "\n"}},
		{"long and format", []string{"-l", "-o", "%P"}, clitest.Run{Code: 1,
			Stderr: "sinfo: fatal: Options -o(--format) and -l(--long) are mutually exclusive. Please remove one and retry.\n"}},
		{"all and partition", []string{"-a", "-p", "gpu"}, clitest.Run{Code: 1,
			Stderr: "sinfo: error: Conflicting options, -a and -p, specified. Please choose one or the other.\n"}},
		{"unknown option", []string{"--x"}, clitest.Run{Code: 1,
			Stderr: "sinfo: unrecognized option '--x'\nTry \"sinfo --help\" for more information\n"}},
		{"ambiguous option", []string{"--no"}, clitest.Run{Code: 1,
			Stderr: "sinfo: option '--no' is ambiguous; possibilities: '--nodes' '--noconvert' '--noheader'\nTry \"sinfo --help\" for more information\n"}},
		{"abbreviated option", []string{"--sum", "--noh", "-p", "debug"}, clitest.Run{Stdout: "debug        up      30:00          1/1/0/2 n[1-2]\n"}},
		{"bad nodes", []string{"-n", "n[1-"}, clitest.Run{Code: 1, Stderr: "sinfo: error: 'n[1-' invalid entry for --nodes\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, conf := clusterB(t)
			h := harness(t, f, conf)
			got := h.Run(Run, "sinfo", "", tc.args...)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("sinfo %s mismatch (-want +got):\n%s", strings.Join(tc.args, " "), diff)
			}
		})
	}
}

func TestReservations(t *testing.T) {
	h := harness(t, newFake(t), "")
	got := h.Run(Run, "sinfo", "", "-T")
	want := clitest.Run{Stdout: "" +
		"RESV_NAME     STATE           START_TIME             END_TIME     DURATION  NODELIST\n" +
		"cap_resv   INACTIVE  2026-11-30T15:00:47  2026-11-30T16:00:47     01:00:00  rc1\n"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sinfo -T (-want +got):\n%s", diff)
	}
}

func TestGresUsedAsksForDetails(t *testing.T) {
	f := newFake(t)
	h := harness(t, f, "")
	got := h.Run(Run, "sinfo", "", "-O", "GresUsed", "-h")
	if diff := cmp.Diff(clitest.Run{Stdout: "gpu:1               \n"}, got); diff != "" {
		t.Errorf("sinfo -O GresUsed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"DETAIL"}, f.nodeFlags); diff != "" {
		t.Errorf("node query flags (-want +got):\n%s", diff)
	}
}

// A failed node read is reported in Slurm's words whether the report
// reads the model (streamed) or prints the wire records (--json): the
// answer's first numbered error, "Unknown error N" for one without text,
// "Unspecified error" for a failure without any, nothing on stdout.
func TestNodeReadFailures(t *testing.T) {
	errs := func(es ...v0044.V0044OpenapiError) v0044.V0044OpenapiErrors { return es }
	numbered := func(n int32, text string) v0044.V0044OpenapiError {
		e := v0044.V0044OpenapiError{ErrorNumber: v0044.NewOptInt32(n)}
		if text != "" {
			e.Error = v0044.NewOptString(text)
		}
		return e
	}
	tests := []struct {
		name   string
		answer v0044.SlurmV0044GetNodesRes
		want   string
	}{
		{"error answer", &v0044.V0044OpenapiNodesRespStatusCode{StatusCode: 500, Response: v0044.V0044OpenapiNodesResp{Errors: errs(numbered(0, "ignored"), numbered(2009, "Invalid node name specified"))}}, "slurm_load_node: Invalid node name specified\n"},
		{"error without text", &v0044.V0044OpenapiNodesRespStatusCode{StatusCode: 500, Response: v0044.V0044OpenapiNodesResp{Errors: errs(numbered(2009, ""))}}, "slurm_load_node: Unknown error 2009\n"},
		{"failure without errors", &v0044.V0044OpenapiNodesRespStatusCode{StatusCode: 500}, "slurm_load_node: Unspecified error\n"},
		{"success with an error", &v0044.V0044OpenapiNodesResp{Errors: errs(numbered(1800, "Unable to contact slurm controller (connect failure)"))}, "slurm_load_node: Unable to contact slurm controller (connect failure)\n"},
	}
	for _, tc := range tests {
		for _, args := range [][]string{nil, {"--json"}} {
			t.Run(tc.name+strings.Join(args, " "), func(t *testing.T) {
				f := newFake(t)
				f.nodesAnswer = tc.answer
				got := harness(t, f, "").Run(Run, "sinfo", "", args...)
				if got.Code != 1 || got.Stdout != "" || got.Stderr != tc.want {
					t.Errorf("sinfo %v: exit %d, stdout %q, stderr %q; want 1, nothing, %q", args, got.Code, got.Stdout, got.Stderr, tc.want)
				}
			})
		}
	}
}
