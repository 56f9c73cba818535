package e2e

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/go-faster/yaml"
)

// TestScontrolShowDocuments: scontrol show job|node|partition|reservation
// with --json or --yaml, before or after the subcommand, prints the
// documents slurmrestd answers (the jobs squeue --json prints), and
// squeue and sinfo write theirs as YAML too.
func TestScontrolShowDocuments(t *testing.T) {
	t.Parallel()
	c := NewCluster(t, ClusterOptions{Nodes: 2})
	id := c.Submit("", "-H", "-J", "docjob", "--wrap", "true")
	var show, queue struct {
		Jobs []map[string]any `json:"jobs"`
		Meta struct {
			Client map[string]any `json:"client"`
		} `json:"meta"`
		Errors []any `json:"errors"`
	}
	if err := json.Unmarshal([]byte(c.MustRun("", "scontrol", "show", "job", id, "--json")), &show); err != nil {
		t.Fatalf("scontrol show job --json: %v", err)
	}
	if err := json.Unmarshal([]byte(c.MustRun("", "squeue", "--json", "-j", id)), &queue); err != nil {
		t.Fatalf("squeue --json: %v", err)
	}
	if len(show.Jobs) != 1 || show.Jobs[0]["name"] != "docjob" || show.Errors == nil {
		t.Fatalf("scontrol show job %s --json: %+v", id, show)
	}
	if !reflect.DeepEqual(show.Jobs, queue.Jobs) {
		t.Errorf("scontrol's job differs from squeue's:\n%v\n%v", show.Jobs[0], queue.Jobs[0])
	}
	var y struct {
		Jobs []map[string]any `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(c.MustRun("", "scontrol", "--yaml", "show", "job", id)), &y); err != nil || len(y.Jobs) != 1 || y.Jobs[0]["name"] != "docjob" {
		t.Errorf("scontrol --yaml show job: %v %+v", err, y)
	}
	if err := yaml.Unmarshal([]byte(c.MustRun("", "squeue", "--yaml", "-j", id)), &y); err != nil || len(y.Jobs) != 1 {
		t.Errorf("squeue --yaml: %v %+v", err, y)
	}
	var nodes struct {
		Nodes []struct {
			Name string `json:"name"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(c.MustRun("", "scontrol", "--json", "show", "node", "n2")), &nodes); err != nil || len(nodes.Nodes) != 1 || nodes.Nodes[0].Name != "n2" {
		t.Errorf("scontrol --json show node n2: %v %+v", err, nodes)
	}
	var parts struct {
		Partitions []struct {
			Name string `json:"name"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(c.MustRun("", "scontrol", "show", "partition", "--json")), &parts); err != nil || len(parts.Partitions) == 0 {
		t.Errorf("scontrol show partition --json: %v %+v", err, parts)
	}
	var resvs struct {
		Reservations []any `json:"reservations"`
	}
	if err := json.Unmarshal([]byte(c.MustRun("", "scontrol", "show", "reservation", "--json")), &resvs); err != nil || resvs.Reservations == nil {
		t.Errorf("scontrol show reservation --json: %v %+v", err, resvs)
	}
	var sinfo struct {
		Sinfo []any `yaml:"sinfo"`
	}
	if err := yaml.Unmarshal([]byte(c.MustRun("", "sinfo", "--yaml")), &sinfo); err != nil || len(sinfo.Sinfo) == 0 {
		t.Errorf("sinfo --yaml: %v %+v", err, sinfo)
	}
	if r := c.Run("", "scontrol", "--json=v0.0.40", "show", "job", id); r.Code != 1 {
		t.Errorf("scontrol --json=v0.0.40: %+v", r)
	}
	c.MustRun("", "scancel", id)
}
