package v0044_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/ctltest"
	"github.com/droverhq/drover/internal/restapi"
	api "github.com/droverhq/drover/openapi/v0044"
)

// specPath is the upstream slurmrestd document every JSON answer must
// follow.
const specPath = "../../openapi/spec/slurmrestd-v0.0.44.json"

// refDirs are where the captures of real slurmrestd 25.11.7 answers may
// be: shared/ beside the checkout, or the workplace's copy.
var refDirs = []string{"../../../shared/reference/rest/v0.0.44", "/work/shared/reference/rest/v0.0.44"}

var (
	specOnce   sync.Once
	specRouter routers.Router
	specErr    error
)

// router returns a kin-openapi router over the v0.0.44 document, loaded
// once per test binary.
func router(t testing.TB) routers.Router {
	t.Helper()
	specOnce.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromFile(specPath)
		if err != nil {
			specErr = fmt.Errorf("load %s: %w", specPath, err)
			return
		}
		for _, ref := range doc.Components.Schemas {
			dropSlashRequired(ref.Value, map[*openapi3.Schema]bool{})
		}
		specRouter, specErr = legacy.NewRouter(doc)
	})
	if specErr != nil {
		t.Fatalf("spec: %v", specErr)
	}
	return specRouter
}

// dropSlashRequired removes "required" entries that name nested fields
// with a slash ("cpus/count" in v0.0.44_job_res_node): the upstream
// document lists them so, but no JSON object has such keys, and real
// slurmrestd's own answers would fail them.
func dropSlashRequired(s *openapi3.Schema, seen map[*openapi3.Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	s.Required = slices.DeleteFunc(s.Required, func(name string) bool { return strings.Contains(name, "/") })
	for _, p := range s.Properties {
		dropSlashRequired(p.Value, seen)
	}
	if s.Items != nil {
		dropSlashRequired(s.Items.Value, seen)
	}
	for _, group := range [][]*openapi3.SchemaRef{s.AllOf, s.AnyOf, s.OneOf} {
		for _, r := range group {
			dropSlashRequired(r.Value, seen)
		}
	}
	if s.AdditionalProperties.Schema != nil {
		dropSlashRequired(s.AdditionalProperties.Schema.Value, seen)
	}
}

// validate checks a JSON answer against the operation's response in the
// spec: status (a declared one or default), content type and schema.
// Answers that are not JSON (slurmrestd's text/plain errors) and paths the
// spec does not have are the caller's to check.
func validate(t testing.TB, req *http.Request, status int, header http.Header, body []byte) error {
	ct, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	if ct != "application/json" {
		return nil
	}
	r := req.Clone(context.Background())
	// The router matches the spec's servers ("/"), not the test server.
	r.URL.Scheme, r.URL.Host, r.Host = "", "", ""
	route, params, err := router(t).FindRoute(r)
	if err != nil {
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: r, PathParams: params, Route: route,
			Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc},
		},
		Status:  status,
		Header:  header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s -> %d does not follow the spec: %w\nbody: %s", req.Method, req.URL.Path, status, err, body)
	}
	return nil
}

// validating checks every answer that passes through it against the spec,
// so that the generated client's calls are checked too.
type validating struct {
	t    testing.TB
	base http.RoundTripper
}

func (v validating) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := v.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := validate(v.t, req, resp.StatusCode, resp.Header, body); err != nil {
		v.t.Error(err)
	}
	return resp, nil
}

// asUser is the generated client's security source for a loopback TCP
// client: the user name goes in X-SLURM-USER-NAME.
type asUser string

func (u asUser) BearerAuth(context.Context, api.OperationName) (api.BearerAuth, error) {
	return api.BearerAuth{}, ogenerrors.ErrSkipClientSecurity
}

func (u asUser) Token(context.Context, api.OperationName) (api.Token, error) {
	return api.Token{}, ogenerrors.ErrSkipClientSecurity
}

func (u asUser) User(context.Context, api.OperationName) (api.User, error) {
	return api.User{APIKey: string(u)}, nil
}

// rest is the real HTTP front (restapi.Handler) over a real, running
// controller, served on loopback TCP.
type rest struct {
	t    *testing.T
	c    *ctltest.Cluster
	url  string
	http *http.Client
	// root and nobody are generated clients acting as those users.
	root, nobody *api.Client
}

func newREST(t *testing.T, mods ...func(*controller.Config)) *rest {
	t.Helper()
	// The real clock: the controller's loops run.
	mods = append(mods, func(cfg *controller.Config) { cfg.Now = nil })
	c := ctltest.New(t, mods...)
	c.RegisterAll()
	c.Ctl.Start()
	h, err := restapi.Handler(c.Ctl, slog.New(slog.DiscardHandler), restapi.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	r := &rest{t: t, c: c, url: srv.URL, http: &http.Client{Transport: validating{t: t, base: ctltest.UserTransport{}}}}
	for _, u := range []struct {
		name string
		dst  **api.Client
	}{{"root", &r.root}, {"nobody", &r.nobody}} {
		cl, err := api.NewClient(srv.URL, asUser(u.name), api.WithClient(r.http))
		if err != nil {
			t.Fatal(err)
		}
		*u.dst = cl
	}
	return r
}

// answer is a raw HTTP answer.
type answer struct {
	Status      int
	ContentType string
	Body        []byte
}

// JSON decodes the body into a generic value.
func (a answer) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(a.Body, &v); err != nil {
		t.Fatalf("answer is not a JSON object: %v\n%s", err, a.Body)
	}
	return v
}

// do sends a raw request as user (empty: no X-SLURM-USER-NAME) and
// returns the answer, checked against the spec.
func (r *rest) do(method, path, user string, body []byte) answer {
	r.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, r.url+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if user != "" {
		req.Header.Set("X-SLURM-USER-NAME", user)
	}
	resp, err := r.http.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return answer{Status: resp.StatusCode, ContentType: ct, Body: b}
}

// reference reads a capture of real slurmrestd.
func reference(t testing.TB, name string) []byte {
	t.Helper()
	for _, dir := range refDirs {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			return b
		}
		if !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("reference capture: %v", err)
		}
	}
	t.Fatalf("reference capture %s not found in %v", name, refDirs)
	return nil
}

// referenceJSON reads a JSON capture.
func referenceJSON(t testing.TB, name string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(reference(t, name), &v); err != nil {
		t.Fatalf("reference %s: %v", name, err)
	}
	return v
}

// path walks a decoded JSON value: path(v, "jobs", 0, "job_state").
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				return nil
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

// problems lists errors[] and warnings[] as comparable summaries.
type problems struct {
	Errors   []string
	Warnings []string
}

func problemsOf(v map[string]any) problems {
	p := problems{Errors: []string{}, Warnings: []string{}}
	for _, e := range asList(v["errors"]) {
		p.Errors = append(p.Errors, fmt.Sprintf("%v %v [%v] %v", path(e, "error_number"), path(e, "error"), path(e, "source"), path(e, "description")))
	}
	for _, w := range asList(v["warnings"]) {
		p.Warnings = append(p.Warnings, fmt.Sprintf("[%v] %v", path(w, "source"), path(w, "description")))
	}
	return p
}

func asList(v any) []any {
	a, _ := v.([]any)
	return a
}

// keys returns the sorted keys of a JSON object.
func keys(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
