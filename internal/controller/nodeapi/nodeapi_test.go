package nodeapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/controller/nodeapi"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/nodeproto"
)

// start starts the controller's loops and waits for job id to run: the
// controller's synchronous test hooks (ScheduleOnce) are its own tests'.
func start(t *testing.T, c *ctltest.Cluster, id job.ID) {
	t.Helper()
	c.Ctl.Start()
	c.Ctl.Kick()
	ctltest.Eventually(t, func() bool { return c.Job(id).State == job.Running }, "job %d to run", id)
}

// TestNodeHealthDrains is the node daemon's GPU failure report.
func TestNodeHealthDrains(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	running := c.Submit(ctltest.Alice, ctltest.Request(func(r *job.Request) { r.GPUsPerNode = 1; r.NodeList = []string{"n3"} }))
	start(t, c, running)
	srv := httptest.NewServer(nodeapi.Handler(c.Ctl))
	defer srv.Close()
	post := func(body string) int {
		req, _ := http.NewRequest("POST", srv.URL+nodeproto.PathNodeHealth, bytes.NewBufferString(body))
		ctltest.SignNode(req, "n3")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	rep, _ := json.Marshal(nodeproto.NodeHealth{Name: "n3", Reason: "GPU 2 XID 79: GPU has fallen off the bus"})
	if code := post(string(rep)); code != http.StatusOK {
		t.Fatalf("health report: HTTP %d", code)
	}
	ni, _ := c.Ctl.Node("n3")
	if !ni.Node.Drain || ni.Node.Reason != "GPU 2 XID 79: GPU has fallen off the bus" || ni.Node.ReasonUID != 0 {
		t.Errorf("n3 drain %v reason %q uid %d", ni.Node.Drain, ni.Node.Reason, ni.Node.ReasonUID)
	}
	// The job there keeps running; the node takes no new work.
	if st := c.Job(running).State; st != job.Running {
		t.Errorf("job on the drained node is %v", st)
	}
	rep, _ = json.Marshal(nodeproto.NodeHealth{Name: "n3", Reason: "GPU 5: double-bit ECC error"})
	post(string(rep))
	if ni, _ := c.Ctl.Node("n3"); ni.Node.Reason != "GPU 2 XID 79: GPU has fallen off the bus; GPU 5: double-bit ECC error" {
		t.Errorf("second failure: reason %q", ni.Node.Reason)
	}
	for body, want := range map[string]int{
		// n3's daemon may speak for n3 only.
		`{"name":"n9","reason":"x"}`: http.StatusForbidden,
		`{"name":"n4","reason":"x"}`: http.StatusForbidden,
		`{"name":"n3"}`:              http.StatusServiceUnavailable,
		`garbage`:                    http.StatusBadRequest,
	} {
		if code := post(body); code != want {
			t.Errorf("POST %s: HTTP %d, want %d", body, code, want)
		}
	}
	if ni, _ := c.Ctl.Node("n3"); !strings.Contains(ni.Node.Reason, "XID 79") {
		t.Errorf("reason lost: %q", ni.Node.Reason)
	}
}
