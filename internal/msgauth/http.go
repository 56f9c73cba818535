package msgauth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

// VerifyRequest checks the token r carries: its body (at most maxBody
// bytes) is read for the check and put back for the handler.
func (v *Verifier) VerifyRequest(r *http.Request, maxBody int64) (*Claims, error) {
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
		if err != nil {
			return nil, fmt.Errorf("%w: reading the body: %v", ErrInvalid, err)
		}
		if int64(len(b)) > maxBody {
			return nil, fmt.Errorf("%w: body over %d bytes", ErrInvalid, maxBody)
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	return v.Verify(r.Header.Get(Header), r.Method, r.URL.RequestURI(), body)
}

// SignRequest sets r's token for aud; body is what r sends.
func (s *Signer) SignRequest(r *http.Request, aud string, body []byte) error {
	tok, err := s.Sign(aud, r.Method, r.URL.RequestURI(), body)
	if err != nil {
		return err
	}
	r.Header.Set(Header, tok)
	return nil
}

type claimsKey struct{}

// WithClaims returns ctx carrying the verified claims of its request.
func WithClaims(ctx context.Context, c *Claims) context.Context {
	return context.WithValue(ctx, claimsKey{}, c)
}

// ClaimsFrom returns the verified claims ctx carries (nil: none).
func ClaimsFrom(ctx context.Context) *Claims {
	c, _ := ctx.Value(claimsKey{}).(*Claims)
	return c
}
