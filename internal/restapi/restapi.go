// Package restapi is the controller's HTTP front: one mux for every API
// version's bridge and for the node protocol, served on TCP and on a unix
// socket, with authentication, body limits and slurmrestd's answers for
// malformed requests and unknown paths.
package restapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ogen-go/ogen/ogenerrors"

	"github.com/droverhq/drover/bridge/adapt"
	"github.com/droverhq/drover/bridge/droverv1"
	bridge42 "github.com/droverhq/drover/bridge/v0042"
	bridge43 "github.com/droverhq/drover/bridge/v0043"
	bridge44 "github.com/droverhq/drover/bridge/v0044"
	bridge45 "github.com/droverhq/drover/bridge/v0045"
	"github.com/droverhq/drover/internal/authctx"
	"github.com/droverhq/drover/internal/controller"
	"github.com/droverhq/drover/internal/controller/nodeapi"
	"github.com/droverhq/drover/internal/droverapi"
	"github.com/droverhq/drover/internal/fieldsel"
	"github.com/droverhq/drover/internal/jwtauth"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/slurmerr"
	"github.com/droverhq/drover/internal/usercred"
	api42 "github.com/droverhq/drover/openapi/v0042"
	api43 "github.com/droverhq/drover/openapi/v0043"
	api44 "github.com/droverhq/drover/openapi/v0044"
	api45 "github.com/droverhq/drover/openapi/v0045"
)

// MaxBody is the largest request body accepted unless Options say
// otherwise (slurmctld refuses batch scripts over 4 MB by default;
// environments add some).
const MaxBody = 16 << 20

// NotFoundText is slurmrestd's answer to an unknown path.
const NotFoundText = "Unable to find requested URL endpoint. Please query the '/openapi/v3' endpoint or visit 'https://slurm.schedmd.com/rest_api.html' for the OpenAPI specification which includes a list of all possible slurmrestd endpoints."

// Options configure the HTTP front.
type Options struct {
	// JWT is auth/jwt (nil: tokens are refused): the key tokens are
	// checked with and issued by, and AuthAltParameters.
	JWT *JWT
	// MaxBody is the largest request body accepted (0: MaxBody); larger
	// ones are refused with 413.
	MaxBody int64
	// Observe, when set, is told each request's operation (its OpenAPI
	// operationId, or the route it matched), status and duration.
	Observe func(op string, status int, took time.Duration)
}

// JWT is auth/jwt's configuration.
type JWT struct {
	Key    []byte
	Config jwtauth.Config
	// Now is the clock tokens are checked against (default time.Now).
	Now func() time.Time
}

func (j *JWT) now() time.Time {
	if j.Now != nil {
		return j.Now()
	}
	return time.Now()
}

// Handler returns the controller's complete HTTP handler.
func Handler(ctl *controller.Controller, logger *slog.Logger, opts Options) (http.Handler, error) {
	b44 := bridge44.NewServer(ctl)
	srv44, err := api44.NewServer(b44, acceptAny[api44.OperationName, api44.BearerAuth, api44.Token, api44.User]{},
		api44.WithErrorHandler(errorHandler),
		api44.WithNotFound(NotFound),
		api44.WithMethodNotAllowed(func(w http.ResponseWriter, r *http.Request, allowed string) { NotFound(w, r) }),
	)
	if err != nil {
		return nil, fmt.Errorf("v0.0.44 server: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/slurm/v0.0.44/", srv44)
	mux.Handle("/slurmdb/v0.0.44/", srv44)
	finders := []routeFinder{func(m, p string) (string, bool) {
		r, ok := srv44.FindRoute(m, p)
		return r.OperationID(), ok
	}}
	// The other versions go through v0.0.44's bridge (bridge/adapt).
	others := []struct {
		version string
		new     func() (http.Handler, error)
		find    func(http.Handler) routeFinder
	}{
		{"v0.0.42", func() (http.Handler, error) {
			return api42.NewServer(&bridge42.Adapter{Next: b44}, acceptAny[api42.OperationName, api42.BearerAuth, api42.Token, api42.User]{},
				api42.WithErrorHandler(errorHandler), api42.WithNotFound(NotFound), api42.WithMethodNotAllowed(notAllowed))
		}, func(h http.Handler) routeFinder {
			return func(m, p string) (string, bool) {
				r, ok := h.(*api42.Server).FindRoute(m, p)
				return r.OperationID(), ok
			}
		}},
		{"v0.0.43", func() (http.Handler, error) {
			return api43.NewServer(&bridge43.Adapter{Next: b44}, acceptAny[api43.OperationName, api43.BearerAuth, api43.Token, api43.User]{},
				api43.WithErrorHandler(errorHandler), api43.WithNotFound(NotFound), api43.WithMethodNotAllowed(notAllowed))
		}, func(h http.Handler) routeFinder {
			return func(m, p string) (string, bool) {
				r, ok := h.(*api43.Server).FindRoute(m, p)
				return r.OperationID(), ok
			}
		}},
		{"v0.0.45", func() (http.Handler, error) {
			return api45.NewServer(bridge45.NewServer(b44), acceptAny[api45.OperationName, api45.BearerAuth, api45.Token, api45.User]{},
				api45.WithErrorHandler(errorHandler), api45.WithNotFound(NotFound), api45.WithMethodNotAllowed(notAllowed))
		}, func(h http.Handler) routeFinder {
			return func(m, p string) (string, bool) {
				r, ok := h.(*api45.Server).FindRoute(m, p)
				return r.OperationID(), ok
			}
		}},
	}
	for _, o := range others {
		srv, err := o.new()
		if err != nil {
			return nil, fmt.Errorf("%s server: %w", o.version, err)
		}
		finders = append(finders, o.find(srv))
		mux.Handle("/slurm/"+o.version+"/", srv)
		mux.Handle("/slurmdb/"+o.version+"/", srv)
		mux.HandleFunc("/slurm/"+o.version, NotFound)
		mux.HandleFunc("/slurmdb/"+o.version, NotFound)
	}
	droverv1.Routes(mux, ctl)
	mux.Handle(nodePrefix, nodeapi.Handler(ctl))
	mux.HandleFunc("/", NotFound)
	// Without these, ServeMux answers a subtree's name without its slash
	// ("/slurm/v0.0.44") with an HTML redirect; slurmrestd says 404.
	for _, p := range []string{"/slurm/v0.0.44", "/slurmdb/v0.0.44", strings.TrimSuffix(nodePrefix, "/")} {
		mux.HandleFunc(p, NotFound)
	}
	f := &front{next: mux, jobList: b44.ServeJobList, logger: logger, opts: opts, ctl: ctl, finders: finders}
	mux.HandleFunc("POST "+TokenPath, f.handleToken)
	if opts.Observe != nil {
		return observed(f, mux, finders, opts.Observe), nil
	}
	return f, nil
}

type front struct {
	next http.Handler
	// jobList streams GET /slurm/v0.0.44/jobs/ answers; it declines
	// requests the generated server must answer.
	jobList func(http.ResponseWriter, *http.Request) bool
	logger  *slog.Logger
	opts    Options
	ctl     *controller.Controller
	// finders name the operation a refused request was for, to shape
	// its error answer.
	finders []routeFinder
}

type bodyKey struct{}

func (f *front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// who sent the request, once authenticated, for sdiag's RPCs by user.
	var who controller.Identity
	var known bool
	if f.ctl != nil {
		stats := f.ctl.StatsRef()
		// sdiag's "Server thread count": the requests in hand now.
		defer stats.Serving()()
		// The handler names the request's kind on the note; it is
		// counted with its time and sender once answered.
		ctx, note := controller.WithRPCNote(r.Context())
		r = r.WithContext(ctx)
		begin := time.Now()
		defer func() { stats.Served(note, who, known, time.Since(begin)) }()
	}
	limit := f.opts.MaxBody
	if limit <= 0 {
		limit = MaxBody
	}
	if r.ContentLength > limit {
		http.Error(w, "Request body too large", http.StatusRequestEntityTooLarge)
		return
	}
	var body, raw []byte
	if r.Body != nil && r.Method != http.MethodGet {
		b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err != nil {
			http.Error(w, "Failure during parsing", http.StatusBadRequest)
			return
		}
		if int64(len(b)) > limit {
			http.Error(w, "Request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		raw = b
		if len(bytes.TrimSpace(b)) == 0 {
			// Only white space is no body at all, as slurmrestd reads it
			// (a submission without one lacks its script).
			b = nil
		}
		body = bridge44.NormalizeBody(r.Method, r.URL.Path, b)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
	}
	if strings.HasPrefix(path.Clean(r.URL.Path), nodePrefix) {
		// The node daemons' messages carry their own proof, checked by
		// the controller whatever the transport (nodeapi.Handler).
		// The path is judged cleaned: "/drover/v1/node/../x" is not one.
		f.next.ServeHTTP(w, r)
		return
	}
	caller, err := f.authenticate(r, raw)
	if err != nil {
		f.logger.Info("authentication failed", "source", r.RemoteAddr, "path", r.URL.Path, "err", err)
		WriteAuthError(w, err)
		return
	}
	who, known = caller.Identity, true
	ctx := authctx.With(r.Context(), caller)
	if h := r.Header.Get(fieldsel.Header); h != "" && r.Method == http.MethodGet {
		ctx = fieldsel.WithSet(ctx, fieldsel.Parse(h))
	}
	ctx = context.WithValue(ctx, bodyKey{}, body)
	// Only submissions and allocations use the request id; it is checked
	// on whatever request carries one, so that a client's bad ids show
	// on its first request of any kind.
	if ids, named := r.Header[http.CanonicalHeaderKey(droverapi.RequestIDHeader)]; named {
		if len(ids) != 1 || !droverapi.ValidRequestID(ids[0]) {
			f.badRequestID(w, r, ids)
			return
		}
		ctx = controller.WithRequestID(ctx, ids[0])
	}
	r = r.WithContext(ctx)
	if f.jobList(w, r) {
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == bridge44.JobsStatePath {
		rec := &bridge44.StateRecorder{ResponseWriter: w, Status: http.StatusOK}
		f.next.ServeHTTP(rec, r)
		body := bridge44.AddStateMembers(rec.Buf.Bytes())
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Status)
		w.Write(body)
		return
	}
	f.next.ServeHTTP(w, r)
}

// badRequestID refuses a request whose RequestIDHeader is not one valid
// id. Ignoring it would submit a job the client believes safe to retry,
// and its retry would make a second one; a refusal shows the client's
// fault at once. The answer is 400 with slurmrestd's error envelope
// (ESLURM_REST_INVALID_QUERY, which slurmrestd gives a request it cannot
// read), shaped to the operation's error answer.
func (f *front) badRequestID(w http.ResponseWriter, r *http.Request, ids []string) {
	f.logger.Info("invalid request id", "source", r.RemoteAddr, "path", r.URL.Path, "values", len(ids))
	op := ""
	for _, find := range f.finders {
		if id, ok := find(r.Method, r.URL.Path); ok {
			op = id
			break
		}
	}
	desc := fmt.Sprintf("%s must be one value of 1 to %d characters of A-Z, a-z, 0-9, _ and -", droverapi.RequestIDHeader, droverapi.MaxRequestIDLen)
	writeShaped(w, r, op, http.StatusBadRequest, envelopeError{int32(slurmerr.InvalidQuery), slurmerr.InvalidQuery.Message(), desc, droverapi.RequestIDHeader})
}

type connKey struct{}

// ConnContext records the connection so that requests on the unix socket
// can be authenticated by the peer's credentials (SO_PEERCRED), as
// slurmrestd's rest_auth/local does.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, &connInfo{conn: c})
}

// connInfo is a connection and, for a unix socket, its peer's
// credentials, read once for all the requests it carries: the peer of a
// connected socket cannot change.
type connInfo struct {
	conn net.Conn
	once sync.Once
	cred *syscall.Ucred
	err  error
}

func (ci *connInfo) peer(uc *net.UnixConn) (*syscall.Ucred, error) {
	ci.once.Do(func() { ci.cred, ci.err = usercred.PeerCred(uc) })
	return ci.cred, ci.err
}

var errAuth = errors.New("authentication failure")

// PeerCred returns the credentials of the process at the other end of
// r's connection when it came over a unix socket served through
// ConnContext (ok false for TCP).
func PeerCred(r *http.Request) (cred *syscall.Ucred, ok bool, err error) {
	ci, _ := r.Context().Value(connKey{}).(*connInfo)
	if ci == nil {
		return nil, false, nil
	}
	uc, isUnix := ci.conn.(*net.UnixConn)
	if !isUnix {
		return nil, false, nil
	}
	cred, err = ci.peer(uc)
	return cred, true, err
}

// nodePrefix is where the node daemons' protocol is served.
const nodePrefix = "/drover/v1/node/"

// authenticate says who sent r, whose body was raw. Nothing the network
// says is believed without proof: on the unix socket the kernel vouches
// for the peer (SO_PEERCRED, as rest_auth/local); over TCP the caller
// brings a credential signed with the cluster key by its host's
// credential service (as auth/slurm's sackd), or an auth/jwt token.
func (f *front) authenticate(r *http.Request, raw []byte) (authctx.Caller, error) {
	if cred, ok, err := PeerCred(r); ok {
		if err != nil {
			return authctx.Caller{}, fmt.Errorf("%w: %v", errAuth, err)
		}
		return cachedIdentity(cred.Uid, cred.Gid, fmt.Sprintf("unix:pid=%d", cred.Pid))
	}
	host, port, _ := net.SplitHostPort(r.RemoteAddr)
	source := net.JoinHostPort(host, port)
	if r.Header.Get(msgauth.Header) != "" {
		return f.credCaller(r, raw, source)
	}
	token, bearer := r.Header.Get("X-SLURM-USER-TOKEN"), r.Header.Get("Authorization")
	if token != "" || bearer != "" {
		return f.tokenCaller(r, token, bearer, source)
	}
	return authctx.Caller{}, fmt.Errorf("%w: TCP clients need a credential from their host's credential service (drover sackd) or an auth/jwt token, or must use the unix socket", errAuth)
}

// credCaller authenticates a request by the user credential its host's
// credential service signed for it with the cluster key: the uid and gid
// that service saw on its socket, for this very request. Only root and
// SlurmUser may act as another user (X-SLURM-USER-NAME), as with tokens.
func (f *front) credCaller(r *http.Request, raw []byte, source string) (authctx.Caller, error) {
	claims, err := f.ctl.Auth().Verify(r.Header.Get(msgauth.Header), r.Method, r.URL.RequestURI(), raw)
	if err != nil {
		return authctx.Caller{}, err
	}
	if claims.Kind != msgauth.KindUser {
		return authctx.Caller{}, fmt.Errorf("%w: a %s token from %s is no user's credential", errAuth, claims.Kind, claims.Issuer())
	}
	uid, gid := *claims.UID, *claims.GID
	if as := r.Header.Get("X-SLURM-USER-NAME"); as != "" {
		if !f.ctl.IsSlurmUser(uid) {
			id, err := cachedLookupName(as)
			if err != nil || id.UID != uid {
				return authctx.Caller{}, fmt.Errorf("%w: attempt to authenticate as alternate user %s from non-SlurmUser uid %d", jwtauth.ErrInvalid, as, uid)
			}
		}
		id, err := cachedLookupName(as)
		if err != nil {
			return authctx.Caller{}, fmt.Errorf("%w: %v", errAuth, err)
		}
		uid, gid = id.UID, id.GID
	}
	return cachedIdentity(uid, gid, source+" via "+claims.Issuer())
}

// tokenCaller authenticates a request by its auth/jwt token, as
// slurmrestd's rest_auth/jwt and slurmctld's auth/jwt do together: the
// token (X-SLURM-USER-TOKEN, or Authorization: Bearer, not both) must be
// an HS256 token of the cluster's key, unexpired; it names its user, and
// only a token of root or SlurmUser may act as the X-SLURM-USER-NAME
// given.
func (f *front) tokenCaller(r *http.Request, token, bearer, source string) (authctx.Caller, error) {
	j := f.opts.JWT
	if j == nil {
		return authctx.Caller{}, fmt.Errorf("%w: auth/jwt is not configured (AuthAltTypes)", jwtauth.ErrInvalid)
	}
	if token != "" && bearer != "" {
		return authctx.Caller{}, fmt.Errorf("%w: X-SLURM-USER-TOKEN and Authorization both given", jwtauth.ErrInvalid)
	}
	if bearer != "" {
		t, ok := strings.CutPrefix(bearer, "Bearer ")
		if !ok {
			return authctx.Caller{}, fmt.Errorf("%w: Authorization is not a bearer token", jwtauth.ErrInvalid)
		}
		token = t
	}
	name, err := jwtauth.Verify(j.Key, strings.TrimSpace(token), j.now())
	if err != nil {
		return authctx.Caller{}, err
	}
	id, err := cachedLookupName(name)
	if err != nil {
		return authctx.Caller{}, fmt.Errorf("%w: token user %s: %v", jwtauth.ErrInvalid, name, err)
	}
	if as := r.Header.Get("X-SLURM-USER-NAME"); as != "" && as != name {
		if !f.ctl.IsSlurmUser(id.UID) {
			return authctx.Caller{}, fmt.Errorf("%w: attempt to authenticate as alternate user %s from non-SlurmUser %s", jwtauth.ErrInvalid, as, name)
		}
		if id, err = cachedLookupName(as); err != nil {
			return authctx.Caller{}, fmt.Errorf("%w: %v", jwtauth.ErrInvalid, err)
		}
	}
	return cachedIdentity(id.UID, id.GID, source)
}

func identityFor(uid, gid uint32, source string) (authctx.Caller, error) {
	c := authctx.Caller{Identity: controller.Identity{UID: uid, GID: gid}, Source: source}
	if id, err := usercred.Lookup(uid); err == nil {
		c.User = id.Name
	} else {
		c.User = strconv.FormatUint(uint64(uid), 10)
	}
	c.Group = groupName(gid)
	return c, nil
}

// WriteAuthError refuses a request as slurmrestd refuses one it cannot
// authenticate: 401, the error's text alone, and the connection closed.
// The detail goes to the log only.
func WriteAuthError(w http.ResponseWriter, err error) {
	msg := jwtauth.ErrInvalid.Error()
	if errors.Is(err, jwtauth.ErrExpired) {
		msg = jwtauth.ErrExpired.Error()
	}
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusUnauthorized)
	io.WriteString(w, msg)
}

// NotFound answers an unknown path as slurmrestd does.
func NotFound(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusNotFound)
	io.WriteString(w, NotFoundText)
}

// errorHandler answers requests ogen could not decode the way slurmrestd
// does: unparsable JSON is 400 "Failure during parsing"; well-formed JSON of
// the wrong shape is 422 with an error envelope.
func errorHandler(ctx context.Context, w http.ResponseWriter, r *http.Request, err error) {
	var decodeErr *ogenerrors.DecodeRequestError
	var paramsErr *ogenerrors.DecodeParamsError
	switch {
	case errors.As(err, &decodeErr):
		body, _ := ctx.Value(bodyKey{}).([]byte)
		if len(bytes.TrimSpace(body)) == 0 || !json.Valid(body) {
			w.Header().Set("Content-Type", "text/plain")
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, "Failure during parsing")
			return
		}
		if kind := jsonKind(body); kind != "dictionary" {
			// A body that is JSON but not an object: slurmrestd 25.11
			// answers 500 with its parser's complaint.
			WriteEnvelopeError(w, http.StatusInternalServerError, 9209, "Data parser expected a dictionary or object",
				"Rejecting "+kind+" when dictionary expected", "#/")
			return
		}
		if isJobUpdate(r) {
			// slurmrestd 25.11 refuses a job update it cannot parse with
			// 500 and two errors: the field's, then the request's.
			writeEnvelopeErrors(w, http.StatusInternalServerError,
				envelopeError{9202, "Unable to convert Data type", decodeErr.Err.Error(), "#/"},
				envelopeError{9000, "Query empty or not RFC7320 compliant", "Rejecting request. Failure parsing job update request.", "_job_post_update"})
			return
		}
		// A submission with a field of the wrong type. slurmrestd 25.11
		// answers 200 with only a warning and no job_id, which clients
		// (sbatch's "Submitted batch job" path included) can mistake for
		// a success; Drover refuses it plainly with 422 and the error.
		writeShaped(w, r, decodeErr.ID, http.StatusUnprocessableEntity, envelopeError{9202, "Unable to convert Data type", decodeErr.Err.Error(), "#/"})
	case errors.As(err, &paramsErr):
		writeShaped(w, r, paramsErr.ID, http.StatusUnprocessableEntity, envelopeError{9000, "Query empty or not RFC7320 compliant", paramsErr.Err.Error(), "query"})
	case errors.Is(err, ogenerrors.ErrSecurityRequirementIsNotSatisfied):
		WriteAuthError(w, err)
	default:
		ogenerrors.DefaultErrorHandler(ctx, w, r, err)
	}
}

// jsonKind names the type of a valid JSON document's top-level value as
// slurmrestd's data parser does ("dictionary", "list", "string"...).
func jsonKind(body []byte) string {
	switch b := bytes.TrimSpace(body); b[0] {
	case '{':
		return "dictionary"
	case '[':
		return "list"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	default:
		if bytes.ContainsAny(b, ".eE") {
			return "floating point number"
		}
		return "integer"
	}
}

// isJobUpdate reports whether r is POST /slurm/v0.0.44/job/{job_id}.
func isJobUpdate(r *http.Request) bool {
	id, ok := strings.CutPrefix(r.URL.Path, "/slurm/v0.0.44/job/")
	return ok && r.Method == http.MethodPost && id != "" && id != "submit" && id != "allocate" && !strings.Contains(id, "/")
}

// envelopeError is one entry of errors[].
type envelopeError struct {
	code              int32
	msg, desc, source string
}

// WriteEnvelopeError writes a payload-less slurmrestd error body through
// the generated encoder.
func WriteEnvelopeError(w http.ResponseWriter, status int, code int32, msg, desc, source string) {
	writeEnvelopeErrors(w, status, envelopeError{code, msg, desc, source})
}

// writeEnvelopeErrors writes a payload-less body listing errs.
func writeEnvelopeErrors(w http.ResponseWriter, status int, errs ...envelopeError) {
	data, err := envelopeBody(errs)
	if err != nil {
		http.Error(w, "Unspecified error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data)
}

// envelopeBody encodes a payload-less envelope listing errs.
func envelopeBody(errs []envelopeError) ([]byte, error) {
	resp := api44.V0044OpenapiResp{Errors: api44.V0044OpenapiErrors{}, Warnings: api44.V0044OpenapiWarnings{}}
	for _, e := range errs {
		resp.Errors = append(resp.Errors, api44.V0044OpenapiError{
			ErrorNumber: api44.NewOptInt32(e.code),
			Error:       api44.NewOptString(e.msg),
			Description: api44.NewOptString(e.desc),
			Source:      api44.NewOptString(e.source),
		})
	}
	return resp.MarshalJSON()
}

// writeShaped writes an error envelope shaped to the failed operation's
// error answer in the request's API version (adapt.Spec.Project): an
// operation whose answer requires members beside errors ("added_users")
// gets them, empty.
func writeShaped(w http.ResponseWriter, r *http.Request, opID string, status int, errs ...envelopeError) {
	body, err := envelopeBody(errs)
	if err != nil {
		http.Error(w, "Unspecified error", http.StatusInternalServerError)
		return
	}
	if version := pathVersion(r.URL.Path); version != "" && opID != "" {
		if spec, err := adapt.LoadSpec(version); err == nil {
			if schema := spec.ResponseSchema(opID, "default"); schema != nil {
				d := json.NewDecoder(bytes.NewReader(body))
				d.UseNumber()
				var v any
				if d.Decode(&v) == nil {
					if b, err := json.Marshal(spec.Project(v, schema)); err == nil {
						body = b
					}
				}
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

// pathVersion is the API version a path names ("v0.0.42"), "" for none.
func pathVersion(p string) string {
	for _, prefix := range []string{"/slurm/", "/slurmdb/"} {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			v, _, _ := strings.Cut(rest, "/")
			if strings.HasPrefix(v, "v0.0.") {
				return v
			}
		}
	}
	return ""
}

func notAllowed(w http.ResponseWriter, r *http.Request, _ string) { NotFound(w, r) }

// acceptAny lets every request of any API version through the generated
// security check: authentication happened in front.ServeHTTP.
type acceptAny[Op, Bearer, Token, User any] struct{}

func (acceptAny[Op, Bearer, Token, User]) HandleBearerAuth(ctx context.Context, _ Op, _ Bearer) (context.Context, error) {
	return ctx, nil
}
func (acceptAny[Op, Bearer, Token, User]) HandleToken(ctx context.Context, _ Op, _ Token) (context.Context, error) {
	return ctx, nil
}
func (acceptAny[Op, Bearer, Token, User]) HandleUser(ctx context.Context, _ Op, _ User) (context.Context, error) {
	return ctx, nil
}

// Timeouts bound what a slow or idle client may hold: its request's
// headers, its whole request (bodies are at most MaxBody), the answer
// (a job list of 100,000 jobs is about 450 MiB), and an idle kept-alive
// connection. Tests shorten them.
var Timeouts = struct{ ReadHeader, Read, Write, Idle time.Duration }{
	ReadHeader: 10 * time.Second, Read: time.Minute, Write: 5 * time.Minute, Idle: 2 * time.Minute,
}

// Serve runs the handler on a TCP address (over TLS with tlsServer) and a
// unix socket (plain: the kernel says who connects) until ctx ends.
func Serve(ctx context.Context, h http.Handler, tcpAddr, socketPath string, tlsServer *tls.Config, logger *slog.Logger) (net.Addr, <-chan error, error) {
	tl, err := net.Listen("tcp", tcpAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w", tcpAddr, err)
	}
	ls := []net.Listener{tl}
	if tlsServer != nil {
		ls[0] = tls.NewListener(tl, tlsServer)
	}
	if socketPath != "" {
		ul, err := ListenUnix(socketPath, logger)
		if err != nil {
			tl.Close()
			return nil, nil, err
		}
		ls = append(ls, ul)
	}
	return tl.Addr(), ServeListeners(ctx, h, ls), nil
}

// ListenUnix listens on a unix socket everyone may connect to: the peer's
// credentials say who they are.
func ListenUnix(path string, logger *slog.Logger) (net.Listener, error) {
	_ = os.Remove(path)
	ul, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o777); err != nil {
		logger.Warn("chmod socket", "err", err)
	}
	return ul, nil
}

// ServeListeners serves h on each listener, with the API's timeouts and
// peer credentials on unix sockets, until ctx ends.
func ServeListeners(ctx context.Context, h http.Handler, ls []net.Listener) <-chan error {
	srv := &http.Server{Handler: h, ConnContext: ConnContext,
		ReadHeaderTimeout: Timeouts.ReadHeader, ReadTimeout: Timeouts.Read,
		WriteTimeout: Timeouts.Write, IdleTimeout: Timeouts.Idle}
	errc := make(chan error, len(ls))
	for _, l := range ls {
		go func() { errc <- srv.Serve(l) }()
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	return errc
}
