// Package jobstream hands a job list answer (GET /slurm/v0.0.44/jobs/) to
// a command record by record as it arrives, instead of as one slice of
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

	"github.com/go-faster/jx"

	v0044 "github.com/droverhq/drover/openapi/v0044"
)

// Each receives one job record. The record is reused for the next one:
// keep what it needs, not the pointer.
type Each func(*v0044.V0044JobInfo) error

type key struct{}

// With returns ctx asking that the job list of the answer to a request
// made with it be handed to each.
func With(ctx context.Context, each Each) context.Context {
	return context.WithValue(ctx, key{}, each)
}

// Transport returns a RoundTripper that streams the job lists of the
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
	each, _ := r.Context().Value(key{}).(Each)
	resp, err := t.base.RoundTrip(r)
	if err != nil || each == nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	if ct, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || ct != "application/json" {
		return resp, nil
	}
	rest, err := Split(resp.Body, each)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("decode job list: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(rest))
	resp.ContentLength = int64(len(rest))
	resp.Header.Set("Content-Length", strconv.Itoa(len(rest)))
	return resp, nil
}

// readBuffer is how much of the answer is read at a time.
const readBuffer = 64 << 10

// Split reads a job list answer from r: each record of its "jobs" member
// goes to each, checked as the generated client checks a whole answer;
// the other members come back as an answer whose job list is empty.
func Split(r io.Reader, each Each) ([]byte, error) {
	d := jx.Decode(r, readBuffer)
	var rest jx.Writer
	rest.ObjStart()
	var rec v0044.V0044JobInfo
	sawJobs, members := false, 0
	field := func(name string) {
		if members > 0 {
			rest.Comma()
		}
		members++
		rest.FieldStart(name)
	}
	err := d.Obj(func(d *jx.Decoder, name string) error {
		if name != "jobs" {
			raw, err := d.Raw()
			if err != nil {
				return fmt.Errorf("member %q: %w", name, err)
			}
			field(name)
			rest.Raw(raw)
			return nil
		}
		if sawJobs {
			return errors.New(`member "jobs" twice`)
		}
		sawJobs = true
		field(name)
		rest.ArrStart()
		rest.ArrEnd()
		n := 0
		return d.Arr(func(d *jx.Decoder) error {
			rec = v0044.V0044JobInfo{}
			if err := rec.Decode(d); err != nil {
				return fmt.Errorf("job %d: %w", n, err)
			}
			if err := rec.Validate(); err != nil {
				return fmt.Errorf("job %d: %w", n, err)
			}
			n++
			return each(&rec)
		})
	})
	if err != nil {
		return nil, err
	}
	if err := d.Skip(); err != io.EOF {
		return nil, errors.New("unexpected trailing data")
	}
	rest.ObjEnd()
	return rest.Buf, nil
}
