// Package restd is `drover restd`: slurmrestd for sites that run the REST
// daemon on a host of its own. It serves the controller's slurmrestd API
// by forwarding each request to the controller, after authenticating the
// caller as slurmrestd does: over TCP with an auth/jwt token, which the
// controller checks (rest_auth/jwt); over its unix socket by the peer's
// credentials (rest_auth/local), vouched for to the controller as a host's
// credential service vouches for its users: a credential signed with the
// cluster key for that one request (or, where restd has only the auth/jwt
// key, a short token of it). Nothing else about a request changes, so
// every API version the controller serves is served here as it is.
package restd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/droverhq/drover/internal/failover"
	"github.com/droverhq/drover/internal/jwtauth"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/restapi"
	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/droverhq/drover/internal/usercred"
)

// Options configure a proxy.
type Options struct {
	// Controller is the controller's REST address (http://host:port),
	// for a proxy to one controller (a follower forwarding to its
	// leader, whose Transport picks the host).
	Controller *url.URL
	// Controllers, when set, replace Controller: every controller's REST
	// address in SlurmctldHost order, each request going to whichever is
	// up (internal/failover), as slurmrestd's do.
	Controllers []string
	// Retry bounds how long a request keeps trying them (zero:
	// failover's defaults, Slurm's).
	Retry failover.Options
	// Cluster signs the credentials of the unix socket's callers with
	// the cluster key (nil: Key is used instead).
	Cluster *msgauth.Signer
	// Key is the cluster's auth/jwt key; without it or Cluster the unix
	// socket's callers cannot be vouched for and are refused.
	Key    []byte
	Logger *slog.Logger
	// Now replaces time.Now in tests.
	Now func() time.Time
	// Transport reaches a controller (nil: http.DefaultTransport).
	Transport http.RoundTripper
	// AllPaths forwards every request, the node daemons' protocol and
	// Drover's additions included, and the cluster's own credentials
	// (X-Drover-Auth) as they come: a controller that follows forwards
	// all it gets to the one that leads, which checks them.
	AllPaths bool
	// GatewayStatus is the HTTP status of the answer when the controller
	// cannot be reached (0: 500, as slurmrestd answers).
	GatewayStatus int
	// Unreachable, when set, is offered a forwarding failure first, and
	// answers it itself when it returns true.
	Unreachable func(w http.ResponseWriter, r *http.Request, err error) bool
}

// tokenLifespan is how long a token made for a unix socket caller lives;
// one is reused for half of it.
const tokenLifespan = 10 * time.Minute

// Handler returns the proxy.
func Handler(o Options) http.Handler {
	if o.Now == nil {
		o.Now = time.Now
	}
	next := o.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	p := &proxy{o: o, tokens: map[uint32]cachedToken{}}
	// The unix socket callers' credentials are single use: they are
	// signed below the failover, afresh for each controller tried.
	var rt http.RoundTripper = &vouchTransport{p: p, next: next}
	target := o.Controller
	if len(o.Controllers) > 0 {
		ft, err := failover.New(rt, o.Controllers, o.Retry)
		if err == nil {
			rt = ft
			target, err = url.Parse(ft.Controllers()[0])
		}
		if err != nil {
			// Addresses that are not URLs: every request fails saying
			// so, as one to an unreachable controller does.
			rt, target = failedTransport{err}, &url.URL{Scheme: "http", Host: "controller"}
		}
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if o.Unreachable != nil && o.Unreachable(w, r, err) {
				return
			}
			o.Logger.Error("forward to the controller", "path", r.URL.Path, "err", err)
			code := slurmerr.ControllerConnect
			status := o.GatewayStatus
			if status == 0 {
				status = http.StatusInternalServerError
			}
			restapi.WriteEnvelopeError(w, status, int32(code), code.Message(), err.Error(), "slurmrestd")
		},
		// Job listings are written as they are made: pass them on so.
		FlushInterval: -1,
		Transport:     rt,
	}
	return p
}

// failedTransport fails every request with err.
type failedTransport struct{ err error }

func (f failedTransport) RoundTrip(*http.Request) (*http.Response, error) { return nil, f.err }

type proxy struct {
	o  Options
	rp *httputil.ReverseProxy

	mu     sync.Mutex
	tokens map[uint32]cachedToken
	// names label the uids the kernel vouches for on the socket.
	names usercred.NameCache
}

type cachedToken struct {
	token string
	until time.Time
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.o.AllPaths && !public(r.URL.Path) {
		restapi.NotFound(w, r)
		return
	}
	cred, local, err := restapi.PeerCred(r)
	switch {
	case local && err != nil:
		p.refuse(w, r, fmt.Errorf("%w: peer credentials: %v", jwtauth.ErrInvalid, err))
		return
	case local:
		r.Header.Del("Authorization")
		r.Header.Del("X-SLURM-USER-NAME")
		r.Header.Del("X-SLURM-USER-TOKEN")
		r.Header.Del(msgauth.Header)
		if p.o.Cluster != nil {
			if err := keepBody(r); err != nil {
				p.refuse(w, r, err)
				return
			}
			u := msgauth.UserID{UID: cred.Uid, GID: cred.Gid, Name: p.names.Name(cred.Uid)}
			r = r.WithContext(context.WithValue(r.Context(), vouchKey{}, u))
			break
		}
		tok, err := p.tokenFor(cred.Uid)
		if err != nil {
			p.refuse(w, r, err)
			return
		}
		r.Header.Set("X-SLURM-USER-TOKEN", tok)
	case p.o.AllPaths && r.Header.Get(msgauth.Header) != "":
		// A node daemon's message, or a user credential of a host's
		// credential service, for the controller to check: both are
		// bound to this very request, and pass as they are.
	case r.Header.Get("X-SLURM-USER-TOKEN") == "" && r.Header.Get("Authorization") == "":
		// The controller trusts a bare user name from its own host
		// only; from here it would be anyone's word.
		p.refuse(w, r, fmt.Errorf("%w: no token from %s (rest_auth/jwt)", jwtauth.ErrInvalid, r.RemoteAddr))
		return
	}
	p.rp.ServeHTTP(w, r)
}

// keepBody reads r's body, which a credential is signed for, refusing
// one the controller would not take.
func keepBody(r *http.Request) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, restapi.MaxBody+1))
	if err != nil || len(b) > restapi.MaxBody {
		return fmt.Errorf("%w: request body unreadable or over %d bytes", jwtauth.ErrInvalid, restapi.MaxBody)
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	return nil
}

// vouchKey carries, in a forwarded request's context, the unix socket
// caller (msgauth.UserID) vouchTransport signs a credential of.
type vouchKey struct{}

// vouchTransport signs, with the cluster key, a credential of the unix
// socket's caller for each request it sends, as the request goes.
type vouchTransport struct {
	p    *proxy
	next http.RoundTripper
}

func (t *vouchTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	u, ok := r.Context().Value(vouchKey{}).(msgauth.UserID)
	if !ok {
		return t.next.RoundTrip(r)
	}
	var body []byte
	if r.Body != nil && r.Body != http.NoBody {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		body = b
	}
	cred, err := t.p.o.Cluster.SignUser(u, msgauth.Controller, r.Method, r.URL.RequestURI(), msgauth.BodyHash(body))
	if err != nil {
		return nil, fmt.Errorf("vouch for uid %d: %w", u.UID, err)
	}
	out := r.Clone(r.Context())
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	out.Header.Set(msgauth.Header, cred)
	return t.next.RoundTrip(out)
}

// public reports whether path is part of the slurmrestd API rather than
// the controller's own protocol with its node daemons.
func public(path string) bool {
	return strings.HasPrefix(path, "/slurm/") || strings.HasPrefix(path, "/slurmdb/")
}

func (p *proxy) refuse(w http.ResponseWriter, r *http.Request, err error) {
	p.o.Logger.Warn("authentication refused", "path", r.URL.Path, "remote", r.RemoteAddr, "err", err)
	restapi.WriteAuthError(w, err)
}

// tokenFor returns a token naming uid's user, made with the cluster key.
func (p *proxy) tokenFor(uid uint32) (string, error) {
	if p.o.Key == nil {
		return "", fmt.Errorf("%w: rest_auth/local needs the cluster key, or the auth/jwt key (AuthAltParameters=jwt_key=), readable by restd", jwtauth.ErrInvalid)
	}
	now := p.o.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if t, ok := p.tokens[uid]; ok && now.Before(t.until) {
		return t.token, nil
	}
	id, err := usercred.Lookup(uid)
	if err != nil {
		return "", fmt.Errorf("%w: uid %d: %v", jwtauth.ErrInvalid, uid, err)
	}
	tok, err := jwtauth.Issue(p.o.Key, id.Name, tokenLifespan, now)
	if err != nil {
		return "", err
	}
	p.tokens[uid] = cachedToken{token: tok, until: now.Add(tokenLifespan / 2)}
	return tok, nil
}
