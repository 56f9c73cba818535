package nodeagent

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
)

// FuzzDaemonMessages sends arbitrary bodies to a node daemon: signals and
// reconfigures signed by the controller, and step launches (whose
// credential cannot be valid). Each gets an answer, none panics, and the
// daemon keeps serving. Batch launches are left out: a valid one runs
// its script.
func FuzzDaemonMessages(f *testing.F) {
	paths := []string{nodeproto.PathSignal, nodeproto.PathReconfigure, nodeproto.PathStepLaunch}
	for i := range paths {
		f.Add(uint8(i), []byte(`{"job_id":1,"signal":15,"terminate":true}`))
		f.Add(uint8(i), []byte(`{"cred":"x.y","job_id":1,"tasks":[0],"nodes":["n1"],"argv":["true"]}`))
		f.Add(uint8(i), []byte(`[`))
	}
	ta := startAgent(f, nil)
	signer := &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(testStepKey)), Issuer: msgauth.Controller}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := paths[int(which)%len(paths)]
		req, _ := http.NewRequest(http.MethodPost, ta.url+path, bytes.NewReader(body))
		if err := signer.SignRequest(req, msgauth.Node("n1"), body); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 500 && resp.StatusCode != http.StatusInternalServerError && resp.StatusCode != http.StatusNotImplemented {
			t.Fatalf("%s %q: HTTP %d", path, body, resp.StatusCode)
		}
	})
}
