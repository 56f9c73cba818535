package outpattern

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// batch128 is job 128 of the reference captures, seen from its batch step.
var batch128 = Values{
	JobID: 128, ArrayTaskID: NoArrayTask, StepID: BatchStep,
	NodeName: "rc1", User: "root", JobName: "running_job",
}

// array131 is the pending meta record of array job 131.
var array131 = Values{
	JobID: 131, ArrayJobID: 131, ArrayTaskID: NoArrayTask, StepID: BatchStep,
	NodeName: "rc1", User: "root", JobName: "array_job",
}

func TestExpand(t *testing.T) {
	task := Values{
		JobID: 149, ArrayJobID: 131, ArrayTaskID: 1, StepID: 0, NodeName: "rc1", NodeID: 2,
		TaskID: 7, User: "root", JobName: "array_job", RestartCount: 3, SLUID: "s1x2",
	}
	tests := map[string]struct {
		pattern string
		v       Values
		want    string
	}{
		"job id":                {pattern: "%j.out", v: batch128, want: "128.out"},
		"default":               {pattern: DefaultPattern, v: batch128, want: "slurm-128.out"},
		"array default":         {pattern: DefaultArrayPattern, v: task, want: "slurm-131_1.out"},
		"pending array meta":    {pattern: "%A_%a.out", v: array131, want: "131_4294967294.out"},
		"not an array":          {pattern: "%A_%a", v: batch128, want: "128_4294967294"},
		"modulo ten":            {pattern: "%b", v: Values{ArrayTaskID: 27}, want: "7"},
		"modulo ten of no task": {pattern: "%b", v: batch128, want: "4"},
		"jobid.stepid":          {pattern: "%J", v: task, want: "149.0"},
		"batch step":            {pattern: "%J-%s", v: batch128, want: "128-batch"},
		"extern step":           {pattern: "%J", v: Values{JobID: 5, StepID: ExternStep}, want: "5.-4"},
		"interactive step":      {pattern: "%s", v: Values{StepID: InteractiveStep}, want: "4294967290"},
		"everything":            {pattern: "%N-%n-%t-%u-%x-%r-%S", v: task, want: "rc1-2-7-root-array_job-3-s1x2"},
		"zero padding":          {pattern: "job%4j-%2t.out", v: task, want: "job0149-07.out"},
		"padding capped at ten": {pattern: "%99j|%010j|%123j", v: task, want: "0000000149|0000000149|0000000149"},
		"padding ignored":       {pattern: "%5N%5u%5x", v: task, want: "rc1rootarray_job"},
		"padded batch step":     {pattern: "%5s", v: batch128, want: "batch"},
		"percent":               {pattern: "100%%", v: task, want: "100%"},
		"percent before letter": {pattern: "%%j", v: task, want: "%j"},
		"unknown kept":          {pattern: "%q%5q%Z", v: task, want: "%q%5q%Z"},
		"padded percent kept":   {pattern: "%5%j", v: task, want: "%5%j"},
		"trailing percent":      {pattern: "out%", v: task, want: "out"},
		"trailing digits":       {pattern: "out%12", v: task, want: "out%12"},
		"backslash disables":    {pattern: `\%j.out`, v: task, want: "%j.out"},
		"backslash anywhere":    {pattern: `%j\.out`, v: task, want: "%j.out"},
		"double backslash":      {pattern: `a\\b`, v: task, want: "ab"},
		"srun keeps node parts": {pattern: "%j-%N-%n-%t-%u-%4t", v: Values{JobID: 9, Srun: true, NodeName: "x"}, want: "9-%N-%n-%t-%u-%4t"},
		"empty":                 {pattern: "", v: task, want: ""},
		"multibyte":             {pattern: "ö%ü%j", v: task, want: "ö%ü149"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Expand(tc.pattern, tc.v)); diff != "" {
				t.Errorf("Expand(%q) (-want +got):\n%s", tc.pattern, diff)
			}
		})
	}
}

// TestPath covers the StdOut= lines of the reference captures and the
// working-directory rules.
func TestPath(t *testing.T) {
	tests := map[string]struct {
		workdir string
		pattern string
		v       Values
		want    string
	}{
		"scontrol StdOut absolute": {workdir: "/home/alice/project", pattern: "/home/alice/project/%j.out", v: batch128, want: "/home/alice/project/128.out"},
		"stdout_expanded of array": {workdir: "/home/alice/project", pattern: "/home/alice/project/%A_%a.out", v: array131, want: "/home/alice/project/131_4294967294.out"},
		"relative":                 {workdir: "/home/alice/project", pattern: "slurm-%j.out", v: batch128, want: "/home/alice/project/slurm-128.out"},
		"workdir with slash":       {workdir: "/tmp/", pattern: "o", v: batch128, want: "/tmp/o"},
		"decided on the pattern":   {workdir: "/w", pattern: "%x", v: Values{JobName: "/abs"}, want: "/w//abs"},
		"backslash then slash":     {workdir: "/w", pattern: `\/x`, v: batch128, want: "/w//x"},
		"no workdir":               {workdir: "", pattern: "o", v: batch128, want: "o"},
		"srun adds nothing":        {workdir: "/w", pattern: "o", v: Values{Srun: true}, want: "o"},
		"empty pattern":            {workdir: "/w", pattern: "", v: batch128, want: ""},
		"dot dot kept":             {workdir: "/w/a", pattern: "../o", v: batch128, want: "/w/a/../o"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Path(tc.workdir, tc.pattern, tc.v)); diff != "" {
				t.Errorf("Path(%q, %q) (-want +got):\n%s", tc.workdir, tc.pattern, diff)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	tests := map[string]struct {
		workdir, expanded, want string
	}{
		"relative":     {workdir: "/home/alice/project", expanded: "slurm-128.out", want: "/home/alice/project/slurm-128.out"},
		"absolute":     {workdir: "/home/alice/project", expanded: "/tmp/o", want: "/tmp/o"},
		"slash ending": {workdir: "/tmp/", expanded: "o", want: "/tmp/o"},
		"no workdir":   {workdir: "", expanded: "o", want: "o"},
		"not cleaned":  {workdir: "/w/./a", expanded: "../o", want: "/w/./a/../o"},
		"empty":        {workdir: "/w", expanded: "", want: "/w/"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Resolve(tc.workdir, tc.expanded)); diff != "" {
				t.Errorf("Resolve(%q, %q) (-want +got):\n%s", tc.workdir, tc.expanded, diff)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	if diff := cmp.Diff([]string{"slurm-%j.out", "slurm-%A_%a.out"}, []string{Default(false), Default(true)}); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestPerTask(t *testing.T) {
	tests := map[string]struct {
		pattern string
		want    bool
	}{
		"job only":        {pattern: "%j.out", want: false},
		"node":            {pattern: "%N.out", want: true},
		"node id":         {pattern: "out.%n", want: true},
		"padded task":     {pattern: "out.%3t", want: true},
		"user":            {pattern: "%u", want: true},
		"escaped percent": {pattern: "%%t", want: false},
		"backslash":       {pattern: `\%t`, want: false},
		"after escape":    {pattern: "%%%t", want: true},
		"padded percent":  {pattern: "%5%t", want: false},
		"trailing":        {pattern: "%", want: false},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := PerTask(tc.pattern); got != tc.want {
				t.Errorf("PerTask(%q) = %v, want %v", tc.pattern, got, tc.want)
			}
		})
	}
}

// TestExpandVectors replays expand_stdio_fields answers recorded from
// Slurm.
func TestExpandVectors(t *testing.T) {
	raw, err := os.ReadFile("testdata/expand.json")
	if err != nil {
		t.Fatal(err)
	}
	var groups []struct {
		Values struct {
			ArrayJobID  uint32 `json:"array_job_id"`
			ArrayTaskID uint32 `json:"array_task_id"`
			Srun        bool   `json:"srun"`
			StepID      uint32 `json:"step_id"`
			WorkDir     string `json:"workdir"`
		} `json:"values"`
		Cases [][2]string `json:"cases"`
	}
	if err := json.Unmarshal(raw, &groups); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		v := Values{
			JobID: 131, ArrayJobID: g.Values.ArrayJobID, ArrayTaskID: g.Values.ArrayTaskID,
			StepID: g.Values.StepID, Srun: g.Values.Srun, NodeName: "rc1", NodeID: 3, TaskID: 5,
			User: "root", JobName: "myjob", RestartCount: 2, SLUID: "SLUID77",
		}
		for _, c := range g.Cases {
			if got := Path(g.Values.WorkDir, c[0], v); got != c[1] {
				t.Errorf("%+v: Path(%q) = %q, want %q", g.Values, c[0], got, c[1])
			}
		}
	}
}
