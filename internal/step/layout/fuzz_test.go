package layout

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/slurmerr"
)

// FuzzParseDistribution checks that ParseDistribution never panics, that a
// refusal is srun's *Error, and that an accepted value is valid for
// slurmctld and parses back from its own SLURM_DISTRIBUTION spelling.
func FuzzParseDistribution(f *testing.F) {
	for _, s := range []string{
		"block", "cyclic", "arbitrary", "hostfile", "plane=4", "plane", "*:*:*", "block:fcyclic:*",
		"cyclic,nopack", "pack", "nopack,pack", "block::cyclic", ",pack", "plane=2,pack", "Plane= +3",
		"block:block:block:block", "", ":", "block,", "planex=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDistribution(s)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || se.Code != 0 || len(se.Lines) == 0 ||
				se.Lines[len(se.Lines)-1] != "Invalid --distribution specification" {
				t.Fatalf("ParseDistribution(%q): unexpected error %#v", s, err)
			}
			return
		}
		if !d.valid() {
			t.Fatalf("ParseDistribution(%q) = %+v, not valid", s, d)
		}
		spelled := d.String()
		if d.Kind == PlaneDist {
			spelled = fmt.Sprintf("plane=%d", d.PlaneSize)
		}
		back, err := ParseDistribution(spelled)
		if err != nil {
			t.Fatalf("ParseDistribution(%q) from %q: %v", spelled, s, err)
		}
		if back.String() != d.String() || back.Kind != d.Kind || back.PlaneSize != d.PlaneSize || back.Pack != d.Pack {
			t.Fatalf("%q -> %+v (%q) -> %+v", s, d, spelled, back)
		}
	})
}

// FuzzParseTasksPerNode checks the round trip with TasksPerNodeString both
// ways: parsed counts write and parse back to the same counts, and any
// counts do too.
func FuzzParseTasksPerNode(f *testing.F) {
	for _, s := range []string{"5,1(x3)", "3,1", "2(x4)", "0", "1,1,1", "", "1(x0)", "7(x65536)", "1,(x2)", "01(x2)"} {
		f.Add(s, []byte{5, 1, 1, 1})
	}
	f.Fuzz(func(t *testing.T, s string, raw []byte) {
		if counts, err := ParseTasksPerNode(s); err == nil {
			if len(counts) == 0 || len(counts) > MaxCompressedNodes {
				t.Fatalf("ParseTasksPerNode(%q) gave %d counts", s, len(counts))
			}
			str := TasksPerNodeString(counts)
			back, err := ParseTasksPerNode(str)
			if err != nil {
				t.Fatalf("ParseTasksPerNode(%q) (from %q): %v", str, s, err)
			}
			if !slices.Equal(counts, back) {
				t.Fatalf("round trip of %q via %q gave %v", s, str, back)
			}
		}
		if len(raw) == 0 {
			return
		}
		counts := make([]int, len(raw))
		for i, b := range raw {
			counts[i] = int(b % 4) // small values make runs likely
		}
		str := TasksPerNodeString(counts)
		back, err := ParseTasksPerNode(str)
		if err != nil {
			t.Fatalf("ParseTasksPerNode(%q): %v", str, err)
		}
		if !slices.Equal(counts, back) {
			t.Fatalf("round trip via %q gave %v, want %v", str, back, counts)
		}
	})
}

// byteReader hands out fuzz bytes, zero once they run out.
type byteReader []byte

func (b *byteReader) next() int {
	if len(*b) == 0 {
		return 0
	}
	v := (*b)[0]
	*b = (*b)[1:]
	return int(v)
}

// decodePlace builds a small allocation and an srun request from data.
// Out-of-range values (negative counts, -r -2) come only from the byte
// 255, so most inputs reach the layout.
func decodePlace(data []byte) ([]NodeAvail, Request) {
	b := byteReader(data)
	// small is v%mod, or bad for the byte 255.
	small := func(mod, bad int) int {
		v := b.next()
		if v == 255 {
			return bad
		}
		return v % mod
	}
	// often0 is 0 for most bytes, else 1..mod-1.
	often0 := func(mod, bad int) int {
		v := small(2*mod, bad)
		if v < mod {
			return 0
		}
		return v - mod
	}
	nodes := b.next()%6 + 1
	avail := make([]NodeAvail, nodes)
	for i := range avail {
		avail[i] = NodeAvail{Name: fmt.Sprintf("n%d", i+1), CPUs: b.next() % 10, Busy: often0(4, 0)}
	}
	name := func() string { return fmt.Sprintf("n%d", b.next()%8+1) } // n7, n8 are outside
	names := func() []string {
		var ns []string
		for range b.next()%4 + 1 {
			ns = append(ns, name())
		}
		return ns
	}
	r := Request{
		MinNodes:     small(7, -1),
		MaxNodes:     often0(7, -1),
		Tasks:        small(40, -1),
		TasksPerNode: often0(4, -1),
		CPUsPerTask:  small(4, -1),
		Relative:     often0(5, -2) - 1,
	}
	flags := b.next()
	r.Overcommit = flags&1 != 0
	r.Exact = flags&2 != 0
	r.NodesFromEnv = flags&4 != 0
	r.TasksFromEnv = flags&8 != 0
	switch b.next() % 9 {
	case 0, 8:
	case 1:
		r.Dist = Distribution{Kind: BlockDist, Set: true}
	case 2:
		r.Dist = Distribution{Kind: CyclicDist, Set: true}
	case 3:
		r.Dist = Distribution{Kind: PlaneDist, PlaneSize: small(5, 0), Set: true}
	case 4:
		r.Dist = Distribution{Kind: ArbitraryDist, Set: true}
		r.Arbitrary = names()
	case 5:
		r.Dist = Distribution{Kind: BlockDist, Pack: Pack, Set: true}
	case 6:
		r.Dist = Distribution{Pack: Pack}
	case 7:
		r.Dist = Distribution{Kind: CyclicDist, Socket: "*", Core: "block", Pack: NoPack, Set: true}
	}
	if flags&(16|32) == 16|32 {
		r.NodeList = names()
	}
	if flags&(64|128) == 64|128 {
		r.Exclude = names()
	}
	return avail, r
}

// knownCodes are the numbers Place may refuse with.
var knownCodes = []slurmerr.Code{
	slurmerr.NoError, slurmerr.Unspecified, slurmerr.RequestedNodeConfigUnavailable,
	slurmerr.TooManyRequestedCPUs, slurmerr.NodesBusy, slurmerr.InvalidNodeCount,
	slurmerr.InvalidTaskMemory, CodeBadDist, CodeBadTaskCount,
}

// FuzzPlace lays out random small requests over random small allocations:
// no panic; a refusal is an *Error with a known code; a layout places every
// task exactly once on distinct nodes of the allocation, in allocation
// order, and keeps each node within its CPUs where Slurm does (--exact
// checks every node; otherwise block and cyclic layouts without
// --ntasks-per-node stay within the CPUs slurmctld counted).
func FuzzPlace(f *testing.F) {
	f.Add([]byte{4, 5, 0, 1, 0, 1, 0, 1, 0, 3, 0, 10, 0, 0, 0, 2, 0, 0})
	f.Add([]byte{3, 2, 0, 2, 0, 2, 0, 0, 0, 5, 0, 0, 2, 2, 2, 4})
	f.Add([]byte{4, 8, 0, 8, 0, 8, 0, 8, 0, 5, 5, 22, 0, 0, 0, 0, 3, 4})
	f.Add([]byte{4, 4, 2, 8, 0, 8, 1, 1, 0, 0, 0, 3, 0, 1, 1, 2, 1})
	f.Add([]byte{3, 2, 0, 2, 0, 2, 0, 0, 0, 0, 0, 0, 1, 0, 4, 4, 0, 1, 0, 2})
	f.Add([]byte{4, 1, 0, 1, 0, 1, 0, 1, 0, 3, 0, 0, 0, 0, 4, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		avail, r := decodePlace(data)
		lay, err := Place(avail, r)
		if err != nil {
			var se *Error
			if !errors.As(err, &se) || len(se.Lines) == 0 || !slices.Contains(knownCodes, se.Code) {
				t.Fatalf("Place(%+v, %+v): unexpected error %#v", avail, r, err)
			}
			return
		}
		where := func() string { return fmt.Sprintf("Place(%+v, %+v) = %+v", avail, r, lay) }
		if len(lay.Nodes) == 0 || len(lay.Nodes) != len(lay.Tasks) {
			t.Fatalf("%s: %d nodes, %d task lists", where(), len(lay.Nodes), len(lay.Tasks))
		}
		pos := -1
		for _, n := range lay.Nodes {
			i := slices.IndexFunc(avail, func(a NodeAvail) bool { return a.Name == n })
			if i <= pos {
				t.Fatalf("%s: node %s outside the allocation, repeated or out of order", where(), n)
			}
			pos = i
		}
		total := lay.NumTasks()
		seen := make([]bool, total)
		for i, ids := range lay.Tasks {
			if !slices.IsSorted(ids) {
				t.Fatalf("%s: tasks of %s not ascending", where(), lay.Nodes[i])
			}
			for j, id := range ids {
				if id < 0 || id >= total || seen[id] {
					t.Fatalf("%s: task %d misplaced or repeated", where(), id)
				}
				seen[id] = true
				if n, l := lay.NodeOf(id); n != i || l != j {
					t.Fatalf("%s: NodeOf(%d) = %d, %d; want %d, %d", where(), id, n, l, i, j)
				}
			}
		}
		if r.Tasks > 0 && r.Dist.Kind != ArbitraryDist && total != r.Tasks {
			t.Fatalf("%s: %d tasks, asked for %d", where(), total, r.Tasks)
		}
		if back, err := ParseTasksPerNode(lay.TasksPerNode()); err != nil || !slices.Equal(back, lay.Counts()) {
			t.Fatalf("%s: TasksPerNode %q does not parse back: %v", where(), lay.TasksPerNode(), err)
		}
		exact := r.Exact || (r.CPUsPerTask > 0 && !r.Overcommit)
		for i, n := range lay.Nodes {
			a := avail[slices.IndexFunc(avail, func(a NodeAvail) bool { return a.Name == n })]
			tasks := len(lay.Tasks[i])
			switch {
			case r.Overcommit:
			case exact:
				if tasks*max(lay.CPUsPerTask, 1) > a.CPUs {
					t.Fatalf("%s: %d tasks × %d CPUs on %s with %d CPUs", where(), tasks, max(lay.CPUsPerTask, 1), n, a.CPUs)
				}
			case r.TasksPerNode == 0 && (lay.Dist.Kind == BlockDist || lay.Dist.Kind == CyclicDist):
				if tasks > a.CPUs {
					t.Fatalf("%s: %d tasks on %s with %d CPUs", where(), tasks, n, a.CPUs)
				}
			}
		}
		if !strings.HasPrefix(lay.Dist.String(), lay.Dist.Kind.String()) {
			t.Fatalf("%s: SLURM_DISTRIBUTION %q", where(), lay.Dist.String())
		}
	})
}
