// Package jobstream hands a list answer (GET /slurm/v0.0.44/jobs/ and
// /nodes/, and the accounting database's /slurmdb/v0.0.44/jobs/) to a
// command record by record as it arrives, instead of as one slice of
// whole records.
//
// The generated client decodes the list into a []V0044JobInfo grown by
// append, and each V0044JobInfo is a 3.5 KB struct (every optional member
// inline): 50,000 jobs are hundreds of megabytes of fresh memory before
// squeue prints a line. Here the request is still made, authenticated and
// answered through the generated client; the transport under it decodes
// the answer's "jobs" member with the generated per-record decoder into
// one reused record, calls the command for each, and passes the rest of
// the answer (meta, errors, warnings, last_update...) on to the generated
// client with an empty job list. Answers other than a 200 with JSON pass
// through untouched, so errors read as before.
package jobstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-faster/jx"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Each receives one job record. The record is reused for the next one:
// keep what it needs, not the pointer.
type Each func(*v0044.V0044JobInfo) error

type key struct{}

// splitter reads a list answer, handing its records on, and returns the
// rest of it.
type splitter func(io.Reader) ([]byte, error)

// With returns ctx asking that the job list of the answer to a request
// made with it be handed to each.
func With(ctx context.Context, each Each) context.Context {
	return context.WithValue(ctx, key{}, splitter(func(r io.Reader) ([]byte, error) { return Split(r, each) }))
}

// EachNode receives one node record, reused for the next one as Each's.
type EachNode func(*v0044.V0044Node) error

// WithNodes returns ctx asking that the node list of the answer to a
// request made with it (GET /nodes/) be handed to each.
func WithNodes(ctx context.Context, each EachNode) context.Context {
	return context.WithValue(ctx, key{}, splitter(func(r io.Reader) ([]byte, error) {
		return splitList(r, "nodes", "node", each)
	}))
}

// EachAcct receives one run of a job from the accounting job list, which
// holds every run a query selects with all its steps and their usage
// lists: hundreds of thousands of runs on a busy cluster. The record is
// reused for the next one, as Each's.
type EachAcct func(*v0044.V0044Job) error

// WithAcct returns ctx asking that the accounting job list of the answer
// to a request made with it (GET /slurmdb/jobs/, sacct's) be handed to
// each.
func WithAcct(ctx context.Context, each EachAcct) context.Context {
	return context.WithValue(ctx, key{}, splitter(func(r io.Reader) ([]byte, error) { return SplitAcct(r, each) }))
}

// SplitAcct is Split for an accounting job list answer: each record of
// its "jobs" member goes to each, and the other members come back as an
// answer whose job list is empty.
func SplitAcct(r io.Reader, each EachAcct) ([]byte, error) {
	return splitList(r, "jobs", "job", each)
}

// Transport returns a RoundTripper that streams the lists of the
// requests whose context asks for it (base nil means
// http.DefaultTransport).
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return roundTripper{base}
}

type roundTripper struct{ base http.RoundTripper }

func (t roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	split, _ := r.Context().Value(key{}).(splitter)
	resp, err := t.base.RoundTrip(r)
	if err != nil || split == nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	if ct, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		return resp, nil
	}
	rest, err := split(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("decode %s list: %w", listName(r.URL.Path), err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(rest))
	resp.ContentLength = int64(len(rest))
	resp.Header.Set("Content-Length", strconv.Itoa(len(rest)))
	return resp, nil
}

// listName is what a list request asks for, for errors ("job", "node").
func listName(path string) string {
	if strings.Contains(path, "/nodes") {
		return "node"
	}
	return "job"
}

// readBuffer is how much of the answer is read at a time.
const readBuffer = 64 << 10

// Split reads a job list answer from r: each record of its "jobs" member
// goes to each, checked as the generated client checks a whole answer;
// the other members come back as an answer whose job list is empty.
func Split(r io.Reader, each Each) ([]byte, error) {
	return splitList(r, "jobs", "job", each)
}

// record is a generated list element, decoded and checked as the
// generated client does a whole answer.
type record[T any] interface {
	*T
	Decode(*jx.Decoder) error
	Validate() error
}

// splitList reads a list answer from r: each record of its member list
// goes to each, into one reused record; the other members come back as an
// answer whose list is empty. noun names a record in errors. Each record
// is decoded from its own bytes (scanner), as the generated client
// decodes a whole answer.
func splitList[T any, P record[T]](r io.Reader, list, noun string, each func(P) error) ([]byte, error) {
	s := newScanner(r)
	var rest jx.Writer
	rest.ObjStart()
	var rec T
	var d jx.Decoder
	sawList, members := false, 0
	records := func() error {
		if err := s.expect('['); err != nil {
			return err
		}
		if c, err := s.next(); err == nil && c == ']' {
			s.pos++
			return nil
		}
		for n := 0; ; n++ {
			raw, err := s.value()
			if err != nil {
				return fmt.Errorf("%s %d: %w", noun, n, err)
			}
			d.ResetBytes(raw)
			var zero T
			rec = zero
			p := P(&rec)
			if err := p.Decode(&d); err != nil {
				return fmt.Errorf("%s %d: %w", noun, n, err)
			}
			if err := d.Skip(); err != io.EOF {
				return fmt.Errorf("%s %d: unexpected trailing data", noun, n)
			}
			if err := p.Validate(); err != nil {
				return fmt.Errorf("%s %d: %w", noun, n, err)
			}
			if err := each(p); err != nil {
				return err
			}
			if err := s.expect(','); err != nil {
				if c, _ := s.next(); c == ']' {
					s.pos++
					return nil
				}
				return fmt.Errorf(`after %s %d: "," or "]" expected: %w`, noun, n, err)
			}
		}
	}
	member := func() error {
		raw, err := s.value()
		if err != nil {
			return fmt.Errorf("member name: %w", err)
		}
		d.ResetBytes(raw)
		name, err := d.Str()
		if err != nil {
			return fmt.Errorf("member name: %w", err)
		}
		if err := s.expect(':'); err != nil {
			return fmt.Errorf("member %q: %w", name, err)
		}
		if members > 0 {
			rest.Comma()
		}
		members++
		rest.FieldStart(name)
		if name != list {
			raw, err := s.value()
			if err != nil {
				return fmt.Errorf("member %q: %w", name, err)
			}
			rest.Raw(raw)
			return nil
		}
		if sawList {
			return fmt.Errorf("member %q twice", list)
		}
		sawList = true
		rest.ArrStart()
		rest.ArrEnd()
		return records()
	}
	if err := s.expect('{'); err != nil {
		return nil, err
	}
	if c, err := s.next(); err != nil || c != '}' {
		for {
			if err := member(); err != nil {
				return nil, err
			}
			if err := s.expect(','); err != nil {
				if c, _ := s.next(); c == '}' {
					break
				}
				return nil, fmt.Errorf(`"," or "}" expected: %w`, err)
			}
		}
	}
	s.pos++ // the closing brace
	if _, err := s.next(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected trailing data")
		}
		return nil, err
	}
	rest.ObjEnd()
	return rest.Buf, nil
}
