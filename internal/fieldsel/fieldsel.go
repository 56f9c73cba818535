// Package fieldsel carries Drover's field-selection hint for list answers:
// the X-Drover-Fields request header names the top-level members of each
// record a client will read, and the controller may leave the others out.
//
// The answer keeps the slurmrestd wire shape (every member of a v0.0.44
// job record is optional), so a client that sends the hint still works
// against a real slurmrestd, which ignores the header and sends whole
// records. squeue sends it because a whole v0.0.44 job record is about
// 4.7 KB of JSON and the columns squeue prints need a tenth of it.
package fieldsel

import (
	"context"
	"net/http"
	"slices"
	"strings"
)

// Header is the request header that carries the hint: member names,
// comma-separated.
const Header = "X-Drover-Fields"

// MaxFields bounds how many names one header may carry; a longer list is
// ignored (the whole record is sent), so a hostile header cannot make the
// controller build a large set.
const MaxFields = 512

// Set is a set of member names. The nil Set means "every member".
type Set map[string]struct{}

// Has reports whether the member is wanted: always, for the nil Set.
func (s Set) Has(name string) bool {
	if s == nil {
		return true
	}
	_, ok := s[name]
	return ok
}

// Parse reads a header value. Empty names are skipped; an empty or
// oversized list is the nil Set (no selection).
func Parse(h string) Set {
	h = strings.TrimSpace(h)
	if h == "" || strings.Count(h, ",") >= MaxFields {
		return nil
	}
	s := Set{}
	for _, name := range strings.Split(h, ",") {
		if name = strings.TrimSpace(name); name != "" {
			s[name] = struct{}{}
		}
	}
	if len(s) == 0 {
		return nil
	}
	return s
}

type key struct{}

// With returns ctx carrying the members wanted. A nil or empty list means
// every member.
func With(ctx context.Context, names []string) context.Context {
	if len(names) == 0 {
		return ctx
	}
	s := make(Set, len(names))
	for _, n := range names {
		s[n] = struct{}{}
	}
	return context.WithValue(ctx, key{}, s)
}

// WithSet returns ctx carrying s.
func WithSet(ctx context.Context, s Set) context.Context {
	if s == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, s)
}

// From returns the members wanted in ctx, the nil Set when there is no
// selection.
func From(ctx context.Context) Set {
	s, _ := ctx.Value(key{}).(Set)
	return s
}

// String writes s as a header value, names sorted so that equal sets make
// equal headers.
func (s Set) String() string {
	names := make([]string, 0, len(s))
	for n := range s {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// Transport returns a RoundTripper that sends the selection of each
// request's context as the header (base nil means http.DefaultTransport).
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper{base}
}

type roundTripper struct{ base http.RoundTripper }

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	s := From(r.Context())
	if s == nil {
		return t.base.RoundTrip(r)
	}
	// A RoundTripper must not modify the request it was given.
	r = r.Clone(r.Context())
	r.Header.Set(Header, s.String())
	return t.base.RoundTrip(r)
}
