// Package topology reads topology.conf and tells how nodes group: the
// switches of a tree (topology/tree: SwitchName= with Nodes= or
// Switches=) or the blocks of topology/block (BlockName= with Nodes=,
// BlockSizes=). The scheduler places a multi-node job on as few leaf
// switches or blocks as it can.
package topology

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/droverhq/drover/internal/hostlist"
)

// Switch is one switch of a tree. A leaf switch has Nodes; an upper one
// has Children (switch names).
type Switch struct {
	Name     string
	Nodes    []string
	Children []string
	// LinkSpeed is informational (scontrol show topology), 1 by default.
	LinkSpeed int
}

// Topology is a parsed topology.conf.
type Topology struct {
	// Switches in file order (tree); Blocks in file order (block). One
	// of the two is empty.
	Switches []Switch
	Blocks   []Switch
	// BlockSizes are the block sizes jobs are aligned to (block), as
	// given; levels are what they enforce.
	BlockSizes []int
	levels     []BlockLevel

	leafOf   map[string]int    // node -> index into Leaves
	leaves   []*Switch         // leaf switches, or blocks
	parentOf map[string]string // switch -> parent switch
}

// Load reads a topology.conf file.
func Load(path string) (*Topology, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Parse reads topology.conf text: one record a line, Key=value words,
// '#' comments.
func Parse(r io.Reader) (*Topology, error) {
	t := &Topology{}
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if i := strings.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		words := strings.Fields(text)
		if len(words) == 0 {
			continue
		}
		kv := map[string]string{}
		var order []string
		for _, w := range words {
			k, v, ok := strings.Cut(w, "=")
			if !ok {
				return nil, fmt.Errorf("line %d: %q is not Key=value", line, w)
			}
			k = strings.ToLower(k)
			if _, dup := kv[k]; dup {
				return nil, fmt.Errorf("line %d: %s given twice", line, k)
			}
			kv[k] = v
			order = append(order, k)
		}
		nodes := func() ([]string, error) {
			if kv["nodes"] == "" {
				return nil, nil
			}
			n, err := hostlist.Expand(kv["nodes"])
			if err != nil {
				return nil, fmt.Errorf("line %d: Nodes=%s: %w", line, kv["nodes"], err)
			}
			return n, nil
		}
		switch order[0] {
		case "switchname":
			sw := Switch{Name: kv["switchname"], LinkSpeed: 1}
			var err error
			if v, ok := kv["linkspeed"]; ok {
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("line %d: LinkSpeed=%s: not a number", line, v)
				}
				sw.LinkSpeed = n
			}
			if sw.Nodes, err = nodes(); err != nil {
				return nil, err
			}
			if s := kv["switches"]; s != "" {
				if sw.Children, err = hostlist.Expand(s); err != nil {
					return nil, fmt.Errorf("line %d: Switches=%s: %w", line, s, err)
				}
			}
			if sw.Name == "" || (len(sw.Nodes) == 0) == (len(sw.Children) == 0) {
				return nil, fmt.Errorf("line %d: a switch needs a name and either Nodes= or Switches=", line)
			}
			for k := range kv {
				if k != "switchname" && k != "nodes" && k != "switches" && k != "linkspeed" {
					return nil, fmt.Errorf("line %d: unknown key %s", line, k)
				}
			}
			t.Switches = append(t.Switches, sw)
		case "blockname":
			b := Switch{Name: kv["blockname"]}
			var err error
			if b.Nodes, err = nodes(); err != nil {
				return nil, err
			}
			if b.Name == "" || len(b.Nodes) == 0 {
				return nil, fmt.Errorf("line %d: a block needs a name and Nodes=", line)
			}
			for k := range kv {
				if k != "blockname" && k != "nodes" {
					return nil, fmt.Errorf("line %d: unknown key %s", line, k)
				}
			}
			t.Blocks = append(t.Blocks, b)
		case "blocksizes":
			for _, s := range strings.Split(kv["blocksizes"], ",") {
				n, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil || n <= 0 {
					return nil, fmt.Errorf("line %d: BlockSizes=%s: not a list of sizes", line, kv["blocksizes"])
				}
				t.BlockSizes = append(t.BlockSizes, n)
			}
		default:
			return nil, fmt.Errorf("line %d: unknown record %s", line, order[0])
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.Switches) > 0 && len(t.Blocks) > 0 {
		return nil, fmt.Errorf("both switches and blocks: one topology at a time")
	}
	if err := t.blockLevels(); err != nil {
		return nil, err
	}
	return t, t.index()
}

// blockLevels checks BlockSizes and derives the levels of aggregated
// blocks jobs are held to. The first size is the planning base block
// size, which every block must reach; each later one is the base times a
// power of two, larger than the one before. Without BlockSizes the base is
// the smallest block and every power of two up to the number of blocks is
// a level, as slurmctld does.
func (t *Topology) blockLevels() error {
	if len(t.BlockSizes) > 0 && len(t.Blocks) == 0 {
		return fmt.Errorf("BlockSizes without blocks")
	}
	if len(t.Blocks) == 0 {
		return nil
	}
	sizes := t.BlockSizes
	if len(sizes) == 0 {
		base := len(t.Blocks[0].Nodes)
		for _, b := range t.Blocks {
			base = min(base, len(b.Nodes))
		}
		for m := 1; m <= len(t.Blocks); m *= 2 {
			sizes = append(sizes, base*m)
		}
	}
	base := sizes[0]
	for i, n := range sizes {
		if i > 0 && (n <= sizes[i-1] || n%base != 0 || (n/base)&(n/base-1) != 0) {
			return fmt.Errorf("BlockSizes=%s: each size must be the first times a power of two, larger than the one before", joinInts(t.BlockSizes))
		}
		t.levels = append(t.levels, BlockLevel{Nodes: n, Blocks: n / base})
	}
	for _, b := range t.Blocks {
		if len(b.Nodes) < base {
			return fmt.Errorf("block %s has %d nodes, fewer than the base block size %d", b.Name, len(b.Nodes), base)
		}
	}
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// BlockLevel is one enforced size of topology/block: aggregates of Blocks
// consecutive blocks (aligned: blocks 0..Blocks-1, then the next Blocks),
// which a job of up to Nodes nodes must stay within.
type BlockLevel struct {
	Nodes  int
	Blocks int
}

// Levels are the enforced block levels, smallest first (none without
// blocks).
func (t *Topology) Levels() []BlockLevel {
	if t == nil {
		return nil
	}
	return t.levels
}

// LevelFor returns the smallest level a job on nodes nodes must stay
// within, or false when it is larger than every level (it may then span
// aggregates of the largest).
func (t *Topology) LevelFor(nodes int) (BlockLevel, bool) {
	for _, l := range t.Levels() {
		if nodes <= l.Nodes {
			return l, true
		}
	}
	return BlockLevel{}, false
}

// index links nodes to their leaves and switches to their parents.
func (t *Topology) index() error {
	t.leafOf, t.parentOf = map[string]int{}, map[string]string{}
	groups := t.Switches
	if len(t.Blocks) > 0 {
		groups = t.Blocks
	}
	names := map[string]bool{}
	for i := range groups {
		g := &groups[i]
		if names[g.Name] {
			return fmt.Errorf("%s defined twice", g.Name)
		}
		names[g.Name] = true
		if len(g.Nodes) == 0 {
			continue
		}
		for _, n := range g.Nodes {
			if _, dup := t.leafOf[n]; dup {
				return fmt.Errorf("node %s in two leaves", n)
			}
			t.leafOf[n] = len(t.leaves)
		}
		t.leaves = append(t.leaves, g)
	}
	for _, g := range t.Switches {
		for _, c := range g.Children {
			if !names[c] {
				return fmt.Errorf("switch %s: unknown switch %s", g.Name, c)
			}
			if p, dup := t.parentOf[c]; dup && p != g.Name {
				return fmt.Errorf("switch %s under both %s and %s", c, p, g.Name)
			}
			t.parentOf[c] = g.Name
		}
	}
	// A cycle would make the path to the root endless.
	for _, g := range t.Switches {
		seen := map[string]bool{}
		for s := g.Name; s != ""; s = t.parentOf[s] {
			if seen[s] {
				return fmt.Errorf("switch %s is its own ancestor", s)
			}
			seen[s] = true
		}
	}
	return nil
}

// Leaf returns the index of a node's leaf switch or block (-1: none).
func (t *Topology) Leaf(node string) int {
	if t == nil {
		return -1
	}
	if i, ok := t.leafOf[node]; ok {
		return i
	}
	return -1
}

// Path returns a leaf's switches from the leaf up to the root.
func (t *Topology) Path(leaf int) []string {
	var out []string
	for s := t.leaves[leaf].Name; s != ""; s = t.parentOf[s] {
		out = append(out, s)
	}
	return out
}

// Leaves is the number of leaves.
func (t *Topology) Leaves() int { return len(t.leaves) }

// Addr is the node's SLURM_TOPOLOGY_ADDR: its switches from the root down
// and the node ("s2.s0.n1"); empty for a node outside the topology (or
// without one), which is then just itself. Blocks are not switches: a
// block topology gives no address.
func (t *Topology) Addr(node string) string {
	leaf := t.Leaf(node)
	if leaf < 0 || len(t.Blocks) > 0 {
		return ""
	}
	p := t.Path(leaf)
	slices.Reverse(p)
	return strings.Join(append(p, node), ".")
}

// Pattern is SLURM_TOPOLOGY_ADDR_PATTERN for Addr: "switch" for each
// switch, then "node" ("switch.switch.node"); empty where Addr is.
func (t *Topology) Pattern(node string) string {
	addr := t.Addr(node)
	if addr == "" {
		return ""
	}
	n := strings.Count(addr, ".")
	return strings.Repeat("switch.", n) + "node"
}

// Describe lists the switches or blocks as scontrol show topology does:
// one line each, a switch with its level (leaves 0), link speed, every
// node below it and its child switches.
func (t *Topology) Describe(only string, compress func([]string) string) []string {
	var out []string
	for i, b := range t.Blocks {
		if only == "" || only == b.Name {
			out = append(out, fmt.Sprintf("BlockName=%s BlockIndex=%d Nodes=%s BlockSize=%d", b.Name, i, compress(b.Nodes), len(b.Nodes)))
		}
	}
	byName := map[string]*Switch{}
	for i := range t.Switches {
		byName[t.Switches[i].Name] = &t.Switches[i]
	}
	var level func(s *Switch) int
	var nodes func(s *Switch) []string
	level = func(s *Switch) int {
		l := 0
		for _, c := range s.Children {
			l = max(l, level(byName[c])+1)
		}
		return l
	}
	nodes = func(s *Switch) []string {
		out := slices.Clone(s.Nodes)
		for _, c := range s.Children {
			out = append(out, nodes(byName[c])...)
		}
		return out
	}
	for i := range t.Switches {
		s := &t.Switches[i]
		if only != "" && only != s.Name {
			continue
		}
		line := fmt.Sprintf("SwitchName=%s Level=%d LinkSpeed=%d Nodes=%s", s.Name, level(s), s.LinkSpeed, compress(nodes(s)))
		if len(s.Children) > 0 {
			line += " Switches=" + compress(s.Children)
		}
		out = append(out, line)
	}
	return out
}

// MostNodesFor is the most nodes a job on nodes nodes can ever be given,
// counting only the nodes keep accepts; a job on more can never run. With
// switches that is the largest tree (topology/tree never spans two);
// with blocks, the largest aggregate of the level the job must stay
// within. It is -1 where there is no such bound (no topology, or a job
// larger than every block level).
func (t *Topology) MostNodesFor(nodes int, keep func(string) bool) int {
	if t == nil {
		return -1
	}
	if len(t.Blocks) > 0 {
		level, within := t.LevelFor(nodes)
		if !within {
			return -1
		}
		best := 0
		for first := 0; first < len(t.Blocks); first += level.Blocks {
			n := 0
			for _, b := range t.Blocks[first:min(first+level.Blocks, len(t.Blocks))] {
				for _, node := range b.Nodes {
					if keep(node) {
						n++
					}
				}
			}
			best = max(best, n)
		}
		return best
	}
	if len(t.Switches) == 0 {
		return -1
	}
	best := 0
	perRoot := map[string]int{}
	for node, leaf := range t.leafOf {
		if !keep(node) {
			continue
		}
		path := t.Path(leaf)
		perRoot[path[len(path)-1]]++
	}
	for _, n := range perRoot {
		best = max(best, n)
	}
	return best
}
