package devcluster

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func confFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "slurm.conf")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfPorts(t *testing.T) {
	tests := map[string]struct {
		conf      string
		wantCtl   int
		wantNodes []int
	}{
		"written by drover dev": {
			conf:      "ClusterName=dev\nSlurmctldPort=40000\nNodeName=n1 NodeAddr=127.0.0.1 Port=40001 CPUs=8\nNodeName=n2 NodeAddr=127.0.0.1 Port=40002 CPUs=8\n",
			wantCtl:   40000,
			wantNodes: []int{40001, 40002},
		},
		"no ports":   {conf: "ClusterName=dev\n"},
		"bad values": {conf: "SlurmctldPort=abc\nNodeName=n1 Port=-3\nNodeName=n2 Port=x\n"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctl, nodes := confPorts(confFile(t, tc.conf))
			if diff := cmp.Diff(tc.wantNodes, nodes); diff != "" || ctl != tc.wantCtl {
				t.Errorf("ctl %d, want %d; nodes (-want +got):\n%s", ctl, tc.wantCtl, diff)
			}
		})
	}
	if ctl, nodes := confPorts(filepath.Join(t.TempDir(), "missing")); ctl != 0 || nodes != nil {
		t.Errorf("missing file: %d %v", ctl, nodes)
	}
}

func TestPortsKeepsWhatItCan(t *testing.T) {
	conf := confFile(t, "SlurmctldPort=40000\nNodeName=n1 Port=40001\nNodeName=n2 Port=40002\n")
	tests := map[string]struct {
		nodes int
		// wantPrefix are the node ports kept from the configuration.
		wantPrefix []int
	}{
		"same count": {nodes: 2, wantPrefix: []int{40001, 40002}},
		"fewer":      {nodes: 1, wantPrefix: []int{40001}},
		"more":       {nodes: 4, wantPrefix: []int{40001, 40002}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctl, nodes, err := ports(conf, tc.nodes)
			if err != nil {
				t.Fatal(err)
			}
			if ctl != 40000 || len(nodes) != tc.nodes {
				t.Fatalf("ctl %d, %d node ports, want 40000 and %d", ctl, len(nodes), tc.nodes)
			}
			if diff := cmp.Diff(tc.wantPrefix, nodes[:len(tc.wantPrefix)]); diff != "" {
				t.Errorf("kept ports (-want +got):\n%s", diff)
			}
			seen := map[int]bool{ctl: true}
			for _, p := range nodes {
				if seen[p] || p <= 0 {
					t.Errorf("port %d repeated or invalid in %v", p, nodes)
				}
				seen[p] = true
			}
		})
	}
	ctl, nodes, err := ports(filepath.Join(t.TempDir(), "none"), 3)
	if err != nil || ctl == 0 || len(nodes) != 3 {
		t.Errorf("fresh ports: %d %v %v", ctl, nodes, err)
	}
}

func TestEnvLinesLeavesAnExistingConfiguration(t *testing.T) {
	dir := t.TempDir()
	installs := 0
	install := func(bin string) error {
		installs++
		return os.WriteFile(filepath.Join(bin, "sbatch"), nil, 0o755)
	}
	o := Options{StateDir: dir, Nodes: 2, InstallShims: install}
	first, err := EnvLines(&o)
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "etc", "slurm.conf")
	before, err := os.ReadFile(conf)
	if err != nil {
		t.Fatalf("EnvLines on a fresh folder wrote no configuration: %v", err)
	}
	if !strings.HasPrefix(first, "export PATH="+filepath.Join(dir, "bin")+":$PATH\nexport SLURM_CONF="+conf+"\nexport DROVER_REST_URL=http://127.0.0.1:") {
		t.Errorf("lines %q", first)
	}

	// Other options, same folder: the configuration stays as it is.
	o2 := Options{StateDir: dir, Nodes: 5, CPUs: 2, InstallShims: install}
	second, err := EnvLines(&o2)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(conf)
	if second != first || string(after) != string(before) || installs != 1 {
		t.Errorf("second EnvLines: %q (want %q), configuration changed %v, %d installs", second, first, string(after) != string(before), installs)
	}
	// Missing commands are installed again.
	if err := os.Remove(filepath.Join(dir, "bin", "sbatch")); err != nil {
		t.Fatal(err)
	}
	if _, err := EnvLines(&o2); err != nil || installs != 2 {
		t.Errorf("EnvLines without commands: %v, %d installs", err, installs)
	}
}

func TestLockRefusesASecondCluster(t *testing.T) {
	dir := t.TempDir()
	f, err := lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock(dir); err == nil || !strings.Contains(err.Error(), "another drover dev is running") {
		t.Errorf("second lock: %v", err)
	}
	f.Close()
	g, err := lock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	g.Close()
}

// FuzzParsePorts reads arbitrary configurations: no panic, and only
// positive ports come back.
func FuzzParsePorts(f *testing.F) {
	f.Add("SlurmctldPort=40000\nNodeName=n1 NodeAddr=127.0.0.1 Port=40001\n")
	f.Add("SlurmctldPort=-1\nNodeName=n1 Port=0 Port=7\n")
	f.Add("NodeName=\nSlurmctldPort=\n")
	f.Fuzz(func(t *testing.T, conf string) {
		ctl, nodes := parsePorts([]byte(conf))
		if ctl < 0 {
			t.Errorf("controller port %d", ctl)
		}
		for _, p := range nodes {
			if p <= 0 {
				t.Errorf("node port %d", p)
			}
		}
	})
}

func TestClusterNameKeepsClustersApart(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home folder")
	}
	if got := clusterName(filepath.Join(home, ".drover", "dev")); got != "dev" {
		t.Errorf("default folder: %q, want dev", got)
	}
	a, b := clusterName("/tmp/a/dev"), clusterName("/tmp/b/dev")
	if a == b || a == "dev" || !strings.HasPrefix(a, "dev-") || len(a) != len("dev-")+8 {
		t.Errorf("names %q and %q, want two distinct dev-<8 hex>", a, b)
	}
	if clusterName("/tmp/a/dev") != a {
		t.Errorf("name not stable")
	}
}
