package v0044_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/droverhq/drover/internal/controller"
)

// TestDynamicNodes: new/node makes dynamic nodes from a node line, which
// join the partitions taking ALL nodes and survive a restart; DELETE
// takes them away again. Each refusal is slurmctld's.
func TestDynamicNodes(t *testing.T) {
	r := newREST(t, func(cfg *controller.Config) {
		cfg.Partitions[0].AllNodes = true
		cfg.MaxNodeCount = 6
	})
	errNo := func(a answer) float64 {
		errs := asList(a.JSON(t)["errors"])
		if len(errs) == 0 {
			return 0
		}
		return path(errs[0], "error_number").(float64)
	}
	create := func(user, line string) answer {
		return r.do(http.MethodPost, v44+"/new/node/", user, []byte(`{"node_conf":"`+line+`"}`))
	}
	if a := create("nobody", "NodeName=d1 CPUs=4 State=FUTURE"); errNo(a) != 2010 {
		t.Errorf("create as nobody: HTTP %d %s", a.Status, a.Body)
	}
	if a := create("root", "NodeName=d1 CPUs=4"); errNo(a) != 2028 {
		t.Errorf("create without State=FUTURE: HTTP %d %s", a.Status, a.Body)
	}
	if a := create("root", "NodeName=d1 CPUs=lots State=FUTURE"); a.Status == 200 || errNo(a) != 1 {
		t.Errorf("create with a bad line: HTTP %d %s", a.Status, a.Body)
	}
	if a := create("root", "NodeName=d[1-2] CPUs=4 RealMemory=4000 Feature=dyn State=FUTURE"); a.Status != 200 || errNo(a) != 0 {
		t.Fatalf("create d[1-2]: HTTP %d %s", a.Status, a.Body)
	}
	if a := create("root", "NodeName=d2 CPUs=4 State=FUTURE"); errNo(a) != 2168 {
		t.Errorf("create d2 again: HTTP %d %s", a.Status, a.Body)
	}
	if a := create("root", "NodeName=d[3-4] CPUs=4 State=FUTURE"); errNo(a) != 2169 {
		t.Errorf("create past MaxNodeCount: HTTP %d %s", a.Status, a.Body)
	}
	nodes := func() map[string]string {
		a := r.do(http.MethodGet, v44+"/nodes/", "root", nil)
		out := map[string]string{}
		for _, n := range asList(a.JSON(t)["nodes"]) {
			out[path(n, "name").(string)] = path(n, "state").([]any)[0].(string)
		}
		return out
	}
	if got := nodes(); got["d1"] != "FUTURE" || got["d2"] != "FUTURE" || len(got) != 6 {
		t.Errorf("nodes after create: %v", got)
	}
	members := func(p string) []string {
		a := r.do(http.MethodGet, v44+"/partition/"+p, "root", nil)
		parts := asList(a.JSON(t)["partitions"])
		if len(parts) != 1 {
			t.Fatalf("partition %s: %s", p, a.Body)
		}
		return []string{path(parts[0], "nodes", "configured").(string)}
	}
	if got := members("gpu"); !slices.Equal(got, []string{"n[1-4],d[1-2]"}) {
		t.Errorf("partition gpu (Nodes=ALL): %v", got)
	}
	if got := members("debug"); !slices.Equal(got, []string{"n[1-2]"}) {
		t.Errorf("partition debug: %v", got)
	}

	if a := r.do(http.MethodDelete, v44+"/node/n1", "root", nil); errNo(a) != 2028 {
		t.Errorf("delete a slurm.conf node: HTTP %d %s", a.Status, a.Body)
	}
	if a := r.do(http.MethodDelete, v44+"/node/d1", "nobody", nil); errNo(a) != 2010 {
		t.Errorf("delete as nobody: HTTP %d %s", a.Status, a.Body)
	}
	if a := r.do(http.MethodDelete, v44+"/node/d1", "root", nil); a.Status != 200 || errNo(a) != 0 {
		t.Errorf("delete d1: HTTP %d %s", a.Status, a.Body)
	}
	if got := nodes(); len(got) != 5 || got["d1"] != "" {
		t.Errorf("nodes after delete: %v", got)
	}
	if a := r.do(http.MethodDelete, v44+"/node/d1", "root", nil); errNo(a) != 2018 {
		t.Errorf("delete an unknown node: HTTP %d %s", a.Status, a.Body)
	}

	// Restarted, the controller knows d2 from its state alone.
	r.c.Close()
	r.c.Open()
	var names []string
	for _, n := range r.c.Ctl.Nodes() {
		names = append(names, n.Node.Name)
	}
	if !slices.Equal(names, []string{"n1", "n2", "n3", "n4", "d2"}) {
		t.Errorf("after a restart: %v", names)
	}
}
