package topology

import (
	"fmt"
	"strings"
	"testing"
)

const tree = `# two leaf switches under a spine
SwitchName=s0 Nodes=n[1-4]
SwitchName=s1 Nodes=n[5-8] LinkSpeed=100
SwitchName=spine Switches=s[0-1]
`

func TestTree(t *testing.T) {
	top, err := Parse(strings.NewReader(tree))
	if err != nil {
		t.Fatal(err)
	}
	if top.Leaves() != 2 || top.Leaf("n3") != 0 || top.Leaf("n5") != 1 || top.Leaf("n9") != -1 {
		t.Errorf("leaves %d, n3 %d n5 %d n9 %d", top.Leaves(), top.Leaf("n3"), top.Leaf("n5"), top.Leaf("n9"))
	}
	if got := strings.Join(top.Path(1), ","); got != "s1,spine" {
		t.Errorf("path of s1: %s", got)
	}
	if got, pat := top.Addr("n6"), top.Pattern("n6"); got != "spine.s1.n6" || pat != "switch.switch.node" {
		t.Errorf("addr %s pattern %s", got, pat)
	}
	if got := top.Addr("n9"); got != "" {
		t.Errorf("addr of a node outside: %q", got)
	}
	var none *Topology
	if none.Leaf("n1") != -1 || none.MostNodesFor(2, func(string) bool { return true }) != -1 {
		t.Errorf("nil topology has leaves or trees")
	}
	if got := top.MostNodesFor(3, func(n string) bool { return n != "n8" }); got != 7 {
		t.Errorf("largest tree %d, want 7", got)
	}
	two, _ := Parse(strings.NewReader("SwitchName=a Nodes=n[1-2]\nSwitchName=b Nodes=n[3-5]\n"))
	if got := two.MostNodesFor(2, func(string) bool { return true }); got != 3 {
		t.Errorf("two trees: largest %d, want 3", got)
	}
}

func TestBlocks(t *testing.T) {
	top, err := Parse(strings.NewReader("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-8]\nBlockSizes=4,8\n"))
	if err != nil {
		t.Fatal(err)
	}
	if top.Leaves() != 2 || top.Path(top.Leaf("n7"))[0] != "b2" || len(top.BlockSizes) != 2 {
		t.Errorf("blocks: %+v", top)
	}
	if got := fmt.Sprint(top.Levels()); got != "[{4 1} {8 2}]" {
		t.Errorf("levels %s", got)
	}
	all := func(string) bool { return true }
	if a, b, c := top.MostNodesFor(3, all), top.MostNodesFor(6, all), top.MostNodesFor(9, all); a != 4 || b != 8 || c != -1 {
		t.Errorf("most nodes for 3, 6, 9: %d %d %d", a, b, c)
	}
	// Without BlockSizes the base is the smallest block and every power
	// of two up to the number of blocks is a level.
	def, err := Parse(strings.NewReader("BlockName=b1 Nodes=n[1-4]\nBlockName=b2 Nodes=n[5-7]\nBlockName=b3 Nodes=n[8-10]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(def.Levels()); got != "[{3 1} {6 2}]" {
		t.Errorf("default levels %s", got)
	}
	if got := def.MostNodesFor(5, func(n string) bool { return n != "n1" }); got != 6 {
		t.Errorf("most nodes for 5 without n1: %d, want 6 (b1+b2)", got)
	}
}

func TestParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"SwitchName=s0\n":                                    "line 1: a switch needs a name and either Nodes= or Switches=",
		"SwitchName=s0 Nodes=n1 Switches=s1\n":               "line 1: a switch needs a name and either Nodes= or Switches=",
		"SwitchName=s0 Nodes=n[1-\n":                         "line 1: Nodes=n[1-: ",
		"SwitchName=s0 Nodes=n1\nSwitchName=s1 Nodes=n1\n":   "node n1 in two leaves",
		"SwitchName=s0 Switches=s9\n":                        "switch s0: unknown switch s9",
		"SwitchName=a Switches=b\nSwitchName=b Switches=a\n": "switch a is its own ancestor",
		"BlockSizes=4,x\n":                                   "line 1: BlockSizes=4,x: not a list of sizes",
		"Foo=1\n":                                            "line 1: unknown record foo",
		"SwitchName=s0 Nodes=n1 Speed=3\n":                   "line 1: unknown key speed",
		"SwitchName=s0 Nodes=n1\nBlockName=b Nodes=n2\n":     "both switches and blocks: one topology at a time",
		"SwitchName s0\n":                                    `line 1: "SwitchName" is not Key=value`,
		"BlockSizes=4\n":                                     "BlockSizes without blocks",
		"BlockName=b Nodes=n[1-4]\nBlockSizes=4,12\n":        "BlockSizes=4,12: each size must be the first times a power of two",
		"BlockName=b Nodes=n[1-4]\nBlockSizes=4,8,8\n":       "BlockSizes=4,8,8: each size must be the first times a power of two",
		"BlockName=b Nodes=n[1-3]\nBlockSizes=4\n":           "block b has 3 nodes, fewer than the base block size 4",
	} {
		_, err := Parse(strings.NewReader(in))
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %q", in, err, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(tree)
	f.Add("BlockName=b1 Nodes=n[1-4]\nBlockSizes=4\n")
	f.Add("SwitchName=a Switches=b\nSwitchName=b Nodes=x[0-3]\n")
	f.Fuzz(func(t *testing.T, in string) {
		top, err := Parse(strings.NewReader(in))
		if err != nil {
			return
		}
		for i := 0; i < top.Leaves(); i++ {
			if len(top.Path(i)) == 0 {
				t.Fatalf("leaf %d has no path", i)
			}
		}
	})
}
