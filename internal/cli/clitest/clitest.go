// Package clitest runs drop-in commands in-process against a real HTTP
// server speaking the generated v0.0.44 API, so command tests exercise the
// same client, encoder and decoder as the shipped binary.
package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-faster/jx"
	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/jobstream"
	"github.com/droverhq/drover/internal/fieldsel"
	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Run is the outcome of one command invocation.
type Run struct {
	Code   int
	Stdout string
	Stderr string
}

// Harness serves h over HTTP and builds command environments that reach it.
type Harness struct {
	t      testing.TB
	client *v0044.Client
	// Env is applied to every invocation; tests may change any field.
	Env clienv.Env
	// Vars is the fake process environment seen by Getenv/Environ.
	Vars map[string]string
}

// New starts a server for h (embed v0044.UnimplementedHandler to answer only
// what a test needs) and returns a harness whose clock is fixed at now.
func New(t testing.TB, h v0044.Handler, now time.Time) *Harness {
	t.Helper()
	srv, err := v0044.NewServer(h, noSecurity{})
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	// The harness honours a field selection as Drover's controller
	// does, so that commands are tested on the records they would get.
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := fieldsel.WithSet(r.Context(), fieldsel.Parse(r.Header.Get(fieldsel.Header)))
		srv.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(ts.Close)
	client, err := v0044.NewClient(ts.URL, anonymous{}, v0044.WithClient(&http.Client{Transport: jobstream.Transport(fieldsel.Transport(nil))}))
	if err != nil {
		t.Fatalf("new client: %v", err)
	}
	hs := &Harness{t: t, client: client, Vars: map[string]string{}}
	hs.Env = clienv.Env{
		Now:      func() time.Time { return now },
		Client:   client,
		User:     clienv.User{Name: "root", UID: 0, GID: 0},
		Hostname: "node0",
		Cwd:      "/home/alice/project",
		Call: func(_ context.Context, method, path string, _, _ any) error {
			return fmt.Errorf("%s %s: not served by the test harness", method, path)
		},
	}
	return hs
}

// Run invokes cmd as prog with args and collects its output.
func (h *Harness) Run(cmd clienv.Command, prog string, stdin string, args ...string) Run {
	h.t.Helper()
	var out, errb bytes.Buffer
	env := h.Env
	env.Prog = prog
	env.Stdin = strings.NewReader(stdin)
	env.Stdout = &out
	env.Stderr = &errb
	env.Getenv = func(k string) string { return h.Vars[k] }
	env.Environ = func() []string {
		var kv []string
		for k, v := range h.Vars {
			kv = append(kv, k+"="+v)
		}
		return kv
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := cmd(ctx, &env, args)
	return Run{Code: code, Stdout: out.String(), Stderr: errb.String()}
}

// Decoder is implemented by every generated wire type.
type Decoder interface {
	Decode(d *jx.Decoder) error
}

// LoadReference decodes a capture from real slurmrestd
// (shared/reference/rest/v0.0.44/name) into dst. Real slurmrestd writes
// `null` for some objects the spec requires (job_resources of a pending job);
// those keys are dropped first, which is how a spec-following server would
// have answered.
func LoadReference(t testing.TB, name string, dst Decoder) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(ReferenceDir(t), "rest", "v0.0.44", name))
	if err != nil {
		t.Fatalf("read reference %s: %v", name, err)
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("parse reference %s: %v", name, err)
	}
	cleaned, err := json.Marshal(dropNulls(doc))
	if err != nil {
		t.Fatalf("re-encode reference %s: %v", name, err)
	}
	if err := dst.Decode(jx.DecodeBytes(cleaned)); err != nil {
		t.Fatalf("decode reference %s: %v", name, err)
	}
}

// ReadReference returns a reference file's bytes (cli/*.out and the like).
func ReadReference(t testing.TB, rel string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(ReferenceDir(t), rel))
	if err != nil {
		t.Fatalf("read reference %s: %v", rel, err)
	}
	return string(raw)
}

// ReferenceRun is a command captured from real Slurm
// (shared/reference/cli/name.{out,err,rc}): what it printed and its exit
// status; a missing .out or .err is empty output.
func ReferenceRun(t testing.TB, name string) Run {
	t.Helper()
	dir := ReferenceDir(t)
	read := func(ext string) string {
		if _, err := os.Stat(filepath.Join(dir, "cli", name+ext)); err != nil {
			return ""
		}
		return ReadReference(t, filepath.Join("cli", name+ext))
	}
	code, err := strconv.Atoi(strings.TrimSpace(read(".rc")))
	if err != nil {
		t.Fatalf("capture %s: bad exit status: %v", name, err)
	}
	return Run{Code: code, Stdout: read(".out"), Stderr: read(".err")}
}

// ReferenceDir locates shared/reference beside the repository (../shared
// from the repository root), or $DROVER_REFERENCE_DIR. Tests that need it
// skip when it is absent.
func ReferenceDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("DROVER_REFERENCE_DIR"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..")
	d := filepath.Join(root, "..", "shared", "reference")
	if _, err := os.Stat(d); err != nil {
		t.Skipf("reference captures not found at %s", d)
	}
	return d
}

func dropNulls(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if c == nil {
				delete(t, k)
				continue
			}
			t[k] = dropNulls(c)
		}
	case []any:
		for i, c := range t {
			t[i] = dropNulls(c)
		}
	}
	return v
}

// ProjectJob keeps only the members of w in sel (every member when sel
// is nil), as Drover's controller answers a field selection.
func ProjectJob(t testing.TB, w *v0044.V0044JobInfo, sel fieldsel.Set) v0044.V0044JobInfo {
	t.Helper()
	if sel == nil {
		return *w
	}
	var e jx.Encoder
	w.Encode(&e)
	var kept jx.Encoder
	kept.ObjStart()
	err := jx.DecodeBytes(e.Bytes()).ObjBytes(func(d *jx.Decoder, key []byte) error {
		raw, err := d.Raw()
		if err != nil {
			return err
		}
		if sel.Has(string(key)) {
			kept.FieldStart(string(key))
			kept.Raw(raw)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("project job record: %v", err)
	}
	kept.ObjEnd()
	var out v0044.V0044JobInfo
	if err := out.Decode(jx.DecodeBytes(kept.Bytes())); err != nil {
		t.Fatalf("decode projected record: %v\n%s", err, kept.Bytes())
	}
	return out
}

type noSecurity struct{}

func (noSecurity) HandleBearerAuth(ctx context.Context, _ v0044.OperationName, _ v0044.BearerAuth) (context.Context, error) {
	return ctx, nil
}
func (noSecurity) HandleToken(ctx context.Context, _ v0044.OperationName, _ v0044.Token) (context.Context, error) {
	return ctx, nil
}
func (noSecurity) HandleUser(ctx context.Context, _ v0044.OperationName, _ v0044.User) (context.Context, error) {
	return ctx, nil
}

// NoCredentials is a security source that sends none, for clients of a
// test server that accepts anyone.
var NoCredentials v0044.SecuritySource = anonymous{}

// anonymous sends no credentials; the tests' server accepts anyone.
type anonymous struct{}

func (anonymous) BearerAuth(context.Context, v0044.OperationName) (v0044.BearerAuth, error) {
	return v0044.BearerAuth{}, ogenerrors.ErrSkipClientSecurity
}
func (anonymous) Token(context.Context, v0044.OperationName) (v0044.Token, error) {
	return v0044.Token{}, ogenerrors.ErrSkipClientSecurity
}
func (anonymous) User(context.Context, v0044.OperationName) (v0044.User, error) {
	return v0044.User{}, ogenerrors.ErrSkipClientSecurity
}
