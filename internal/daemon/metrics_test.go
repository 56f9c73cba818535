package daemon_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The controller daemon serves the metrics before authentication on its
// own port: the Slurm sets under MetricsType=metrics/openmetrics, 401
// for them under PrivateData, Drover's own always; every other path
// still wants credentials.
func TestControllerServesMetrics(t *testing.T) {
	get := func(c *testController, path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + c.addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(b)
	}
	open := startController(t, "metrics", true, "MetricsType=metrics/openmetrics")
	for path, want := range map[string]string{
		"/metrics":                  "slurmctld index of metrics endpoints:",
		"/metrics/jobs":             "slurm_jobs 0\n",
		"/metrics/nodes":            `slurm_node_cpus{node="n1"} 4` + "\n",
		"/metrics/partitions":       `slurm_partition_nodes{partition="batch"} 1` + "\n",
		"/metrics/scheduler":        "# TYPE slurm_schedule_cycle_cnt gauge\n",
		"/metrics/jobs-users-accts": "",
		"/metrics/drover":           "# TYPE drover_state_commit_seconds histogram\n",
	} {
		code, body := get(open, path)
		if code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, want 200 with %q in\n%s", path, code, want, body)
		}
	}
	if code, _ := get(open, "/slurm/v0.0.44/jobs/"); code != http.StatusUnauthorized {
		t.Errorf("REST without credentials: %d, want 401", code)
	}
	private := startController(t, "private", true, "MetricsType=metrics/openmetrics", "PrivateData=jobs")
	if code, _ := get(private, "/metrics/jobs"); code != http.StatusUnauthorized {
		t.Errorf("PrivateData=jobs: /metrics/jobs %d, want 401", code)
	}
	if code, _ := get(private, "/metrics/drover"); code != http.StatusOK {
		t.Errorf("PrivateData=jobs: /metrics/drover %d, want 200", code)
	}
}
