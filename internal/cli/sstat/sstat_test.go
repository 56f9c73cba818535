package sstat

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	stepproto "github.com/droverhq/drover/internal/step/proto"
)

// captured is real sstat's line for a step (testdata/real-22.05): the
// figures it printed, set as the step's aggregates.
func captured() stepStat {
	s := stepStat{id: "2.0", nodes: []string{"n1", "n2"}, ntasks: 4}
	set := func(k metric, maxV, minV, tot float64, maxNode, minNode string, maxTask, minTask uint32) {
		s.m[k] = agg{max: maxV, min: minV, tot: tot, maxNode: maxNode, minNode: minNode, maxTask: maxTask, minTask: minTask, seen: true}
	}
	set(mCPU, 26, 9, 54, "n2", "n1", 3, 1)
	set(mEnergy, 0, 0, 0, "n1", "n1", 0, 0)
	set(mDiskRead, 1685835, 1685835, 6743340, "n1", "n1", 0, 0)
	set(mMem, 66142208, 65945600, 264335360, "n2", "n1", 3, 1)
	set(mPages, 3, 0, 4, "n2", "n1", 3, 1)
	set(mVMem, 146305024, 146305024, 277594112, "n1", "n1", 0, 0)
	set(mDiskWrite, 1694, 1694, 6776, "n1", "n1", 0, 0)
	return s
}

func TestLineMatchesRealSstat(t *testing.T) {
	data, err := os.ReadFile("testdata/real-22.05/noconvert_P.out")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	names, want := strings.Split(lines[0], "|"), strings.Split(lines[1], "|")
	s := captured()
	var got []string
	for i, n := range names {
		got = append(got, fields().byName[strings.ToLower(n)].cell(&s, format{noConvert: true}))
		if n == "AveCPUFreq" {
			want[i] = "0" // no CPU frequency is read here
		}
		if n == "MinCPU" {
			want[i] = "00:00:09"
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("line (-real +ours):\n%s", d)
	}
}

func TestConvertedUnits(t *testing.T) {
	s := captured()
	for name, want := range map[string]string{
		"MaxVMSize": "142876K", "AveVMSize": "67772K", "MaxRSS": "64592K", "AveRSS": "64535K",
		"MaxDiskRead": "1685835", "AvePages": "1", "NTasks": "4",
		"TRESUsageInMax": "cpu=00:00:26,energy=0,fs/disk=1685835,mem=64592K,pages=3,vmem=142876K",
	} {
		if got := fields().byName[strings.ToLower(name)].cell(&s, format{}); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for bytes, want := range map[float64]string{2 << 20: "2M", 3 << 30: "3G", 1536 << 10: "1536K", 0: "0K"} {
		if got := (format{}).mem(bytes); got != want {
			t.Errorf("mem(%v) = %q, want %q", bytes, got, want)
		}
	}
}

// TestAggregate folds nodes' answers: largest and smallest with where,
// sums, averages over tasks.
func TestAggregate(t *testing.T) {
	st := stepproto.StepStat{JobID: 7, StepID: 1}
	nodes := []stepproto.NodeStat{
		{Node: "a1", Tasks: []stepproto.TaskStat{
			{Task: 0, Pids: []int{10}, UserCPU: 2 * time.Second, RSS: 4 << 20},
			{Task: 1, Pids: []int{11, 12}, UserCPU: time.Second, SystemCPU: time.Second, RSS: 8 << 20},
		}},
		{Node: "a2", Tasks: []stepproto.TaskStat{{Task: 2, Pids: []int{20}, SystemCPU: 500 * time.Millisecond, RSS: 2 << 20, DiskWrite: 9}}},
	}
	s := newStepStat(&st, nodes)
	got := map[string]string{}
	for _, n := range []string{"JobID", "NTasks", "Nodelist", "Pids", "MaxRSS", "MaxRSSNode", "MaxRSSTask", "AveRSS", "MinCPU", "MinCPUNode", "MinCPUTask", "MaxDiskWriteNode", "ReqCPUFreq"} {
		got[n] = fields().byName[strings.ToLower(n)].cell(&s, format{})
	}
	want := map[string]string{
		"JobID": "7.1", "NTasks": "3", "Nodelist": "a[1-2]", "Pids": "10,11,12,20",
		"MaxRSS": "8M", "MaxRSSNode": "a1", "MaxRSSTask": "1", "AveRSS": "4779K",
		"MinCPU": "00:00:00", "MinCPUNode": "a2", "MinCPUTask": "2", "MaxDiskWriteNode": "a2", "ReqCPUFreq": "Unknown",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("cells (-want +got):\n%s", d)
	}
}

func TestParseSelector(t *testing.T) {
	for in, want := range map[string]selector{"5": {job: 5}, "5.0": {job: 5, step: "0"}, "5.batch": {job: 5, step: "batch"}, "5.extern": {job: 5, step: "extern"}} {
		got, err := parseSelector(in)
		if err != nil || got != want {
			t.Errorf("parseSelector(%q) = %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "abc", "0", "5.", "5.x", "-1", "5.0.1"} {
		if _, err := parseSelector(in); err == nil {
			t.Errorf("parseSelector(%q) succeeded", in)
		}
	}
}

func TestHelpFormatMatchesReal(t *testing.T) {
	data, err := os.ReadFile("testdata/real-22.05/helpformat.out")
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(strings.Fields(string(data)), fields().order); d != "" {
		t.Fatalf("-e (-real +ours):\n%s", d)
	}
}

func FuzzParseSelector(f *testing.F) {
	for _, s := range []string{"5", "5.batch", "12.3", "x.y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if sel, err := parseSelector(s); err == nil && sel.job == 0 {
			t.Fatalf("%q: job 0", s)
		}
	})
}

func FuzzParseFormat(f *testing.F) {
	for _, s := range []string{defaultFormat, "JobID%3,MaxRSS", "x%", "%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		parseFormat(s)
	})
}

// TestGPUMeasures: a step whose GPUs were measured shows gres/gpumem and
// gres/gpuutil in its TRES strings, in Slurm's order.
func TestGPUMeasures(t *testing.T) {
	st := stepproto.StepStat{JobID: 7, StepID: 0}
	nodes := []stepproto.NodeStat{{Node: "g1", Tasks: []stepproto.TaskStat{
		{Task: 0, GPUs: true, GPUMem: 2 << 30, GPUUtil: 200, RSS: 1 << 20},
		{Task: 1, GPUs: true, GPUMem: 1 << 30, GPUUtil: 100, RSS: 1 << 20},
	}}}
	s := newStepStat(&st, nodes)
	if got, want := fields().byName["tresusageinmax"].cell(&s, format{}), "cpu=00:00:00,energy=0,fs/disk=0,gres/gpumem=2G,gres/gpuutil=200,mem=1M,pages=0,vmem=0K"; got != want {
		t.Errorf("TRESUsageInMax = %q, want %q", got, want)
	}
	if got, want := fields().byName["tresusageinmintask"].cell(&s, format{}), "cpu=00:00:00,fs/disk=0,gres/gpumem=1,gres/gpuutil=1,mem=0,pages=0,vmem=0"; got != want {
		t.Errorf("TRESUsageInMinTask = %q, want %q", got, want)
	}
}
