package restapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/job"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/nodeproto"
	"github.com/droverhq/drover/internal/restapi"
	api "github.com/droverhq/drover/openapi/v0044"
)

const submitPath = "/slurm/v0.0.44/job/submit"

// submitBody is a minimal valid submission.
const submitBody = `{"job":{"script":"#!/bin/sh\ntrue\n","current_working_directory":"/tmp","environment":["A=1"],"hold":true}}`

func handler(t testing.TB, c *ctltest.Cluster, opts restapi.Options) http.Handler {
	t.Helper()
	h, err := restapi.Handler(c.Ctl, slog.New(slog.DiscardHandler), opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// serve runs the handler on loopback TCP and a unix socket, as the
// controller daemon does, and returns the TCP address and socket path.
func serve(t testing.TB, c *ctltest.Cluster, opts restapi.Options) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sock := filepath.Join(t.TempDir(), "drover.sock")
	addr, _, err := restapi.Serve(ctx, handler(t, c, opts), "127.0.0.1:0", sock, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return addr.String(), sock
}

// unixClient dials the socket whatever the URL's host.
func unixClient(sock string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
}

type answer struct {
	status int
	ctype  string
	body   []byte
}

func do(t *testing.T, c *http.Client, method, url, user string, body io.Reader) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if user != "" {
		req.Header.Set("X-SLURM-USER-NAME", user)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{status: resp.StatusCode, ctype: resp.Header.Get("Content-Type"), body: b}
}

// client returns meta.client of a JSON answer.
func client(t *testing.T, a answer) map[string]string {
	t.Helper()
	var v struct {
		Meta struct {
			Client map[string]string `json:"client"`
		} `json:"meta"`
	}
	if err := json.Unmarshal(a.body, &v); err != nil {
		t.Fatalf("HTTP %d: %v: %s", a.status, err, a.body)
	}
	return v.Meta.Client
}

func TestUnixSocketIdentity(t *testing.T) {
	c := ctltest.New(t)
	_, sock := serve(t, c, restapi.Options{})
	st, err := os.Stat(sock)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSocket == 0 || st.Mode().Perm() != 0o777 {
		t.Errorf("socket mode %v, want a socket anyone may connect to", st.Mode())
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	hc := unixClient(sock)
	// The kernel's word (SO_PEERCRED) counts; a header naming someone
	// else is ignored on the socket.
	for _, claimed := range []string{"", "nobody"} {
		a := do(t, hc, http.MethodGet, "http://localhost/slurm/v0.0.44/ping/", claimed, nil)
		if a.status != 200 {
			t.Fatalf("ping: HTTP %d %s", a.status, a.body)
		}
		cl := client(t, a)
		if cl["user"] != me.Username || cl["source"] != fmt.Sprintf("unix:pid=%d", os.Getpid()) {
			t.Errorf("claiming %q: meta.client %v, want user %s from unix:pid=%d", claimed, cl, me.Username, os.Getpid())
		}
	}
	a := do(t, hc, http.MethodPost, "http://localhost"+submitPath, "nobody", strings.NewReader(submitBody))
	if a.status != 200 {
		t.Fatalf("submit: HTTP %d %s", a.status, a.body)
	}
	// The generated client over the socket, as the drop-in commands on
	// the controller's host use it, sending no user at all.
	cl, err := api.NewClient("http://localhost", noUser{}, api.WithClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := cl.SlurmV0044PostJobSubmit(context.Background(), api.NewOptV0044JobSubmitReq(api.V0044JobSubmitReq{Job: api.NewOptV0044JobDescMsg(api.V0044JobDescMsg{
		Script: api.NewOptString("#!/bin/sh\ntrue\n"), CurrentWorkingDirectory: api.NewOptString("/tmp"), Environment: api.V0044StringArray{"A=1"}, Hold: api.NewOptBool(true),
	})}))
	if err != nil {
		t.Fatalf("client submit: %v", err)
	}
	if ok, isOK := res.(*api.V0044OpenapiJobSubmitResponse); !isOK || ok.JobID.Or(0) != 2 || len(ok.Warnings) != 2 {
		t.Errorf("client submit answer %T %+v", res, res)
	}
	jobs := c.Ctl.Jobs(controller.JobFilter{})
	if len(jobs) != 2 {
		t.Fatalf("%d jobs", len(jobs))
	}
	for _, j := range jobs {
		if j.Req.UserID != uint32(os.Getuid()) || j.Req.GroupID != uint32(os.Getgid()) || j.Req.UserName != me.Username {
			t.Errorf("job %d owner: uid %d gid %d %q", j.ID, j.Req.UserID, j.Req.GroupID, j.Req.UserName)
		}
	}
}

// noUser sends no credentials: on the unix socket the kernel vouches for
// the caller.
type noUser struct{}

func (noUser) BearerAuth(context.Context, api.OperationName) (api.BearerAuth, error) {
	return api.BearerAuth{}, ogenerrors.ErrSkipClientSecurity
}

func (noUser) Token(context.Context, api.OperationName) (api.Token, error) {
	return api.Token{}, ogenerrors.ErrSkipClientSecurity
}

func (noUser) User(context.Context, api.OperationName) (api.User, error) {
	return api.User{}, ogenerrors.ErrSkipClientSecurity
}

// TestTCPAuthentication: over TCP nothing the network says is believed
// without proof. A user's host vouches for it with a credential signed
// with the cluster key for this very request; a node daemon signs its
// messages, and may speak for itself only.
func TestTCPAuthentication(t *testing.T) {
	c := ctltest.New(t)
	h := handler(t, c, restapi.Options{})
	otherKey := &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(bytes.Repeat([]byte{9}, 32))), Issuer: msgauth.Host("evil")}
	ours := clusterkey.NewHolder(clusterkey.FromSecret(ctltest.Key))
	user := func(name string) func(*http.Request) { return func(r *http.Request) { ctltest.SignAs(r, name) } }
	header := func(k, v string) func(*http.Request) { return func(r *http.Request) { r.Header.Set(k, v) } }
	replayed := httptest.NewRequest(http.MethodGet, "/slurm/v0.0.44/ping/", nil)
	ctltest.SignAs(replayed, "nobody")
	tests := map[string]struct {
		path       string
		sign       []func(*http.Request)
		wantStatus int
		wantUser   string
	}{
		"a user's credential":             {sign: []func(*http.Request){user("nobody")}, wantStatus: 200, wantUser: "nobody"},
		"root's credential, as nobody":    {sign: []func(*http.Request){user("root"), header("X-SLURM-USER-NAME", "nobody")}, wantStatus: 200, wantUser: "nobody"},
		"a user's credential, as root":    {sign: []func(*http.Request){user("nobody"), header("X-SLURM-USER-NAME", "root")}, wantStatus: 401},
		"a bare name":                     {sign: []func(*http.Request){header("X-SLURM-USER-NAME", "root")}, wantStatus: 401},
		"nothing":                         {wantStatus: 401},
		"the credential of a replay":      {sign: []func(*http.Request){func(r *http.Request) { r.Header = replayed.Header.Clone() }}, wantStatus: 401},
		"a credential for another path":   {sign: []func(*http.Request){func(r *http.Request) { r.Header = replayed.Header.Clone() }}, path: "/slurm/v0.0.44/diag/", wantStatus: 401},
		"a credential of another key":     {sign: []func(*http.Request){signedBy(otherKey, "root")}, wantStatus: 401},
		"a node's token on the user API":  {sign: []func(*http.Request){nodeToken(ours, "n1")}, wantStatus: 401},
		"node protocol unsigned":          {path: nodeproto.PathHeartbeat, wantStatus: 401},
		"node protocol with a bare name":  {path: nodeproto.PathHeartbeat, sign: []func(*http.Request){header("X-SLURM-USER-NAME", "root")}, wantStatus: 401},
		"node protocol, signed by n1":     {path: nodeproto.PathHeartbeat, sign: []func(*http.Request){func(r *http.Request) { ctltest.SignNode(r, "n1") }}, wantStatus: http.StatusConflict},
		"node protocol, n2 speaks for n1": {path: nodeproto.PathHeartbeat, sign: []func(*http.Request){func(r *http.Request) { ctltest.SignNode(r, "n2") }}, wantStatus: http.StatusForbidden},
		"node protocol, a user's cred":    {path: nodeproto.PathHeartbeat, sign: []func(*http.Request){user("root")}, wantStatus: 401},
		// A path that only starts like the node protocol's is
		// authenticated as what it leads to.
		"through the node prefix": {path: "/drover/v1/node/../../slurm/v0.0.44/job/1/requeue", wantStatus: 401},
	}
	// The replayed credential is used once, legitimately.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, replayed)
	if rec.Code != 200 {
		t.Fatalf("first use of a credential: HTTP %d %s", rec.Code, rec.Body)
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			path := tc.path
			if path == "" {
				path = "/slurm/v0.0.44/ping/"
			}
			method := http.MethodGet
			var body io.Reader
			if strings.HasPrefix(path, "/drover/") {
				method, body = http.MethodPost, strings.NewReader(`{"name":"n1"}`)
			}
			req := httptest.NewRequest(method, path, body)
			req.RemoteAddr = "127.0.0.1:4000"
			for _, s := range tc.sign {
				s(req)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("HTTP %d %s, want %d", rec.Code, rec.Body, tc.wantStatus)
			}
			if tc.wantStatus == 401 && !strings.HasPrefix(path, "/drover/") && !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
				t.Errorf("401 content type %q", rec.Header().Get("Content-Type"))
			}
			if tc.wantUser != "" {
				if u := client(t, answer{status: rec.Code, body: rec.Body.Bytes()})["user"]; u != tc.wantUser {
					t.Errorf("user %q, want %q", u, tc.wantUser)
				}
			}
		})
	}
}

// signedBy signs a request as a credential service holding s's key would
// for user.
func signedBy(s *msgauth.Signer, user string) func(*http.Request) {
	return func(r *http.Request) {
		tok, err := s.SignUser(msgauth.UserID{Name: user}, msgauth.Controller, r.Method, r.URL.RequestURI(), msgauth.BodyHash(nil))
		if err != nil {
			panic(err)
		}
		r.Header.Set(msgauth.Header, tok)
	}
}

// nodeToken signs a request as node's daemon would.
func nodeToken(keys *clusterkey.Holder, node string) func(*http.Request) {
	return func(r *http.Request) {
		s := &msgauth.Signer{Keys: keys, Issuer: msgauth.Node(node)}
		if err := s.SignRequest(r, msgauth.Controller, nil); err != nil {
			panic(err)
		}
	}
}

func currentUser(t *testing.T) string {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// chunked hides a body's length, so that only reading it shows its size.
type chunked struct{ io.Reader }

func TestBodyLimits(t *testing.T) {
	c := ctltest.New(t)
	addr, _ := serve(t, c, restapi.Options{})
	url := "http://" + addr + submitPath
	hc := ctltest.Client()
	big := bytes.Repeat([]byte("x"), restapi.MaxBody+1)
	tests := map[string]struct {
		body       io.Reader
		wantStatus int
		wantBody   string
	}{
		"declared length over the limit": {body: bytes.NewReader(big), wantStatus: 413, wantBody: "Request body too large\n"},
		"chunked body over the limit":    {body: chunked{bytes.NewReader(big)}, wantStatus: 413, wantBody: "Request body too large\n"},
		"at the limit, not JSON":         {body: bytes.NewReader(big[:restapi.MaxBody]), wantStatus: 400, wantBody: "Failure during parsing"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a := do(t, hc, http.MethodPost, url, "root", tc.body)
			if a.status != tc.wantStatus || !strings.HasPrefix(a.ctype, "text/plain") || string(a.body) != tc.wantBody {
				t.Errorf("HTTP %d %q %q, want %d text/plain %q", a.status, a.ctype, a.body, tc.wantStatus, tc.wantBody)
			}
		})
	}
	// The server still takes a normal submission.
	if a := do(t, hc, http.MethodPost, url, "root", strings.NewReader(submitBody)); a.status != 200 {
		t.Errorf("submit after the oversized ones: HTTP %d %s", a.status, a.body)
	}
	// A limit from the settings (rest-max-body) takes the default's place.
	small, _ := serve(t, c, restapi.Options{MaxBody: int64(len(submitBody) - 1)})
	if a := do(t, hc, http.MethodPost, "http://"+small+submitPath, "root", strings.NewReader(submitBody)); a.status != 413 {
		t.Errorf("submit over a configured limit: HTTP %d %s", a.status, a.body)
	}
}

func TestUnknownPaths(t *testing.T) {
	c := ctltest.New(t)
	h := handler(t, c, restapi.Options{})
	// slurmrestd's text, from shared/ beside the checkout or the
	// workplace's copy.
	want, err := os.ReadFile("../../../shared/reference/rest/v0.0.44/err_no_such_path.txt")
	if err != nil {
		want, err = os.ReadFile("/work/shared/reference/rest/v0.0.44/err_no_such_path.txt")
	}
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != restapi.NotFoundText {
		t.Errorf("NotFoundText differs from slurmrestd's:\n%q\n%q", restapi.NotFoundText, want)
	}
	for _, target := range []string{
		"GET /slurm/v0.0.44/nosuchendpoint",
		"GET /",
		"GET /slurm/v0.0.40/jobs/",
		"GET /slurm/v0.0.44",
		"DELETE /slurm/v0.0.44/ping/",
		"PUT /slurm/v0.0.44/job/1",
		"GET /drover/v1/nosuch",
	} {
		method, p, _ := strings.Cut(target, " ")
		req := httptest.NewRequest(method, p, nil)
		req.RemoteAddr = "127.0.0.1:4000"
		ctltest.SignAs(req, "root")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 404 || rec.Header().Get("Content-Type") != "text/plain" || rec.Body.String() != string(want) {
			t.Errorf("%s: HTTP %d %q %q", target, rec.Code, rec.Header().Get("Content-Type"), rec.Body)
		}
	}
}

func TestRequeueEndpoint(t *testing.T) {
	c := ctltest.New(t)
	c.RegisterAll()
	h := handler(t, c, restapi.Options{})
	c.Ctl.Start()
	done := c.Submit(ctltest.Root, ctltest.Request())
	ctltest.Eventually(t, func() bool { return c.Job(done).State == job.Running }, "job %d running", done)
	c.Finish(done, nodeproto.EndExited, 0, 0)
	pending, err := c.Ctl.Submit(context.Background(), ctltest.Root, controller.Submission{Req: ctltest.Request(), Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	post := func(id, user, query string) (int, []any) {
		req := httptest.NewRequest(http.MethodPost, "/drover/v1/job/"+id+"/requeue"+query, nil)
		req.RemoteAddr = "127.0.0.1:4000"
		ctltest.SignAs(req, user)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var v struct {
			Errors []struct {
				N float64 `json:"error_number"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
			t.Fatalf("requeue %s: %v: %s", id, err, rec.Body)
		}
		var codes []any
		for _, e := range v.Errors {
			codes = append(codes, e.N)
		}
		return rec.Code, codes
	}
	tests := []struct {
		name, id, user, query string
		status                int
		codes                 []any
	}{
		{"finished job", strconv.Itoa(int(done)), "root", "?hold=true", 200, nil},
		{"pending job", strconv.Itoa(int(pending.JobID)), "root", "", 500, []any{float64(2024)}},
		{"unknown job", "999", "root", "", 404, []any{float64(2017)}},
		{"not a job id", "abc", "root", "", 404, []any{float64(2017)}},
		{"another user's job", strconv.Itoa(int(done)), "nobody", "", 500, []any{float64(2002)}},
	}
	for _, tc := range tests {
		status, codes := post(tc.id, tc.user, tc.query)
		if status != tc.status {
			t.Errorf("%s: HTTP %d, want %d", tc.name, status, tc.status)
		}
		if diff := cmp.Diff(tc.codes, codes); diff != "" {
			t.Errorf("%s: error numbers (-want +got):\n%s", tc.name, diff)
		}
	}
	if j := c.Job(done); j.State != job.Pending || j.Hold != job.HeldAdmin || j.RestartCount != 1 {
		t.Errorf("requeued job: %v hold %v restarts %d", j.State, j.Hold, j.RestartCount)
	}
}

// TestDiagResetEndpoint: POST /drover/v1/diag/reset (sdiag -r) is
// refused to an ordinary user with ESLURM_ACCESS_DENIED and done for
// root, after which GET /diag counts from zero and names the reset as
// the start of its data, with the request serving it among the server
// threads and the requests counted by their sender.
func TestDiagResetEndpoint(t *testing.T) {
	c := ctltest.New(t)
	h := handler(t, c, restapi.Options{})
	c.Submit(ctltest.Alice, ctltest.Request())
	c.Clock.Advance(time.Minute)
	do := func(method, path, user string) (int, string) {
		req := httptest.NewRequest(method, path, nil)
		req.RemoteAddr = "127.0.0.1:4000"
		ctltest.SignAs(req, user)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	type stats struct {
		Submitted int `json:"jobs_submitted"`
		Threads   int `json:"server_thread_count"`
		Start     struct {
			Number int64 `json:"number"`
		} `json:"req_time_start"`
		Users []struct {
			User  string
			Count int
		} `json:"rpcs_by_user"`
	}
	diag := func() stats {
		t.Helper()
		code, body := do(http.MethodGet, "/slurm/v0.0.44/diag/", "root")
		var v struct{ Statistics stats }
		if err := json.Unmarshal([]byte(body), &v); code != 200 || err != nil {
			t.Fatalf("GET diag: HTTP %d, %v: %s", code, err, body)
		}
		return v.Statistics
	}
	if s := diag(); s.Submitted != 1 || s.Threads != 1 || s.Start.Number != c.Ctl.StartTime().Unix() {
		t.Errorf("before any reset: %+v", s)
	}
	if code, body := do(http.MethodPost, "/drover/v1/diag/reset", "nobody"); code != 500 || !strings.Contains(body, `"error_number":2002`) {
		t.Errorf("reset as nobody: HTTP %d: %s", code, body)
	}
	if s := diag(); s.Submitted != 1 {
		t.Errorf("after a refused reset: %+v", s)
	}
	if code, body := do(http.MethodPost, "/drover/v1/diag/reset", "root"); code != 200 {
		t.Errorf("reset as root: HTTP %d: %s", code, body)
	}
	// The reset itself is the one request counted since, root's, as
	// slurmctld records a request once served.
	if s := diag(); s.Submitted != 0 || s.Start.Number != c.Now().Unix() || len(s.Users) != 1 || s.Users[0].User != "root" || s.Users[0].Count != 1 {
		t.Errorf("after the reset at %d: %+v", c.Now().Unix(), s)
	}
}
