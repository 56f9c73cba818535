package nodeapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/configless"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/controller/nodeapi"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
)

// served is a configuration as Load would read it.
var served = &configless.Served{
	Slurmd: &nodeproto.ConfigReply{SlurmdSpoolDir: "/var/spool/slurmd", Files: []nodeproto.ConfigFile{
		{Name: "slurm.conf", Content: "ClusterName=c\n", Exists: true}, {Name: "gres.conf", Content: "Name=gpu\n", Exists: true}}},
	Clients: &nodeproto.ConfigReply{Files: []nodeproto.ConfigFile{{Name: "slurm.conf", Content: "ClusterName=c\n", Exists: true}}},
}

// TestConfigRequest: with enable_configless a node daemon gets slurmd's
// files and a login host the commands'; nobody else gets any; without
// it every daemon gets Slurm's refusal.
func TestConfigRequest(t *testing.T) {
	on := ctltest.New(t, func(c *controller.Config) { c.Configless = served })
	off := ctltest.New(t)
	tests := map[string]struct {
		h          http.Handler
		sign       func(*http.Request)
		wantStatus int
		wantError  string
		want       *nodeproto.ConfigReply
	}{
		"a node daemon": {h: nodeapi.Handler(on.Ctl), sign: func(r *http.Request) { ctltest.SignNode(r, "n1") },
			wantStatus: http.StatusOK, want: served.Slurmd},
		"a login host": {h: nodeapi.Handler(on.Ctl), sign: func(r *http.Request) { ctltest.SignHost(r, "login1") },
			wantStatus: http.StatusOK, want: served.Clients},
		"unsigned":      {h: nodeapi.Handler(on.Ctl), wantStatus: http.StatusUnauthorized},
		"a user's cred": {h: nodeapi.Handler(on.Ctl), sign: func(r *http.Request) { ctltest.SignAs(r, "root") }, wantStatus: http.StatusUnauthorized},
		"the controller's own issuer": {h: nodeapi.Handler(on.Ctl), sign: func(r *http.Request) { ctltest.SignDaemon(r, msgauth.Controller) },
			wantStatus: http.StatusUnauthorized},
		"configless off": {h: nodeapi.Handler(off.Ctl), sign: func(r *http.Request) { ctltest.SignNode(r, "n1") },
			wantStatus: http.StatusForbidden, wantError: "ConfigLess mode is disabled in slurm configuration."},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, nodeproto.PathConfig, bytes.NewBufferString("{}"))
			if tc.sign != nil {
				tc.sign(req)
			}
			rec := httptest.NewRecorder()
			tc.h.ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("HTTP %d %s, want %d", rec.Code, rec.Body, tc.wantStatus)
			}
			if tc.want == nil {
				var e nodeproto.Error
				if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" || (tc.wantError != "" && e.Error != tc.wantError) {
					t.Fatalf("error answer %q, want %q", rec.Body, tc.wantError)
				}
				return
			}
			var got nodeproto.ConfigReply
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			// Signed by the controller for the requester and this request.
			reqClaims, _ := (&msgauth.Verifier{Keys: keys(), Audience: msgauth.Controller}).VerifyRequest(req, nodeproto.MaxBody)
			v := &msgauth.Verifier{Keys: keys(), Audience: reqClaims.Issuer()}
			claims, err := v.Verify(rec.Header().Get(msgauth.Header), nodeproto.ReplyMethod,
				nodeproto.ReplyURI(nodeproto.PathConfig, req.Header.Get(msgauth.Header)), rec.Body.Bytes())
			if err != nil || claims.Issuer() != msgauth.Controller {
				t.Errorf("the reply's signature: %v", err)
			}
			if diff := cmp.Diff(tc.want, &got); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
		})
	}
}

func keys() *clusterkey.Holder { return clusterkey.NewHolder(clusterkey.FromSecret(ctltest.Key)) }
