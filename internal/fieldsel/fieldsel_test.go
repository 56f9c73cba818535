package fieldsel

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := map[string]struct {
		in   string
		want string // String() of the set; "<nil>" for no selection
	}{
		"empty":          {"", "<nil>"},
		"blank":          {" , ,", "<nil>"},
		"one":            {"job_id", "job_id"},
		"several":        {"name, job_id,,name ", "job_id,name"},
		"at the limit":   {strings.Repeat("a,", MaxFields-1) + "a", "a"},
		"over the limit": {strings.Repeat("a,", MaxFields) + "a", "<nil>"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := Parse(tc.in)
			got := "<nil>"
			if s != nil {
				got = s.String()
			}
			if got != tc.want {
				t.Errorf("Parse(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	var none Set
	if !none.Has("anything") {
		t.Error("the nil Set does not have every member")
	}
	if (Set{"a": {}}).Has("b") {
		t.Error("a Set has a member it lacks")
	}
}

// TestTransport checks the round trip: the hint a client puts in its
// context reaches the server's header, and no context sends no header.
func TestTransport(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get(Header))
	}))
	defer srv.Close()
	c := &http.Client{Transport: Transport(nil)}
	for _, ctx := range []context.Context{
		With(context.Background(), []string{"name", "job_id"}),
		context.Background(),
		With(context.Background(), nil),
	} {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if req.Header.Get(Header) != "" {
			t.Error("the transport modified the caller's request")
		}
	}
	want := []string{"job_id,name", "", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headers %q, want %q", got, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "job_id", "a,b,,c", " x , y ", strings.Repeat(",", 600)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		s := Parse(h)
		if s == nil {
			return
		}
		if len(s) > MaxFields {
			t.Fatalf("%d names from one header", len(s))
		}
		// Parsing what String writes gives the same set back.
		again := Parse(s.String())
		for n := range s {
			if n == "" || n != strings.TrimSpace(n) || strings.Contains(n, ",") {
				t.Fatalf("name %q", n)
			}
			if !again.Has(n) {
				t.Fatalf("%q lost in a round trip through %q", n, s.String())
			}
		}
	})
}
