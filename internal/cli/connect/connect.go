// Package connect builds a drop-in command's environment: it finds the
// controller from slurm.conf (SLURM_CONF) and Drover's settings, and makes
// the generated slurmrestd client that is the commands' only way to it.
// On a controller's host the unix socket is used, authenticated by the
// peer's credentials; elsewhere TCP, each request carrying a credential
// of the host's credential service (internal/sack), or the user's auth/jwt
// token when SLURM_JWT is set. Over TCP every SlurmctldHost is tried, the
// one that answered last first (internal/failover).
package connect

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-faster/jx"
	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/droverhq/drover/internal/cli/clienv"
	"github.com/droverhq/drover/internal/cli/jobstream"
	"github.com/droverhq/drover/internal/failover"
	"github.com/droverhq/drover/internal/fieldsel"
	"github.com/droverhq/drover/internal/sack"
	"github.com/droverhq/drover/internal/slurmconf"
	"github.com/droverhq/drover/internal/tlsconf"
	v0044 "github.com/droverhq/drover/openapi/v0044"
	v0045 "github.com/droverhq/drover/openapi/v0045"
)

// Target says how to reach the controller.
type Target struct {
	// Socket is the controller's unix socket, when reachable.
	Socket string
	// URL is the first controller's TCP address (http://host:port):
	// Controllers[0] when there are several.
	URL string
	// Controllers are every controller's TCP address, SlurmctldHost
	// order (primary first); nil: URL alone.
	Controllers []string
	// Retry bounds how long a request keeps trying the controllers
	// (zero: failover's defaults, Slurm's).
	Retry failover.Options
	// Sack is the host's credential service, which vouches for the
	// caller over TCP (empty: none; SLURM_JWT or the socket then).
	Sack string
	// SrunPorts is SrunPortRange (0, 0: any port).
	SrunPorts [2]int
	// TLSCA is the CA certificate the cluster's TCP traffic is checked
	// with when TLSType=tls/s2n ("": plain HTTP).
	TLSCA string
	// MpiDefault is slurm.conf's MpiDefault: the MPI type of steps that
	// ask for none ("": none).
	MpiDefault string
}

// TLS is the client side of the cluster's TLS (nil: plain HTTP).
func (t Target) TLS() (*tls.Config, error) {
	if t.TLSCA == "" {
		return nil, nil
	}
	return tlsconf.Config{Enabled: true, CAFile: t.TLSCA}.Client()
}

// Resolve finds the controller: DROVER_SOCKET / DROVER_URL (one URL, or
// several separated by commas) first, then slurm.conf (SLURM_CONF, or the
// one the commands were installed with), then DROVER_REST_URL, then
// /etc/slurm/slurm.conf.
func Resolve() (Target, error) {
	t := Target{Socket: os.Getenv("DROVER_SOCKET"), Sack: os.Getenv(sack.EnvSocket)}
	t.Controllers = splitURLs(os.Getenv("DROVER_URL"))
	if len(t.Controllers) > 0 {
		t.URL = t.Controllers[0]
	}
	if t.Socket != "" || t.URL != "" {
		return t, nil
	}
	path := os.Getenv("SLURM_CONF")
	if path == "" {
		path = clienv.DefaultConfPath()
		if u := os.Getenv("DROVER_REST_URL"); u != "" && path == clienv.DefaultSlurmConf {
			// A command with no configuration of its own reaches the
			// REST address drover dev printed, rather than whatever
			// cluster /etc/slurm/slurm.conf is.
			t.URL = u
			return t, nil
		}
	}
	// A command resolves more than once (its client, then srun's own
	// port): slurmconf.LoadShared reads the file once while it stays the
	// same.
	sc, err := slurmconf.LoadShared(path)
	if err != nil {
		return Target{}, err
	}
	typ, _ := sc.Value("TLSType")
	params, _ := sc.Value("TLSParameters")
	tc, err := tlsconf.FromSlurm(typ, params, path)
	if err != nil {
		return Target{}, err
	}
	for _, a := range sc.ControllerAddrs() {
		t.Controllers = append(t.Controllers, tc.Scheme()+"://"+a)
	}
	t.URL = t.Controllers[0]
	t.Retry = failover.Windows(sc.MessageTimeout, sc.SlurmctldTimeout)
	t.Sack = sack.Socket(sc.ClusterName)
	if tc.Enabled {
		t.TLSCA = tc.CAFile
	}
	t.MpiDefault = sc.MpiDefault
	ports, _ := sc.Value("SrunPortRange")
	if lo, hi, err := slurmconf.ParsePortRange(ports); err == nil {
		t.SrunPorts = [2]int{lo, hi}
	}
	if socket := filepath.Join(sc.StateSaveLocation, "drover.sock"); controllerHere(sc) {
		if st, err := os.Stat(socket); err == nil && st.Mode()&os.ModeSocket != 0 {
			t.Socket = socket
			if !reachable(socket) && (os.Getenv("SLURM_JWT") != "" || reachable(t.Sack)) {
				// The controller of this host is down: the others are
				// reached over TCP, vouched for as any host's callers.
				t.Socket = ""
			}
		}
	}
	return t, nil
}

// splitURLs reads DROVER_URL: URLs separated by commas.
func splitURLs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}

// reachable reports whether a unix socket ("@name": abstract) accepts a
// connection now. A controller that stopped without removing its socket
// leaves the file behind, refusing.
func reachable(socket string) bool {
	conn, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// controllerHere reports whether this host is a controller's (any
// SlurmctldHost by name, or a loopback address): only there is the
// controller's unix socket the controller's own, each controller keeping
// its own in its StateSaveLocation. Hosts that share a file system with
// the controller (several test hosts, a login host mounting the state
// folder) go over the network as a real host would.
func controllerHere(sc *slurmconf.Config) bool {
	if len(sc.SlurmctldHosts) == 0 {
		return true
	}
	me, err := os.Hostname()
	short, _, _ := strings.Cut(me, ".")
	for _, h := range sc.SlurmctldHosts {
		if h.Name == "localhost" {
			return true
		}
		if ip := net.ParseIP(h.Addr); ip != nil && ip.IsLoopback() {
			return true
		}
		name, _, _ := strings.Cut(h.Name, ".")
		if err == nil && short == name {
			return true
		}
	}
	return false
}

// Client returns the generated client for a target.
func Client(t Target, userName string) (*v0044.Client, error) {
	hc := &http.Client{Timeout: t.timeout(), Transport: jobstream.Transport(fieldsel.Transport(transport(t)))}
	return v0044.NewClient(t.base(), userSource{name: userName, socket: t.Socket != ""}, v0044.WithClient(hc))
}

// Client45 returns the generated v0.0.45 client for a target, sharing the
// v0.0.44 client's transport and credentials.
func Client45(t Target, userName string) (*v0045.Client, error) {
	hc := &http.Client{Timeout: t.timeout(), Transport: transport(t)}
	return v0045.NewClient(t.base(), userSource45{userSource{name: userName, socket: t.Socket != ""}}, v0045.WithClient(hc))
}

// userSource45 is userSource for the v0.0.45 client.
type userSource45 struct{ s userSource }

func (u userSource45) BearerAuth(context.Context, v0045.OperationName) (v0045.BearerAuth, error) {
	return v0045.BearerAuth{}, ogenerrors.ErrSkipClientSecurity
}

func (u userSource45) Token(ctx context.Context, _ v0045.OperationName) (v0045.Token, error) {
	t, err := u.s.Token(ctx, "")
	return v0045.Token{APIKey: t.APIKey}, err
}

func (u userSource45) User(ctx context.Context, _ v0045.OperationName) (v0045.User, error) {
	n, err := u.s.User(ctx, "")
	return v0045.User{APIKey: n.APIKey}, err
}

// transports holds one transport per target, shared by the generated
// client and Call: a command's requests then go over one kept-alive
// connection instead of a new one each (srun makes several in a row),
// and all go first to the controller that answered last.
var transports sync.Map // Target.key() -> http.RoundTripper

// key is t as a map key (a Target, holding a slice, is not one).
func (t Target) key() string { return fmt.Sprintf("%#v", t) }

// transport is the stack under the generated client: the failover
// across the controllers, above the credential service's transport, so
// that each attempt carries a credential of its own (they are single
// use), above TLS.
func transport(t Target) http.RoundTripper {
	if rt, ok := transports.Load(t.key()); ok {
		return rt.(http.RoundTripper)
	}
	var rt http.RoundTripper = http.DefaultTransport
	if t.Socket == "" && t.TLSCA != "" {
		// A CA that cannot be read leaves the default roots, which do
		// not know the cluster's CA: the request then fails saying so.
		if c, err := t.TLS(); err == nil {
			rt = tlsconf.Transport(http.DefaultTransport.(*http.Transport), c)
		}
	}
	if t.Socket == "" && t.Sack != "" && os.Getenv("SLURM_JWT") == "" {
		rt = &sack.Transport{Next: rt, Client: sack.NewClient(t.Sack)}
	}
	urls := t.Controllers
	if len(urls) == 0 {
		urls = []string{t.URL}
	}
	if t.Socket != "" {
		sock := t.Socket
		rt = &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, "unix", sock)
			},
			MaxIdleConnsPerHost: 4,
			IdleConnTimeout:     90 * time.Second,
		}
		// The one controller of this host: a standby answer is still
		// waited out, as the election ends.
		urls = []string{t.base()}
	}
	if ft, err := failover.New(rt, urls, t.Retry); err == nil {
		rt = ft
	} else {
		// No usable address (a DROVER_URL that is not one): the
		// request fails saying why.
		rt = failedTransport{err}
	}
	got, _ := transports.LoadOrStore(t.key(), rt)
	return got.(http.RoundTripper)
}

// failedTransport fails every request with err.
type failedTransport struct{ err error }

func (f failedTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

// answerTimeout is how long a controller that took a request has to
// answer it.
const answerTimeout = 60 * time.Second

// timeout bounds a whole request: the failover window, in which it goes
// round the controllers while they elect a leader, then the time to
// answer. Slurm's commands likewise wait out 1.5 × SlurmctldTimeout of
// standby answers before they fail.
func (t Target) timeout() time.Duration {
	w := t.Retry.StandbyWindow
	if w <= 0 {
		w = failover.DefaultStandbyWindow
	}
	return max(w, t.Retry.ConnectWindow) + answerTimeout
}

// base is the URL requests to t are made under.
func (t Target) base() string {
	if t.Socket != "" {
		return "http://localhost"
	}
	return t.URL
}

// userSource sends X-SLURM-USER-NAME over TCP; over the unix socket the
// kernel vouches for the caller.
type userSource struct {
	name   string
	socket bool
}

func (s userSource) BearerAuth(context.Context, v0044.OperationName) (v0044.BearerAuth, error) {
	return v0044.BearerAuth{}, ogenerrors.ErrSkipClientSecurity
}

func (s userSource) Token(context.Context, v0044.OperationName) (v0044.Token, error) {
	if tok := os.Getenv("SLURM_JWT"); tok != "" && !s.socket {
		return v0044.Token{APIKey: tok}, nil
	}
	return v0044.Token{}, ogenerrors.ErrSkipClientSecurity
}

func (s userSource) User(context.Context, v0044.OperationName) (v0044.User, error) {
	if s.socket {
		return v0044.User{}, ogenerrors.ErrSkipClientSecurity
	}
	return v0044.User{APIKey: s.name}, nil
}

// Env builds the environment of a command run by this process.
func Env(prog string) (*clienv.Env, error) {
	me := clienv.User{UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
	if u, err := user.Current(); err == nil {
		me.Name = u.Username
	} else {
		me.Name = strconv.Itoa(os.Getuid())
	}
	host, _ := os.Hostname()
	cwd, _ := os.Getwd()
	env := &clienv.Env{
		Prog: prog, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Getenv: os.Getenv, Environ: os.Environ, Now: time.Now,
		User: me, Hostname: host, Cwd: cwd,
	}
	t, err := Resolve()
	if err != nil {
		// Commands that need no controller (scontrol show hostnames, -V)
		// still work; the rest report the failure to connect.
		// Nothing to wait for: one try, which fails as Slurm's
		// commands do without their configuration.
		t = Target{URL: "http://127.0.0.1:6817", Retry: failover.Options{ConnectWindow: time.Nanosecond}}
	}
	c, err := Client(t, me.Name)
	if err != nil {
		return nil, err
	}
	env.Client = c
	if env.Client45, err = Client45(t, me.Name); err != nil {
		return nil, err
	}
	env.Call = func(ctx context.Context, method, path string, in, out any) error {
		return CallTarget(ctx, t, method, path, in, out)
	}
	return env, nil
}

// RequeuePath is Drover's one addition to the slurmrestd paths: v0.0.44
// has no requeue operation, so scontrol requeue posts here. The answer is
// slurmrestd's payload-less envelope.
const RequeuePath = "/drover/v1/job/{job_id}/requeue"

// Requeue asks the controller to requeue a job (scontrol requeue, or
// requeuehold when hold is set).
func Requeue(ctx context.Context, jobID string, hold bool) error {
	path := strings.Replace(RequeuePath, "{job_id}", url.PathEscape(jobID), 1)
	if hold {
		path += "?hold=true"
	}
	return Call(ctx, http.MethodPost, path, nil, nil)
}

// Call sends one of Drover's own requests (the /drover/v1/ paths that
// slurmrestd's API lacks: requeue, job steps) with the caller's identity,
// as the generated client sends its own: in is sent as JSON when not nil,
// and a successful answer is decoded into out when not nil. A refusal
// comes back in slurmrestd's error envelope and is returned as a
// *RequestError.
func Call(ctx context.Context, method, path string, in, out any) error {
	t, err := Resolve()
	if err != nil {
		return err
	}
	return CallTarget(ctx, t, method, path, in, out)
}

// CallTarget is Call to a known target.
func CallTarget(ctx context.Context, t Target, method, path string, in, out any) error {
	hc := &http.Client{Timeout: t.timeout(), Transport: transport(t)}
	base := t.base()
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if t.Socket == "" {
		if tok := os.Getenv("SLURM_JWT"); tok != "" {
			req.Header.Set("X-SLURM-USER-TOKEN", tok)
		}
		if me, err := user.Current(); err == nil {
			req.Header.Set("X-SLURM-USER-NAME", me.Username)
		}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode == http.StatusOK {
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("unexpected answer to %s %s: %w", method, path, err)
		}
		return nil
	}
	var env v0044.V0044OpenapiResp
	if err := env.Decode(jx.DecodeBytes(data)); err != nil || len(env.Errors) == 0 {
		return &HTTPError{Status: resp.StatusCode, Body: strings.TrimSpace(string(data))}
	}
	e := env.Errors[0]
	return &RequestError{Code: e.ErrorNumber.Or(1), Message: e.Error.Or("Unspecified error"), Description: e.Description.Or(""), Status: resp.StatusCode}
}

// RequestError is a controller refusal with Slurm's error number.
type RequestError struct {
	Code    int32
	Message string
	// Description is slurmrestd's request-specific explanation, and
	// Status the answer's HTTP status.
	Description string
	Status      int
}

func (e *RequestError) Error() string { return e.Message }

// HTTPError is an answer that is neither a success nor slurmrestd's
// error envelope (a controller that does not know the path answers 404
// so).
type HTTPError struct {
	Status int
	Body   string
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("unexpected answer (HTTP %d): %s", e.Status, e.Body)
}
