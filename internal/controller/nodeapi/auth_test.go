package nodeapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/controller/nodeapi"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
)

// answer is the part of a node protocol answer the tests compare.
type answer struct {
	Status int
	Error  string
}

// post sends body to path, signed by sign (nil: unsigned), and reads the
// answer.
func post(t *testing.T, h http.Handler, path, body string, sign func(*http.Request)) answer {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewBufferString(body))
	if sign != nil {
		sign(req)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var e nodeproto.Error
	if rec.Code != http.StatusOK {
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
			t.Fatalf("POST %s: HTTP %d, answer %q: %v", path, rec.Code, rec.Body, err)
		}
	}
	return answer{Status: rec.Code, Error: e.Error}
}

// TestEveryMessageAuthenticated sends each message of the node protocol,
// about n1, by callers that may not send it: nobody, a user's credential
// from a login host, and another node's daemon. Each is refused before
// the controller hears of it, with the refusal the daemons log.
func TestEveryMessageAuthenticated(t *testing.T) {
	c := ctltest.New(t)
	h := nodeapi.Handler(c.Ctl)
	messages := map[string]string{
		nodeproto.PathRegister:   `{"name":"n1"}`,
		nodeproto.PathHeartbeat:  `{"name":"n1"}`,
		nodeproto.PathJobDone:    `{"node":"n1","job_id":1,"kind":"exited"}`,
		nodeproto.PathStepDone:   `{"node":"n1","job_id":1}`,
		nodeproto.PathNodeHealth: `{"name":"n1","reason":"GPU 0 XID 79"}`,
	}
	callers := map[string]struct {
		sign       func(*http.Request)
		wantStatus int
		wantError  string // when not empty, the whole error
	}{
		"unsigned":            {wantStatus: http.StatusUnauthorized},
		"a user's cred":       {sign: func(r *http.Request) { ctltest.SignAs(r, "root") }, wantStatus: http.StatusUnauthorized},
		"n2 speaks for n1":    {sign: func(r *http.Request) { ctltest.SignNode(r, "n2") }, wantStatus: http.StatusForbidden, wantError: fmt.Sprintf("%v: a message for node %q signed by %s", msgauth.ErrInvalid, "n1", msgauth.Node("n2"))},
		"n10 speaks for n1":   {sign: func(r *http.Request) { ctltest.SignNode(r, "n10") }, wantStatus: http.StatusForbidden, wantError: fmt.Sprintf("%v: a message for node %q signed by %s", msgauth.ErrInvalid, "n1", msgauth.Node("n10"))},
		"a daemon of no node": {sign: func(r *http.Request) { ctltest.SignNode(r, "") }, wantStatus: http.StatusForbidden, wantError: fmt.Sprintf("%v: a message for node %q signed by %s", msgauth.ErrInvalid, "n1", msgauth.Node(""))},
	}
	for path, body := range messages {
		for name, tc := range callers {
			t.Run(path+"/"+name, func(t *testing.T) {
				got := post(t, h, path, body, tc.sign)
				if got.Status != tc.wantStatus || got.Error == "" || (tc.wantError != "" && got.Error != tc.wantError) {
					t.Errorf("HTTP %d %q, want %d %q", got.Status, got.Error, tc.wantStatus, tc.wantError)
				}
			})
		}
	}
	if ni, _ := c.Ctl.Node("n1"); ni.Node.Registered || ni.Node.Drain {
		t.Errorf("a refused message changed n1: registered %v drain %v", ni.Node.Registered, ni.Node.Drain)
	}
}

// TestHeartbeatBeforeRegistering: a daemon's heartbeat before its node is
// registered is answered 409, its cue to register; after, 200.
func TestHeartbeatBeforeRegistering(t *testing.T) {
	c := ctltest.New(t)
	h := nodeapi.Handler(c.Ctl)
	sign := func(r *http.Request) { ctltest.SignNode(r, "n1") }
	got := []answer{post(t, h, nodeproto.PathHeartbeat, `{"name":"n1"}`, sign)}
	got = append(got, post(t, h, nodeproto.PathRegister, `{"name":"n1"}`, sign))
	got = append(got, post(t, h, nodeproto.PathHeartbeat, `{"name":"n1","free_mem":100}`, sign))
	want := []answer{{Status: http.StatusConflict, Error: "node must register"}, {Status: http.StatusOK}, {Status: http.StatusOK}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	if ni, _ := c.Ctl.Node("n1"); ni.Node.FreeMemMB != 100 {
		t.Errorf("free memory %d after the heartbeat, want 100", ni.Node.FreeMemMB)
	}
}
