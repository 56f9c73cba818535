package sack

import (
	"bytes"
	"fmt"
	"io"
	"net/http"

	"github.com/droverhq/drover/internal/msgauth"
)

// Transport sends each request with a credential of this host's service
// for it (msgauth.Header).
type Transport struct {
	Next   http.RoundTripper
	Client *Client
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("read request body: %w", err)
		}
		body = b
	}
	cred, err := t.Client.Cred(req.Context(), req.Method, req.URL.RequestURI(), body)
	if err != nil {
		return nil, err
	}
	out := req.Clone(req.Context())
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	out.Header.Set(msgauth.Header, cred)
	return t.Next.RoundTrip(out)
}
