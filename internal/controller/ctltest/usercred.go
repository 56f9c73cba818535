package ctltest

import (
	"bytes"
	"io"
	"net/http"

	"github.com/droverhq/drover/internal/clusterkey"
	"github.com/droverhq/drover/internal/msgauth"
	"github.com/droverhq/drover/internal/usercred"
)

// hostSigner signs as a host's credential service holding Key would.
var hostSigner = &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(Key)), Issuer: msgauth.Host("testhost")}

// SignAs gives req the credential a host's credential service would sign
// for user (the user named by its X-SLURM-USER-NAME header when user is
// empty, root when neither), and takes the header away: the controller
// believes no name from the network. An unknown user panics: tests name
// real accounts.
func SignAs(req *http.Request, user string) {
	if user == "" {
		user = req.Header.Get("X-SLURM-USER-NAME")
	}
	if user == "" {
		user = "root"
	}
	req.Header.Del("X-SLURM-USER-NAME")
	id, err := usercred.LookupName(user)
	if err != nil {
		panic(err)
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	tok, err := hostSigner.SignUser(msgauth.UserID{Name: id.Name, UID: id.UID, GID: id.GID}, msgauth.Controller, req.Method, req.URL.RequestURI(), msgauth.BodyHash(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set(msgauth.Header, tok)
}

// UserTransport signs every request as SignAs does, for the user its
// X-SLURM-USER-NAME header names (root when none): test clients written
// for a name header authenticate as a login host's commands do.
type UserTransport struct {
	// Next sends the request (nil: http.DefaultTransport).
	Next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t UserTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		out.Body = io.NopCloser(bytes.NewReader(body))
	}
	SignAs(out, "")
	next := t.Next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(out)
}

// Client is an HTTP client whose requests are signed as UserTransport
// signs them.
func Client() *http.Client { return &http.Client{Transport: UserTransport{}} }

// SignNode gives req the token node's daemon would sign it with.
func SignNode(req *http.Request, node string) { SignDaemon(req, msgauth.Node(node)) }

// SignHost signs req as a login host's credential service (sack:HOST)
// signs its own requests, such as its fetch of the configuration.
func SignHost(req *http.Request, host string) { SignDaemon(req, msgauth.Host(host)) }

// SignDaemon signs req as a daemon issuer (slurmd:NODE, sack:HOST...)
// with the test cluster key.
func SignDaemon(req *http.Request, issuer string) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	s := &msgauth.Signer{Keys: clusterkey.NewHolder(clusterkey.FromSecret(Key)), Issuer: issuer}
	if err := s.SignRequest(req, msgauth.Controller, body); err != nil {
		panic(err)
	}
}
