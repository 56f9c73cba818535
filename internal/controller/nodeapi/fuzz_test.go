package nodeapi_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/controller/nodeapi"
	"github.com/droverhq/drover/internal/nodeproto"
)

// FuzzNodeMessages sends arbitrary bodies, signed by a node as a real one
// signs them, to every message of the node protocol: the controller
// answers each without panicking, with a status its daemons understand,
// and keeps serving.
func FuzzNodeMessages(f *testing.F) {
	paths := []string{nodeproto.PathRegister, nodeproto.PathHeartbeat, nodeproto.PathJobDone, nodeproto.PathNodeHealth, nodeproto.PathStepDone, nodeproto.PathConfig}
	for i := range paths {
		f.Add(uint8(i), []byte(`{"name":"n1","node":"n1","job_id":1,"kind":"exited"}`))
		f.Add(uint8(i), []byte(`{"name":"n1","cpus":8,"real_memory":16000,"jobs":[{"job_id":1,"done":{"job_id":1}}]}`))
		f.Add(uint8(i), []byte(`garbage`))
	}
	c := ctltest.New(f)
	h := nodeapi.Handler(c.Ctl)
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		req := httptest.NewRequest(http.MethodPost, paths[int(which)%len(paths)], bytes.NewReader(body))
		ctltest.SignNode(req, "n1")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusServiceUnavailable:
		default:
			t.Fatalf("%s %q: HTTP %d %s", req.URL.Path, body, rec.Code, rec.Body)
		}
	})
}
