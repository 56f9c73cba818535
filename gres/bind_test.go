package gres

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestParseGPUBind(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want GPUBind
	}{
		{"closest", GPUBind{Mode: BindClosest}},
		{"verbose,closest", GPUBind{Mode: BindClosest, Verbose: true}},
		{"NONE", GPUBind{Mode: BindNone}},
		{"map_gpu:0,1*2,3", GPUBind{Mode: BindMap, List: []BindEntry{{0, 1}, {1, 2}, {3, 1}}}},
		{"map:2", GPUBind{Mode: BindMap, List: []BindEntry{{2, 1}}}},
		{"mask_gpu:0x3,C", GPUBind{Mode: BindMask, List: []BindEntry{{3, 1}, {12, 1}}}},
		{"per_task:2", GPUBind{Mode: BindPerTask, N: 2}},
		{"single:4", GPUBind{Mode: BindSingle, N: 4}},
		{"map_gpu:1*0", GPUBind{Mode: BindMap, List: []BindEntry{{1, 1}}}},
	} {
		got, err := ParseGPUBind(tc.in)
		tc.want.Text = tc.in
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("ParseGPUBind(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"nearest", "map_gpu:", "map_gpu:a", "map_gpu:-1", "mask_gpu:0xZ", "per_task:x", "single:", "verbose,", "map_gpu:1*x", "map_gpu:1,,2"} {
		if _, err := ParseGPUBind(bad); err == nil || err.Error() != bad {
			t.Errorf("ParseGPUBind(%q) = %v, want an error naming the value", bad, err)
		}
	}
}

// A node of 8 GPUs: 0-3 close to CPUs 0-15, 4-7 to CPUs 16-31. Each task
// runs on 4 CPUs of its own (task i on 4i..4i+3).
func dgx(alloc []int) BindNode {
	return BindNode{
		Alloc:    alloc,
		Size:     8,
		TaskCPUs: func(i int) []int { return []int{4 * i, 4*i + 1, 4*i + 2, 4*i + 3} },
		GPUCores: func(g int) []int {
			lo := 0
			if g >= 4 {
				lo = 16
			}
			cores := make([]int, 16)
			for k := range cores {
				cores[k] = lo + k
			}
			return cores
		},
	}
}

func TestGPUBindTask(t *testing.T) {
	all := []int{0, 1, 2, 3, 4, 5, 6, 7}
	for _, tc := range []struct {
		bind  string
		node  BindNode
		tasks int
		want  string // each task's GPUs, ";"-separated
		warn  int    // a task that gets the fallback warning, or -1
	}{
		{"", dgx(all), 2, "0,1,2,3,4,5,6,7;0,1,2,3,4,5,6,7", -1},
		{"none", dgx([]int{2, 5}), 2, "2,5;2,5", -1},
		{"map_gpu:3,1*2", dgx(all), 5, "3;1;1;3;1", -1},
		// A mapped GPU the step does not hold: the first it holds.
		{"map_gpu:6", dgx([]int{2, 5}), 1, "2", 0},
		{"map_gpu:9", dgx(all), 1, "0", 0},
		{"mask_gpu:0x3,0xC", dgx(all), 3, "0,1;2,3;0,1", -1},
		// Tasks 0-3 run on CPUs 0-15, tasks 4-7 on 16-31.
		{"closest", dgx(all), 8, "0,1,2,3;0,1,2,3;0,1,2,3;0,1,2,3;4,5,6,7;4,5,6,7;4,5,6,7;4,5,6,7", -1},
		{"closest", dgx([]int{0, 7}), 5, "0;0;0;0;7", -1},
		// Close GPUs first, then any: task 0 takes two near it, task 4
		// the near ones left, the rest what remains.
		{"per_task:2", dgx(all), 5, "0,1;2,3;4,5;6,7;0", 4},
		{"per_task:1", dgx(all), 5, "0;1;2;3;4", -1},
		{"single:2", dgx(all), 8, "0;0;1;1;4;4;5;5", -1},
		{"single:1", dgx([]int{3}), 2, "3;3", -1},
	} {
		b, err := ParseGPUBind(tc.bind)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		warned := -1
		for i := range tc.tasks {
			ids, warn := b.Task(tc.node, i)
			if warn != "" {
				warned = i
				if !strings.Contains(warn, "Binding to the first device in the allocation instead") || !strings.Contains(warn, fmt.Sprintf("for task %d", i)) {
					t.Errorf("%s task %d: warning %q", tc.bind, i, warn)
				}
			}
			got = append(got, joinInts(ids))
		}
		if g := strings.Join(got, ";"); g != tc.want || warned != tc.warn {
			t.Errorf("--gpu-bind=%s on %v: tasks get %q (warning for task %d), want %q (%d)", tc.bind, tc.node.Alloc, g, warned, tc.want, tc.warn)
		}
	}
}

// Whatever the request, a task only ever gets GPUs of the step, and at
// least one when the step has any.
func TestGPUBindStaysInAllocation(t *testing.T) {
	for _, bind := range []string{"closest", "map_gpu:0,7,3*2", "mask_gpu:0xF0,0x1", "per_task:3", "single:3", "none", ""} {
		b, _ := ParseGPUBind(bind)
		for _, alloc := range [][]int{{1}, {0, 5}, {2, 3, 6}} {
			for i := range 6 {
				ids, _ := b.Task(dgx(alloc), i)
				if len(ids) == 0 || !isSubset(ids, alloc) {
					t.Errorf("--gpu-bind=%s, step GPUs %v: task %d gets %v", bind, alloc, i, ids)
				}
			}
		}
	}
}

func isSubset(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

func TestHexMask(t *testing.T) {
	for ids, want := range map[string]string{"": "0x0", "0": "0x1", "0,2": "0x5", "4": "0x10", "0,1,2,3,4,5,6,7": "0xFF", "11": "0x800"} {
		var in []int
		if ids != "" {
			for _, s := range strings.Split(ids, ",") {
				var n int
				fmt.Sscan(s, &n)
				in = append(in, n)
			}
		}
		if got := HexMask(in); got != want {
			t.Errorf("HexMask(%v) = %s, want %s", in, got, want)
		}
	}
}

func joinInts(ids []int) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = fmt.Sprint(id)
	}
	return strings.Join(s, ",")
}
