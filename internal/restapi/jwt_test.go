package restapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/jwtauth"
	"github.com/droverhq/drover/internal/restapi"
)

var jwtKey = []byte("0123456789abcdef0123456789abcdef")

// TestJWT authenticates REST requests from a remote address by auth/jwt
// tokens only, and refuses every bad one with slurmrestd's 401.
func TestJWT(t *testing.T) {
	c := ctltest.New(t)
	now := time.Now()
	opts := restapi.Options{JWT: &restapi.JWT{Key: jwtKey, Now: func() time.Time { return now }}}
	h := handler(t, c, opts)
	tok := func(user string, life time.Duration) string {
		s, err := jwtauth.Issue(jwtKey, user, life, now)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"exp": now.Add(time.Hour).Unix(), "sun": "root"}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	wrongKey, _ := jwtauth.Issue([]byte("another key, another key, another"), "root", time.Hour, now)
	expired, _ := jwtauth.Issue(jwtKey, "nobody", time.Minute, now.Add(-time.Hour))
	tests := map[string]struct {
		headers    map[string]string
		wantStatus int
		wantUser   string
		wantBody   string
	}{
		"token":                       {headers: map[string]string{"X-SLURM-USER-TOKEN": tok("nobody", time.Hour)}, wantStatus: 200, wantUser: "nobody"},
		"token and the same name":     {headers: map[string]string{"X-SLURM-USER-TOKEN": tok("nobody", time.Hour), "X-SLURM-USER-NAME": "nobody"}, wantStatus: 200, wantUser: "nobody"},
		"bearer":                      {headers: map[string]string{"Authorization": "Bearer " + tok("daemon", time.Hour)}, wantStatus: 200, wantUser: "daemon"},
		"root acts as another user":   {headers: map[string]string{"X-SLURM-USER-TOKEN": tok("root", time.Hour), "X-SLURM-USER-NAME": "nobody"}, wantStatus: 200, wantUser: "nobody"},
		"user acts as another user":   {headers: map[string]string{"X-SLURM-USER-TOKEN": tok("nobody", time.Hour), "X-SLURM-USER-NAME": "root"}, wantStatus: 401, wantBody: "Invalid authentication credential"},
		"both headers":                {headers: map[string]string{"X-SLURM-USER-TOKEN": tok("nobody", time.Hour), "Authorization": "Bearer " + tok("nobody", time.Hour)}, wantStatus: 401, wantBody: "Invalid authentication credential"},
		"not a bearer":                {headers: map[string]string{"Authorization": "Basic " + tok("nobody", time.Hour)}, wantStatus: 401},
		"expired":                     {headers: map[string]string{"X-SLURM-USER-TOKEN": expired}, wantStatus: 401, wantBody: "Authentication credential expired"},
		"wrong key":                   {headers: map[string]string{"X-SLURM-USER-TOKEN": wrongKey}, wantStatus: 401, wantBody: "Invalid authentication credential"},
		"alg none":                    {headers: map[string]string{"X-SLURM-USER-TOKEN": none}, wantStatus: 401, wantBody: "Invalid authentication credential"},
		"garbage":                     {headers: map[string]string{"X-SLURM-USER-TOKEN": "not.a.token"}, wantStatus: 401},
		"a user nobody knows":         {headers: map[string]string{"X-SLURM-USER-TOKEN": tok("no-such-user-here", time.Hour)}, wantStatus: 401},
		"no token from a remote host": {headers: map[string]string{"X-SLURM-USER-NAME": "root"}, wantStatus: 401},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/slurm/v0.0.44/ping/", nil)
			req.RemoteAddr = "10.1.2.3:4000"
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("HTTP %d %s, want %d", rec.Code, rec.Body, tc.wantStatus)
			}
			if tc.wantStatus == 401 {
				if rec.Header().Get("Connection") != "close" || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain") {
					t.Errorf("401 headers %v", rec.Header())
				}
				if tc.wantBody != "" && rec.Body.String() != tc.wantBody {
					t.Errorf("401 body %q, want %q", rec.Body, tc.wantBody)
				}
			}
			if tc.wantUser != "" {
				if u := client(t, answer{status: rec.Code, body: rec.Body.Bytes()})["user"]; u != tc.wantUser {
					t.Errorf("user %q, want %q", u, tc.wantUser)
				}
			}
		})
	}
	// Without auth/jwt every token is refused.
	plain := handler(t, c, restapi.Options{})
	req := httptest.NewRequest(http.MethodGet, "/slurm/v0.0.44/ping/", nil)
	req.RemoteAddr = "127.0.0.1:4000"
	req.Header.Set("X-SLURM-USER-TOKEN", tok("root", time.Hour))
	rec := httptest.NewRecorder()
	plain.ServeHTTP(rec, req)
	if rec.Code != 401 {
		t.Errorf("token without auth/jwt: HTTP %d", rec.Code)
	}
}

// TestTokenEndpoint hands out tokens with slurmctld's rules.
func TestTokenEndpoint(t *testing.T) {
	c := ctltest.New(t)
	now := time.Now()
	cfg := jwtauth.Config{Enabled: true, MaxLifespan: time.Hour}
	h := handler(t, c, restapi.Options{JWT: &restapi.JWT{Key: jwtKey, Config: cfg, Now: func() time.Time { return now }}})
	ask := func(user, query string) (int, string, map[string]any) {
		req := httptest.NewRequest(http.MethodPost, restapi.TokenPath+query, nil)
		req.RemoteAddr = "127.0.0.1:4000"
		ctltest.SignAs(req, user)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		var v map[string]any
		json.Unmarshal(rec.Body.Bytes(), &v)
		tok, _ := v["token"].(string)
		return rec.Code, tok, v
	}
	code, tok, _ := ask("nobody", "")
	if code != 200 {
		t.Fatalf("own token: HTTP %d", code)
	}
	if u, err := jwtauth.Verify(jwtKey, tok, now.Add(29*time.Minute)); err != nil || u != "nobody" {
		t.Errorf("token: %q, %v", u, err)
	}
	// The default lifespan (30 min) under max_token_lifespan.
	if _, err := jwtauth.Verify(jwtKey, tok, now.Add(31*time.Minute)); err == nil {
		t.Error("default lifespan longer than 30 minutes")
	}
	errNumber := func(v map[string]any) float64 {
		errs, _ := v["errors"].([]any)
		if len(errs) == 0 {
			return 0
		}
		n, _ := errs[0].(map[string]any)["error_number"].(float64)
		return n
	}
	if code, _, v := ask("nobody", "?username=root"); code == 200 || errNumber(v) != 2010 {
		t.Errorf("a token for root asked by nobody: HTTP %d %v", code, v)
	}
	if code, tok, _ := ask("root", "?username=nobody&lifespan=7200"); code != 200 {
		t.Errorf("root for nobody, 2 h: HTTP %d", code)
	} else if _, err := jwtauth.Verify(jwtKey, tok, now.Add(90*time.Minute)); err != nil {
		t.Errorf("root's 2 h token: %v", err)
	}
	if code, _, v := ask("nobody", "?lifespan=7200"); code == 200 || errNumber(v) != 2051 {
		t.Errorf("nobody over max_token_lifespan: HTTP %d %v", code, v)
	}
	if code, _, v := ask("nobody", "?lifespan=soon"); code == 200 || errNumber(v) != 2051 {
		t.Errorf("bad lifespan: HTTP %d %v", code, v)
	}
	off := handler(t, c, restapi.Options{JWT: &restapi.JWT{Key: jwtKey, Config: jwtauth.Config{Enabled: true, NoCreation: true}}})
	req := httptest.NewRequest(http.MethodPost, restapi.TokenPath, nil)
	req.RemoteAddr = "127.0.0.1:4000"
	ctltest.SignAs(req, "nobody")
	rec := httptest.NewRecorder()
	off.ServeHTTP(rec, req)
	if rec.Code == 200 {
		t.Error("disable_token_creation: a user got a token")
	}
	none := handler(t, c, restapi.Options{})
	rec = httptest.NewRecorder()
	req = httptest.NewRequest(http.MethodPost, restapi.TokenPath, nil)
	req.RemoteAddr = "127.0.0.1:4000"
	ctltest.SignAs(req, "root")
	none.ServeHTTP(rec, req)
	if rec.Code == 200 || !strings.Contains(rec.Body.String(), "8004") {
		t.Errorf("no auth/jwt: HTTP %d %s", rec.Code, rec.Body)
	}
}
