package srun

import (
	"slices"
	"testing"

	"github.com/droverhq/drover/internal/cli/jobopts"
)

func TestParseHetGroup(t *testing.T) {
	tests := map[string]struct {
		in   string
		want []int
		bad  bool
	}{
		"one":          {in: "2", want: []int{2}},
		"list":         {in: "0,4", want: []int{0, 4}},
		"list, ranges": {in: "1,3-5", want: []int{1, 3, 4, 5}},
		"repeats once": {in: "1,1,0-1", want: []int{0, 1}},
		"empty":        {in: "", bad: true},
		"negative":     {in: "-1", bad: true},
		"backwards":    {in: "3-1", bad: true},
		"word":         {in: "a", bad: true},
		"too large":    {in: "0-100000", bad: true},
	}
	for name, tc := range tests {
		got, err := parseHetGroup(tc.in)
		if (err != nil) != tc.bad || !slices.Equal(got, tc.want) {
			t.Errorf("%s: parseHetGroup(%q) = %v, %v", name, tc.in, got, err)
		}
	}
}

func FuzzParseHetGroup(f *testing.F) {
	for _, s := range []string{"0", "1,3-5", "0-127", "", "-", "1-", ",", "9999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := parseHetGroup(s)
		if err != nil {
			return
		}
		if len(got) == 0 || !slices.IsSorted(got) || got[0] < 0 || got[len(got)-1] > 127 {
			t.Fatalf("parseHetGroup(%q) = %v", s, got)
		}
	})
}

// The parts of a command line: each ':' starts one, a part without a
// command takes the next one's, --het-group is read per part.
func TestSplitSegments(t *testing.T) {
	parse := func(args []string) (*jobopts.Options, []string, error) {
		p := jobopts.NewSrun(jobopts.Config{Prog: "srun"})
		ops, err := p.ParseArgs(args)
		return p.Options(), ops, err
	}
	segs, err := splitSegments([]string{"-n1", ":", "-n2", "--het-group=1", "hostname", "-s", ":", "-n3", "date"}, parse)
	if err != nil {
		t.Fatal(err)
	}
	want := []segment{
		{options: []string{"-n1"}, argv: []string{"hostname", "-s"}},
		{options: []string{"-n2", "--het-group=1"}, argv: []string{"hostname", "-s"}, groups: []int{1}},
		{options: []string{"-n3"}, argv: []string{"date"}},
	}
	if len(segs) != len(want) {
		t.Fatalf("%d parts, want %d: %+v", len(segs), len(want), segs)
	}
	for i := range want {
		if !slices.Equal(segs[i].options, want[i].options) || !slices.Equal(segs[i].argv, want[i].argv) || !slices.Equal(segs[i].groups, want[i].groups) {
			t.Errorf("part %d: %+v, want %+v", i, segs[i], want[i])
		}
	}
}

func TestHetComponents(t *testing.T) {
	one := []segment{{groups: []int{0, 2}}}
	if groups, _, err := hetComponents(one, 3); err != nil || !slices.Equal(groups, []int{0, 2}) {
		t.Errorf("--het-group=0,2 in 3 components: %v, %v", groups, err)
	}
	if _, _, err := hetComponents([]segment{{}, {}, {}}, 2); err == nil ||
		err.Error() != "Attempt to run a job step with het group value of 2, but the job allocation has maximum value of 1" {
		t.Errorf("three parts in two components: %v", err)
	}
	if _, _, err := hetComponents([]segment{{groups: []int{1}}, {}}, 2); err == nil {
		t.Errorf("two parts on component 1: no error")
	}
}

// A step in component k reads k's variables under their plain names;
// a plain one another component has and k has not is dropped.
func TestComponentEnv(t *testing.T) {
	own := jobopts.NewEnviron([]string{
		"SLURM_JOB_ID=10", "SLURM_NTASKS=2", "SLURM_MEM_PER_CPU=100", "HOME=/h",
		"SLURM_JOB_ID_HET_GROUP_0=10", "SLURM_JOB_ID_HET_GROUP_1=11", "SLURM_NTASKS_HET_GROUP_0=2", "SLURM_NTASKS_HET_GROUP_1=3",
		"SLURM_MEM_PER_CPU_HET_GROUP_0=100", "SLURM_MEM_PER_NODE_HET_GROUP_1=200", "SLURM_JOB_NUM_NODES_HET_GROUP_1=2",
		"SLURM_JOB_ID_HET_GROUP_11=99",
	})
	e := componentEnv(own, 1)
	for k, want := range map[string]string{"SLURM_JOB_ID": "11", "SLURM_JOBID": "11", "SLURM_NTASKS": "3", "SLURM_NPROCS": "3",
		"SLURM_MEM_PER_NODE": "200", "SLURM_NNODES": "2", "HOME": "/h"} {
		if v, _ := e.Lookup(k); v != want {
			t.Errorf("%s=%q, want %q", k, v, want)
		}
	}
	if v, ok := e.Lookup("SLURM_MEM_PER_CPU"); ok {
		t.Errorf("SLURM_MEM_PER_CPU=%s kept for a component with --mem", v)
	}
}
