package gres

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// meshGPUs is the NVML mock overlay's machine: two quads with two links
// between GPUs of a quad and one to the peer in the other quad, GPUs 0-3
// near CPUs 0-7 and 4-7 near 8-15.
func meshGPUs(links bool) []TopoGPU {
	var out []TopoGPU
	for i := range 8 {
		g := TopoGPU{Index: i, Cores: "0-7"}
		if i >= 4 {
			g.Cores = "8-15"
		}
		if links {
			g.Links = make([]int, 8)
			for j := range 8 {
				switch {
				case j == i:
					g.Links[j] = -1
				case j/4 == i/4:
					g.Links[j] = 2
				case j == i^4:
					g.Links[j] = 1
				}
			}
		}
		out = append(out, g)
	}
	return out
}

func TestPickGPUs(t *testing.T) {
	flat := []TopoGPU{{Index: 0}, {Index: 1}, {Index: 2}, {Index: 3}}
	tests := []struct {
		name string
		gpus []TopoGPU
		free []int
		want int
		out  []int
	}{
		{"no topology: first free", flat, []int{1, 2, 3}, 2, []int{1, 2}},
		{"all of them", meshGPUs(true), []int{0, 4}, 2, []int{0, 4}},
		{"none", meshGPUs(true), []int{0, 4}, 0, []int{}},
		{"too few", meshGPUs(true), []int{0, 4}, 3, nil},
		{"a quad pair over a cross link", meshGPUs(true), []int{0, 4, 5}, 2, []int{4, 5}},
		{"a quad's three", meshGPUs(true), []int{0, 1, 4, 5, 6}, 3, []int{4, 5, 6}},
		{"lowest pair when all free", meshGPUs(true), []int{0, 1, 2, 3, 4, 5, 6, 7}, 2, []int{0, 1}},
		{"a whole quad", meshGPUs(true), []int{1, 2, 3, 4, 5, 6, 7}, 4, []int{4, 5, 6, 7}},
		{"NUMA only: one node", meshGPUs(false), []int{2, 3, 4, 5, 6}, 3, []int{4, 5, 6}},
		{"NUMA only: fewest nodes", meshGPUs(false), []int{3, 4, 5}, 2, []int{4, 5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			free := append([]int(nil), tt.free...)
			got := PickGPUs(tt.gpus, free, tt.want)
			if diff := cmp.Diff(tt.out, got); diff != "" {
				t.Errorf("PickGPUs(%v, %d) (-want +got):\n%s", tt.free, tt.want, diff)
			}
			if !cmp.Equal(free, tt.free) {
				t.Errorf("free changed to %v", free)
			}
		})
	}
}

func TestParseLinks(t *testing.T) {
	if diff := cmp.Diff([]int{-1, 2, 0, 1}, ParseLinks("-1, 2,0,1")); diff != "" {
		t.Error(diff)
	}
	for _, bad := range []string{"", "x", "-2,1", "1,,2"} {
		if got := ParseLinks(bad); got != nil {
			t.Errorf("ParseLinks(%q) = %v, want nil", bad, got)
		}
	}
}

func BenchmarkPickGPUs(b *testing.B) {
	gpus := meshGPUs(true)
	for _, want := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("8-GPU mesh/%d of 7 free", want), func(b *testing.B) {
			free := []int{0, 1, 2, 4, 5, 6, 7}
			for b.Loop() {
				PickGPUs(gpus, free, want)
			}
		})
	}
}
