package layout

import (
	"fmt"
	"strings"
)

// alloc builds an allocation n1..nK with the given CPUs per node.
func alloc(cpus ...int) []NodeAvail {
	a := make([]NodeAvail, len(cpus))
	for i, c := range cpus {
		a[i] = NodeAvail{Name: fmt.Sprintf("n%d", i+1), CPUs: c}
	}
	return a
}

// busy marks node i (0-based) of a as having b CPUs held by another step,
// on top of its free CPUs.
func busy(a []NodeAvail, i, b int) []NodeAvail {
	a[i].Busy = b
	return a
}

// reqBuilder builds a Request the way srun's options read: req().N(2).n(4).
type reqBuilder struct{ r Request }

func req() *reqBuilder { return &reqBuilder{Request{Relative: -1}} }

func (b *reqBuilder) N(minMax ...int) *reqBuilder {
	b.r.MinNodes = minMax[0]
	if len(minMax) > 1 {
		b.r.MaxNodes = minMax[1]
	}
	return b
}
func (b *reqBuilder) n(tasks int) *reqBuilder       { b.r.Tasks = tasks; return b }
func (b *reqBuilder) c(cpt int) *reqBuilder         { b.r.CPUsPerTask = cpt; return b }
func (b *reqBuilder) perNode(tpn int) *reqBuilder   { b.r.TasksPerNode = tpn; return b }
func (b *reqBuilder) w(names ...string) *reqBuilder { b.r.NodeList = names; return b }
func (b *reqBuilder) x(names ...string) *reqBuilder { b.r.Exclude = names; return b }
func (b *reqBuilder) rel(n int) *reqBuilder         { b.r.Relative = n; return b }
func (b *reqBuilder) O() *reqBuilder                { b.r.Overcommit = true; return b }
func (b *reqBuilder) exact() *reqBuilder            { b.r.Exact = true; return b }
func (b *reqBuilder) envN() *reqBuilder             { b.r.NodesFromEnv = true; return b }
func (b *reqBuilder) envn() *reqBuilder             { b.r.TasksFromEnv = true; return b }

// m sets -m; it panics on a distribution ParseDistribution refuses.
func (b *reqBuilder) m(spec string) *reqBuilder {
	d, err := ParseDistribution(spec)
	if err != nil {
		panic(err)
	}
	b.r.Dist = d
	return b
}

// arb sets -m arbitrary with the node of each task.
func (b *reqBuilder) arb(names ...string) *reqBuilder {
	b.r.Dist = Distribution{Kind: ArbitraryDist, Set: true}
	b.r.Arbitrary = names
	return b
}

func (b *reqBuilder) Build() Request { return b.r }

// layoutOf writes a layout compactly for comparison:
// "n1:0,1 n2:2 n3:3".
func layoutOf(l Layout) string {
	parts := make([]string, len(l.Nodes))
	for i, n := range l.Nodes {
		ids := make([]string, len(l.Tasks[i]))
		for j, t := range l.Tasks[i] {
			ids[j] = fmt.Sprint(t)
		}
		parts[i] = n + ":" + strings.Join(ids, ",")
	}
	return strings.Join(parts, " ")
}
